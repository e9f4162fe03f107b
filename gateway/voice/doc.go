// Package voice is the live-voice session: it joins a WebRTC connection
// (gateway/rtc) to a conversation session (gateway/session) through the
// audio pipeline and the model router.
//
// Inbound, per connection: RTP → jitter buffer → Opus decode at 16 kHz →
// VAD per 10 ms → turn detector (on sample time) → streaming listen during
// speech → at end of turn the transcript starts a session turn. Outbound: the
// session's events go to the "events" data channel in order; reply text is
// spoken sentence by sentence through the speak slot and played by the
// connection's paced sender. Because the session emits a turn's safety card
// before its first reply.delta, and speech starts only from reply.delta,
// every safety card is on the wire before the first reply audio packet.
//
// Barge-in: user speech that overlaps playout for Turn.BargeInMs pauses the
// playout at once; words confirm the interruption (the reply is cancelled and
// the history keeps only what was heard, from the playout position); no words
// within ResumeAfterMs resume playout (a false interruption). With EchoGuard
// the gateway's own outbound audio, which it knows exactly, is used to tell
// its echo from the person speaking.
//
// Goroutines per session: the media loop (one 20 ms ticker), the event pump
// and the speaker, all owned by the session and joined by Closed/Close.
package voice
