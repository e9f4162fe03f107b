// Package session owns one conversation, independent of its transport: the
// websocket (gateway/chat) and the WebRTC data channel (gateway/rtc) both
// attach to a Session and carry the same events.
//
// A Session numbers its events (seq increases by one, starting at 1), keeps
// a bounded replay log so a client that reconnects with its resume token and
// last seq receives every later event, runs one turn at a time (new input
// cancels or queues behind the reply in progress, by Config.OnBusy), and
// tracks safety-card acknowledgements per surface and page on an injected
// clock.Clock (gateway/clock; tests use clocktest).
//
// Safety invariants kept here (BRIEF §5):
//   - The local detector (SafetyLayer.Assess) runs on every user text before
//     the converse call, even when the engine answers.
//   - The merged assessment never ranks below either input and never drops a
//     resource, whatever the SafetyLayer returns (safety.Guard).
//   - No reply text leaves before its safety card: reply deltas are held until
//     the engine's assessment is known — when Converse returns, or earlier if
//     the Converser calls ConverseRequest.SafetyFinal — and, with a
//     Classifier (the router's safety slot), until its verdict or
//     Deps.ClassifyBudget from the turn's start, whichever is first; the
//     card, when display is required, is emitted first. A classifier
//     verdict that comes later is a late detection (classify.go): its card
//     goes out at once and a crisis cuts the rest of the reply short
//     (reply.interrupted, reason "safety") and is spoken.
//   - A crisis stays in force for the session (inforce.go): later turns are
//     judged at least at its level, the card is not sent again unless the
//     level rises or a resource is new, and only a clear statement of
//     being safe, after the person has seen the resources, lowers it — to
//     elevated, never below.
//   - A card whose first page is not acknowledged within the profile's ack
//     timeout is re-sent and a notice names the surface that did not
//     confirm; it is never withdrawn by the gateway.
//   - What a voice transport speaks of a card (SpokenSafety) is decided
//     here, once per card and level, and rides in the replay log with the
//     card event: spoken with the card on devices that must speak safety,
//     on the first re-send of an unacknowledged card, and for a late
//     crisis; never repeated unless the level rises, never lost or doubled
//     by a resume.
//
// Actions (VERA proposes; the person approves), kept here so chat and voice
// behave alike:
//   - Every proposed action expires (Config.Consent.Expiry at most) and is
//     offered one at a time: its question is the last sentence of a reply
//     (a voice session speaks it) and its prompt card is laid out per
//     surface with focus on Decline.
//   - Only an explicit act approves: action.approve, select on the
//     focused Approve control, or an answer — the person's next transcript
//     (SubmitTurn) or typed input.text — that consent.Answer reads as an
//     answer and consent.Classify as a clear yes. Silence, unclear answers,
//     expiry and hang-up never approve; text the person did not give
//     (Submit: an inbox message) is never an answer.
//   - The local detector assesses every utterance before it can count as
//     an answer; one it flags (elevated or crisis) is never an answer: its
//     card goes out first, it is a normal turn, and the offer falls silent.
//   - A safety card takes a surface and its keys before any prompt; a
//     prompt waits behind it and never delays it. A turn with a safety card
//     carries no offer.
//
// Replies the session writes itself (an offer asked again, an answer
// acknowledged, an action's result) run on the turn worker, in order with
// the turns, as reply.delta/caption/reply.done with generated: true.
//
// Titles follow the extension API's setTitle: SetTitle names a session
// only if it never had a name; the person's Rename (or clear) always wins.
//
// Outbound policy: events go to the replay log, never to a blocking queue.
// The attached Stream reads the log at its own pace; when the log evicts an
// event the stream has not yet read (the consumer is slower than
// Config.ReplayEvents/ReplayBytes allow), the stream fails with
// ErrSlowConsumer and its transport closes. Producers never block, so one
// slow client cannot stall another session or this session's turn.
//
// Parts: a Session is a few parts with one job each, each in its own file
// with its own lock, taken only in this order:
//
//	turn.mu (one turn's gate, turn.go)
//	  → cards.gate (deciding on and sending a card, card.go)
//	  → offers (proposed actions and the offer, actions.go)
//	  → cards (safety cards and their acks, card.go)
//	  → timers (clock callbacks, timers.go)
//	  → events (the numbered event log and the attached Stream, events.go)
//
// and turns (the turn runner, turn.go) and titles (title.go), which take
// only events' lock after their own. The negotiated device (device.go) is
// an immutable snapshot read without a lock. events is a leaf: a part
// emits while holding its own lock, so an event and the state it reports
// change together.
//
// Goroutines: one turn worker per session, and per classified turn one
// late-detection watcher (until its classification is done), all joined
// by Close; clock timers are stopped by Close and their callbacks joined.
package session
