// Package voice is the live-voice session: it joins a WebRTC connection
// (gateway/rtc) to a conversation session (gateway/session) through the
// audio pipeline and the model router.
//
// Inbound, per connection: RTP → audio/pipeline (jitter buffer → Opus
// decode at 16 kHz → VAD per 10 ms → echo guard → turn detector → prefix
// ring, on one sample clock) → streaming listen during speech → at end of
// turn the transcript starts a session turn. The listen session is opened and fed off the media loop, so a
// recogniser that is slow to start or to decode never stalls the jitter
// buffer. Outbound: the session's events go to the "events" data channel in
// order; reply text is spoken sentence by sentence through the speak slot and
// played by the connection's paced sender.
//
// Safety invariants kept here:
//   - Every safety card is on the wire before the first reply audio packet:
//     the session emits a turn's card before its first reply.delta, the pump
//     forwards events in order, and speech starts only from reply.delta.
//   - Spoken safety resources are what the session decides
//     (session.SpokenSafety, dispatched with the card event it belongs to,
//     so a resumed connection speaks them exactly once): a lead-in and
//     each resource's name and number, once per card and level. On a
//     device that must speak safety (voice-only, no render confirmation)
//     they are firm and, while the card's turn is replying, spoken in that
//     turn before its reply; elsewhere (an unacknowledged card, a late
//     crisis) they are a turn of their own the person can talk over — the
//     card stays on every screen. Replies queue behind them for no longer
//     than their own length.
//   - Firm safety resources are "protected" speech:
//     barge-in does not pause or cut them, a cancelled turn does not drop
//     them, and they are not reply text (reply.interrupted's heard leaves
//     them out).
//   - A late crisis (a classifier verdict after the reply started) stops
//     the reply's playout at once and drops the rest of it; when its text
//     was complete the session is told what was heard (reply.interrupted,
//     reason safety).
//   - The spoken AI disclosure is short and opens every session; the person
//     may talk over it. Cut short, it counts as given where the device
//     shows the disclosure, and is spoken again at the next pause where it
//     does not (disclosure.go).
//
// Barge-in: user speech that overlaps playout for Turn.BargeInMs pauses the
// playout at once; words (a partial or final transcript) confirm the
// interruption: the reply is cancelled and the history keeps only what was
// heard, computed from the playout position; no words within ResumeAfterMs
// of speech the recogniser has heard (a recogniser behind the media has not
// heard the words yet), or a turn that ends without words, resume playout
// (a false interruption). With EchoGuard the gateway's own
// outbound audio, which it knows exactly, tells its echo from the person
// speaking: input whose 10 ms energy envelope follows the played envelope at
// one delay, at a steady distance below it, is echo; input standing well
// above the expected echo is someone talking over it.
//
// Fixed phrases: the spoken AI disclosure is synthesised and Opus-encoded
// once per (text, encoder settings) by the factory's phrase cache (config
// phrase_cache entries, least recently used evicted) and its 20 ms packets
// are shared read-only by every session (played with Sender.PlayOpus; the
// echo guard gets the phrase's PCM as its reference). Concurrent first
// requests synthesise once. The disclosure is still sent as an event and
// spoken at every session start: when the cache cannot supply it, the
// session speaks it the ordinary way. Metrics: playout_frames_total counts
// encoded against cached frames.
//
// Resume: a hello with a resume token, before the connection's first turn,
// moves the connection onto that conversation and streams every event after
// the hello's last_seq. A connection that vanishes (DTLS close, ICE failed)
// leaves its conversation waiting for a resume; hang-up, idle timeout and
// shutdown end it.
//
// Record mode (Config.RecordDir, off by default; it stores people's
// voices): each session writes its inbound and outbound Opus packets as Ogg
// Opus and every event both ways as JSON lines (record.go). The hooks never
// block the media path: a bounded queue feeds one writer goroutine, and
// what does not fit is dropped and counted.
//
// Goroutines per session: the media loop (one 20 ms ticker), the event pump,
// the speaker, per turn a feeder and a final-transcript waiter, and in
// record mode the record writer, all owned by the session and joined by
// Closed.
//
// Files by job: factory.go (the Factory: one voice session per
// connection), session.go (one connection:
// lifecycle, resume, the listening path and its turns), events.go (the
// event pump and the session.Subscriber that queues speech), speaker.go
// (synthesis and playout), bargein.go (pause, resume, interrupt, and the
// cut for a late crisis), disclosure.go (the spoken AI disclosure cut
// short), notice.go (the phrase cache);
// inbound.go, echo.go and feeder.go join the audio/pipeline listening
// path, the echo guard's tap and the recogniser.
package voice
