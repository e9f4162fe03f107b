// Package web serves VERA's browser client: one HTML page with its CSS and
// JavaScript, embedded with go:embed (no build step), speaking the event
// protocol over GET /v1/chat and, for voice, WebRTC to POST
// /v1/voice/sessions.
//
// The page offers text chat, a transcript, captions, per-turn latency,
// safety cards announced once to screen readers, the session's title with
// a rename control (session.rename), and a HUD emulator that draws the
// display ops of a card exactly as the chosen glasses profile receives
// them. Safety cards are paged locally with arrow keys, Enter and Escape
// and acknowledged page by page; Done on the last page is also sent as an
// input.key select so the server clears the card and shows any prompt
// waiting behind it.
//
// Proposed actions show twice: on the phone/browser panel as Approve and
// Decline buttons (action.approve / action.decline with the tapping
// surface), and on the HUD as the server's prompt page (display.card, kind
// "prompt"), whose keys go to the server as input.key — the server owns
// the prompt's focus (it starts on Decline) and the decision. Invariants:
// a prompt is never drawn over a safety card; prompt pages are never
// acknowledged (display.ack is for safety cards); action.updated takes the
// prompt away and shows the outcome briefly.
//
// Handler serves "/" (the page) and "/web/..." (its assets) with a strict
// Content-Security-Policy; it has no state and starts no goroutines.
package web
