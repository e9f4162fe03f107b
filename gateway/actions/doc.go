// Package actions carries out the person's decisions on the actions a
// reply proposed: it is the sessions' session.ActionHandler and serves
// POST /v1/actions/{id}/result, where the partner reports what happened to
// an approved action.
//
// Invariants:
//   - Every decision — approve, decline, expiry, hang-up, and the partner's
//     result — is audited (ids, decision, via, surface, time; never text).
//     A store failure is logged, never returned: the decision stands.
//   - An action the VERA engine proposed is approved at that engine first;
//     if the engine does not accept it, the session shows it failed and the
//     partner is never told it was approved. Then the partner's webhooks
//     get action.approved.
//   - An expiry is published as action.expired, never action.declined.
//   - Held inbox messages are dropped only on the person's own no (tap,
//     key, speech, text); an expiry or a hang-up — and a draining gateway
//     hangs every session up — keeps them for next time.
//   - A result is accepted once per approved action, from its partner
//     only: another partner's action is 404, a second report 409.
//
// The decision audit is pruned to its retention at start and every minute,
// on the clock, by a goroutine the Flow owns and Close joins.
package actions
