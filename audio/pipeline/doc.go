// Package pipeline is the one inbound audio path of a stream, from RTP
// payloads to turn events, in the order the audio goes through it:
//
//	Push ─ jitter buffer (reorder, loss, FEC or PLC, delay)
//	Pull ─ decode (Opus straight to audio.SampleRate, one 20 ms frame)
//	Analyse ─ VAD per 10 ms → echo guard → turn detector → prefix ring
//
// The gateway's voice sessions, the offline evaluations (cmd/vera-eval,
// audio/turn's end-of-turn measurements) and the benchmarks all run this
// same code; a file already at audio.SampleRate enters at Analyse.
//
// One sample clock: every time here is samples at audio.SampleRate. The
// turn detector counts the samples it has analysed (Now; its events are on
// that count). The echo guard lines up what was played with what is heard
// on the stream's media clock, also in samples: the caller gives each
// frame's position on it to Analyse and each played frame's to Reference
// (a live session's media loop drops frames after a stall, so the two
// counts can differ). The network side alone is on Opus's 48 kHz clock:
// RTP timestamps and the arrival ticks given to Push.
//
// Ownership and goroutines: Push may run on the network goroutine while
// Pull runs on the media clock (they share a lock); Reference may run on
// the sender's goroutine (the echo guard has its own lock); Analyse, Pull's
// frame, Prefix, Now and EndOfStream belong to one goroutine, the media
// loop. The frame Pull returns, the frames Prefix returns and the events
// passed to emit are the Inbound's own buffers, valid until the next Pull
// or Analyse (copy to keep them). After New nothing allocates per frame
// except Prefix's slice headers.
package pipeline
