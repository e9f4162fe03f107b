// Package router sends each request of the gateway (listen, converse,
// speak, oneshot) to the models of a named slot, in order, and decides how
// fast a silent or failing model is abandoned.
//
// Semantics (model.oneshot of the VERA extension API):
//   - a slot is an ordered list of models; models whose context window
//     cannot hold the request (a conservative estimate) are skipped; the
//     router never falls back to another slot;
//   - every attempt has a time-to-first-useful-token deadline (ttft_ms) and
//     every model an overall deadline (timeout_ms); a TTFT miss moves to
//     the next model at once, never retried;
//   - rate limits (429, honouring Retry-After), 502/503/504 and connection
//     failures are retried on the same model with exponential, jittered,
//     bounded backoff (cenkalti/backoff/v4) and the same Idempotency-Key,
//     then the next model;
//   - each model has a circuit breaker (open after N consecutive failures,
//     one half-open probe after a cool-down);
//   - cancelling the context aborts the attempt in flight at once;
//   - when no model answers, the error is a *NoModelError listing every
//     attempt and why it failed;
//   - once streamed output (reply deltas, audio) reached the caller, a
//     failure ends the call: replies are never spliced from two models;
//   - the reserved safety slot fans out instead: every classifier it lists
//     (openai-moderation, guard) judges the user's turn in parallel, the
//     highest verdict wins, and a slow, failing or malformed one never
//     lowers a level nor holds the caller past its budget (Classify);
//   - engine replies are read tolerantly: a valid safety object is never
//     lost to another field, an unreadable one counts as elevated.
//
// Providers: embedded offline engines (pocketsphinx listen over cgo,
// espeak-ng speak, a deterministic companion converse), any
// OpenAI-compatible server (chat completions with SSE, transcriptions,
// speech) and the VERA engine (Partner API). The cgo engine is left out
// with the noembedded build tag. Every response read is bounded by
// router.max_body_bytes and content types are checked.
//
// OneshotRoute is the router's one HTTP endpoint, POST /v1/oneshot, mounted
// on the gateway's edge (gateway.Route) with the edge's message limits.
//
// Time comes from an injected clock.Clock; credentials from an injected getenv;
// metrics go to an injected prometheus.Registerer (namespace vera,
// subsystem router). See README.md for configuration keys and metrics.
package router
