// Package web serves VERA's browser client: one HTML page with its CSS and
// JavaScript, embedded with go:embed (no build step), speaking the event
// protocol over GET /v1/chat and, for voice, WebRTC to POST
// /v1/voice/sessions.
//
// The page offers text chat, a transcript, captions, per-turn latency,
// safety cards announced once to screen readers, approve/decline buttons
// for proposed actions and a HUD emulator that draws the display ops of a
// safety card exactly as the chosen glasses profile receives them, paged
// with arrow keys, Enter and Escape and acknowledged page by page.
//
// Handler serves "/" (the page) and "/web/..." (its assets) with a strict
// Content-Security-Policy; it has no state and starts no goroutines.
package web
