// Package session owns one conversation, independent of its transport: the
// websocket (gateway/chat) and the WebRTC data channel (gateway/rtc) both
// attach to a Session and carry the same events.
//
// A Session numbers its events (seq increases by one, starting at 1), keeps
// a bounded replay log so a client that reconnects with its resume token and
// last seq receives every later event, runs one turn at a time (new input
// cancels or queues behind the reply in progress, by Config.OnBusy), and
// tracks safety-card acknowledgements per surface and page on an injected
// clock.
//
// Safety invariants kept here (BRIEF §5):
//   - The local detector (SafetyLayer.Assess) runs on every user text before
//     the converse call, even when the engine answers.
//   - The merged assessment never ranks below either input and never drops a
//     resource, whatever the SafetyLayer returns (guardMerge).
//   - No reply text leaves before its safety card: reply deltas are held until
//     the engine's assessment is known — when Converse returns, or earlier if
//     the Converser calls ConverseRequest.SafetyFinal — and the card, when
//     display is required, is emitted first.
//   - A card whose first page is not acknowledged within the profile's ack
//     timeout is re-sent and a notice goes to the phone surface; it is never
//     withdrawn by the gateway.
//
// Outbound policy: events go to the replay log, never to a blocking queue.
// The attached Stream reads the log at its own pace; when the log evicts an
// event the stream has not yet read (the consumer is slower than
// Config.ReplayEvents/ReplayBytes allow), the stream fails with
// ErrSlowConsumer and its transport closes. Producers never block, so one
// slow client cannot stall another session or this session's turn.
//
// Goroutines: one turn worker per session, joined by Close; clock timers
// are stopped by Close and their callbacks joined.
package session
