// Package web serves VERA's two browser apps, embedded with go:embed (no
// build step), both speaking the event protocol over GET /v1/chat: the
// desktop web client at "/" and the Meta Ray-Ban Display app at /glasses.
//
// The desktop client offers text chat (and voice over WebRTC to POST
// /v1/voice/sessions), a transcript, captions, per-turn latency, the
// session's title with a rename control, device and region pickers, and a
// HUD emulator that draws the display ops of a card exactly as the chosen
// glasses profile receives them. The current safety card is pinned above
// the conversation; an earlier one folds into the transcript once the
// person closed it with Done — a required card not yet closed is never
// folded. Cards are paged locally with arrow keys, Enter and Escape and
// acknowledged page by page; Done on the last page is also sent as an
// input.key select so the server clears the card and shows any prompt
// waiting behind it. Proposed actions show twice: on the phone/browser
// panel as Approve and Decline buttons, and on the HUD as the server's
// prompt page, whose keys go to the server (it owns the focus, which
// starts on Decline). A prompt is never drawn over a safety card. Voice
// takes the STUN/TURN servers of the answer's Link headers (RFC 9725 §4.6)
// and keeps them for the next call while their credential is valid; a call
// that gathered without them restarts ICE by PATCH through them (at once
// with ?relay=1, after 4 s without a direct path, or when the connection
// fails), and the restart's 200 brings a fresh TURN credential.
//
// The glasses app (Glasses) is a 600×600 page for the glasses' browser:
// captions on black, the glasses' own composer behind a plain input, and
// safety cards and prompts rendered as DOM from the pages the gateway laid
// out for the display — the lines as laid out, never cut (a page another
// font overflows is scaled down), n/N on every page, focusable controls.
// Invariants: Escape never leaves a safety card (only Done does); every
// page drawn while the page is visible is acknowledged; the socket closes
// while the page is hidden and the session resumes from the last seq; a
// prompt's focus starts on Decline and Escape backs out without deciding.
// Its script, icon and manifest have content-hashed names and are
// immutable; the page and its service worker revalidate, and the worker's
// cache is named by the build, so an upgraded gateway never serves a stale
// app. Without dev mode the app pairs first (gateway/pairing).
//
// Handler serves "/" and "/web/..."; Glasses serves "/glasses" and
// "/glasses/...". Both set a strict Content-Security-Policy, keep no state
// after construction and start no goroutines.
package web
