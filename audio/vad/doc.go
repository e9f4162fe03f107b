// Package vad is the gateway's pure-Go voice activity detector.
//
// It takes 16 kHz mono int16 frames of exactly 10 ms (160 samples) and returns
// a speech probability per frame. Per frame it computes (FeatureNames):
//
//   - band SNRs: log energies of 15 bands (125 Hz–8 kHz, 256-point real FFT on
//     a 16 ms Hann window, 62.5 Hz bins) against a per-band noise floor kept
//     by minimum statistics (lowest smoothed energy in the last 2 s, in 500 ms
//     blocks), averaged per group 250–1000, 1000–2500, 2500–4000, 4000–8000 Hz
//     and clipped to [0, 30] dB per band;
//   - harmonicity: the peak normalised autocorrelation of the signal
//     low-passed (24-tap FIR, 800 Hz), decimated to 2 kHz and high-passed at
//     200 Hz, over pitch lags 2.5–12.5 ms (80–400 Hz) on a 24 ms window, and
//     voiced_snr = harmonicity × low-band SNR;
//   - spectral flatness over 250–4000 Hz and a modulation measure (smoothed
//     frame-to-frame change of the 250–4000 Hz energy);
//   - level, the frame's 250–4000 Hz energy between the floor (0) and the
//     recent speech peak (1), and long_snr, peak minus floor: how noisy the
//     stream is.
//
// Two logistic weight sets, one fitted for clean and one for noisy streams,
// are blended by long_snr (10 dB → noisy only, 30 dB → clean only), so the
// detector is strict in quiet rooms and liberal in noise. The logit is then
// averaged over SmoothFrames (120 ms by default: the evidence of a syllable
// carries across the short gaps inside words and phrases) and the output
// decays over at most ReleaseFrames. Features.Raw keeps the unsmoothed
// probability, which the turn detector uses to place the true end of speech;
// it is 0 where the band SNRs have fallen to the floor (RawFloorDb), so the
// modulation and pitch windows' memory does not push the end 30–50 ms late.
// Only relative features are used: the input level does not matter above a
// digital-silence guard (SilenceDbfs). Weights were fitted with
// "vera-eval vad -fit" and checked leave-one-clip-out; see BENCHMARKS.md ("Audio core").
//
// A VAD is per stream, not goroutine-safe, and allocation-free after New; it
// keeps no reference to the caller's frame. Time is counted only in frames.
package vad
