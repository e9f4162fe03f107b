// Package wavio reads and writes the audio files the gateway uses for
// fixtures and recordings: 16-bit PCM WAV (github.com/go-audio/wav) and Ogg
// Opus (pion's oggreader/oggwriter).
//
// Readers check the format against what the caller expects and return an
// ErrFormat error naming both the expected and the found rate, channel count
// or bit depth. Returned slices are owned by the caller. These helpers are for
// files, not the per-frame hot path; they allocate.
package wavio
