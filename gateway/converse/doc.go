// Package converse is the session's way to the model router: a Converser
// (session.Converser) maps each turn to the router's converse slot, keeps
// one engine thread per session (so the VERA engine sees one
// conversation, not one per turn) and maps the reply back.
//
// Invariants:
//   - At most three proposed actions per reply (the engine contract); more
//     are dropped, counted (vera_actions_contract_violations_total) and
//     logged. An input that fails the partner's tool schema never reaches
//     the person. Every action expires (24 h unless the engine says).
//   - A reply streams before it ends only when no model of the converse
//     slot has a safety channel (only the VERA engine does): otherwise
//     deltas are held until the engine's assessment is known, so its
//     resources are never late.
//   - A turn that fails keeps the engine's card: the safety a failed
//     attempt carried ((*router.NoModelError).Safety) is returned with the
//     error, and the session shows it.
//   - Classifier (NewClassifier) puts the router's safety slot behind the
//     session's Classifier; no slot, no Classifier.
//   - Only the engine that proposed an action carries it out: the
//     Converser remembers each engine action's model (bounded, FIFO) and
//     ApproveUpstream tells that engine once, for that session only.
//
// Threads and origins are bounded (100 000 each); Forget drops a closed
// session's thread. Time (action expiry) comes from a clock.Clock.
package converse
