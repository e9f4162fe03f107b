// Package vad is the gateway's pure-Go voice activity detector.
//
// It takes 16 kHz mono int16 frames of exactly 10 ms (160 samples) and returns
// a speech probability per frame. Per frame it computes, on a 16 ms Hann
// window (256-point real FFT, 62.5 Hz bins):
//
//   - band SNR: per-band log energies (15 bands, 125 Hz–8 kHz) against an
//     adaptive noise floor that falls fast and rises slowly (slower still
//     while the frame looks like speech); the mean SNR over 250–4000 Hz,
//     each band clipped to [0, 30] dB;
//   - harmonicity: the peak normalised autocorrelation of the signal
//     low-passed (24-tap FIR, 800 Hz), decimated to 2 kHz and high-passed
//     at 150 Hz, over pitch lags 2.5–12.5 ms (80–400 Hz), 20 ms window;
//   - spectral flatness over 250–4000 Hz (geometric/arithmetic mean, dB);
//   - modulation: a slow average of the frame-to-frame change of the speech
//     band energy (dB), high for syllabic speech, low for steady noise.
//
// They are combined by a logistic function whose weights (Weights) were fitted
// on labelled real speech mixed with street, café and wind noise (see
// docs/bench-audio.md), then smoothed by a short release so weak word endings
// are not dropped between syllables. Only relative features are used: the
// absolute level of the input does not matter above a digital-silence guard.
//
// A VAD is per stream, not goroutine-safe, and allocation-free after New; it
// keeps no reference to the caller's frame. Time is counted only in frames.
package vad
