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
// NewSpotPool makes a pool of key-phrase spotters instead: decoders whose
// only search (SearchSpot) is pocketsphinx's keyword search for the phrases
// of crisis.kws (or SpotConfig's), behind an automatic gain control so the
// microphone's level does not matter. Each phrase counts as heard at or above
// its own score, tuned on training voices and checked on held-out ones
// (BENCHMARKS.md "Crisis key-phrase spotting"). Key-phrase lists and model
// files are written to and read from temporary files only because
// pocketsphinx reads them from files.
//
// The cgo files are built unless the noembedded build tag is set; with it,
// NewPool returns ErrUnavailable.
package sphinx
