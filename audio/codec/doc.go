// Package codec wraps libopus (github.com/hraban/opus) for one media stream.
//
// A Decoder decodes Opus packets straight to 16 kHz (or 48 kHz when asked)
// mono int16, conceals a lost packet with PLC and recovers it from the next
// packet's in-band FEC. An Encoder encodes 48 kHz (or 16 kHz) mono 20 ms
// frames with the VOIP application.
//
// Invariants: one Decoder/Encoder per stream, used from one goroutine (libopus
// state is not goroutine-safe); no state is shared between streams. Every
// concealment call is sized to exactly one frame — hraban/opus sizes PLC/FEC
// output by cap(pcm), so this package always passes pcm[:n:n]. Callers own
// the pcm and packet slices they pass; nothing is retained.
// Decoding is allocation-free; bad packets return ErrCorrupt, never panic.
package codec
