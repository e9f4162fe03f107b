// Package gateway is vera-gateway's HTTP edge: the gorilla/mux server with
// its health, readiness and metrics endpoints, and the Partner API
// conventions every endpoint inherits — request ids, the dated VERA-Version
// header, the error envelope {"error":{"type","message","request_id"}},
// Bearer keys with scopes, short-lived client tokens for devices, per-key
// rate limits, body limits, strict JSON and Idempotency-Key replay.
//
// Invariants: every error leaves as the envelope with the request id that is
// also in the X-Request-Id header; keys are compared in constant time and
// never logged; objects belong to one partner and another partner gets 404,
// never 403; with no keys configured (dev mode) only loopback clients are
// served and the server refuses a non-loopback listen address.
//
// The package is the kit every gateway package builds on, and a leaf: it
// imports no other gateway package but gateway/clock. It holds the one
// error-envelope writer (WriteError), the one set of Partner API error
// types (ErrorType, Error), the one Principal (who a request acts for) and
// Route, the conventions a sub-package's endpoint asks for.
//
// Sub-packages own the endpoints with their own state: gateway/router (model
// router, POST /v1/oneshot), gateway/session and gateway/event (the
// conversation session and its event protocol), gateway/chat (websocket
// chat), gateway/rtc (WebRTC voice), gateway/voice (the voice pipeline),
// gateway/converse (router to session), gateway/actions (decisions on
// proposed actions), gateway/titles, gateway/hooks (the inbox, turn
// webhooks and titles around sessions), gateway/inbox, gateway/tools,
// gateway/webhook, gateway/audit and gateway/web (the embedded web client).
// cmd/vera-gateway wires them.
package gateway
