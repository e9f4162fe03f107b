// Package sphinx wraps libpocketsphinx (Debian's 0.8+5prealpha, via cgo) as
// a bounded pool of streaming speech decoders for 16 kHz mono PCM.
//
// Invariants: a decoder is loaded once and reused across utterances (loading
// the acoustic model and language model costs hundreds of milliseconds and
// tens of megabytes); a ps_decoder_t is not thread-safe, so a Decoder is used
// by one goroutine at a time, handed out by Pool.Acquire and given back with
// Pool.Release; the pool never holds more than Config.Pool decoders. Audio is
// fed as it arrives (Decoder.Process), so the final hypothesis is ready right
// after the end of the turn.
//
// The cgo files are built unless the noembedded build tag is set; with it,
// NewPool returns ErrUnavailable.
package sphinx
