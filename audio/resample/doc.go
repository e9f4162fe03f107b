// Package resample converts mono int16 PCM between sample rates, in a
// stream: a polyphase windowed-sinc filter (Blackman window, 16 taps each
// side at the output cutoff), low-passed at the lower Nyquist so
// downsampling does not alias. Used where audio enters at another rate
// than the one asked (espeak-ng's 22.05 kHz, a provider's 24 kHz PCM).
//
// A Resampler is one stream's state, not goroutine-safe; it keeps no
// reference to the caller's slices. Write appends to the caller's dst
// (allocating only when dst is short) and keeps at most one filter length
// of input between calls. This is not the inbound hot path: live audio is
// decoded by Opus straight to audio.SampleRate.
package resample
