// Package consent decides whether a person approved a proposed action.
//
// Classify reads a spoken (transcribed) answer to an approve/decline prompt
// and returns Yes, No or Ambiguous. Approval is the prompt's state machine:
// taps, keys, spoken answers, silence, hang-up and expiry.
//
// Invariants ("VERA proposes; the person approves"):
//   - Only an explicit act approves: a tap on the approve control, Enter on
//     the approve control (focus starts on decline), or a spoken answer that
//     Classify calls Yes, heard while the prompt is listening.
//   - Anything less is never a yes: hedges ("maybe", "I guess"), questions,
//     mixed answers ("yes no", "yes but wait"), double negatives ("don't
//     cancel"), silence, timeouts, hang-ups and expiry (24 h). An ambiguous
//     or silent answer asks again, at most Config.MaxAsks times; then the
//     prompt waits, silently, for a tap or key until it expires.
//   - A decision is final and recorded once (who decided by what means, on
//     which surface, when — never the words).
//
// Answer tells an answer from a new topic: only a short utterance that
// opens with a yes, a no or an answering hedge is an answer at all, so "I
// need to call my mom" never approves a call. Hold and Heard pause and
// restart the answer window while the prompt is still playing (or for
// typed chat, where there is no silence); Unanswered and Quiet never
// decide.
//
// The package is pure: no goroutines, no I/O; time comes from an injected
// clock.Clock and the owner calls Poll at NextDeadline.
package consent
