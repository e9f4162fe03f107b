// Package wavio reads and writes the audio files and streams the gateway
// uses: 16-bit PCM WAV (github.com/go-audio/wav) for fixtures, and Ogg Opus
// (RFC 7845) for recordings, fixtures and providers' speech, with the one
// Opus TOC parser (OpusSamples) every packet duration comes from.
//
// Ogg is read by OggReader, packet by packet as the bytes arrive (any page
// layout, packets across pages, other logical streams skipped), and written
// by OggWriter, one packet per page with the granule position of its end.
// pion's pkg/media/oggreader returns whole pages rather than packets and its
// oggwriter fixes the pre-skip and sets end-of-stream by seeking back, so
// neither fits a provider's multi-packet pages or a buffered recording.
//
// Readers check the format against what the caller expects and return an
// ErrFormat error naming both the expected and the found rate, channel count
// or bit depth. Returned slices are owned by the caller. These helpers are for
// files, not the per-frame hot path; they allocate.
package wavio
