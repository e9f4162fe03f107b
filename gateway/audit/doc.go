// Package audit owns the decision audit log: every approve, decline,
// expiry and hang-up of a proposed action, and every result a partner
// reported, recorded durably and readable by the partner at
// GET /v1/audit/decisions (scope audit:read).
//
// Invariants:
//   - A Record names the action (id and type), the session, the opaque
//     end_user_id, the decision, how and where it was made and when. It
//     never holds message text, action titles, summaries or inputs: the
//     Record type has no field that could carry them.
//   - Records are partitioned by partner in the Store; a partner reads
//     only its own (another partner's session or action id yields no
//     records, the same answer as an unknown one).
//   - Retention is bounded twice: records older than Config.RetentionDays
//     are pruned (on every append for the partner, and by Prune), and a
//     partner keeps at most Config.MaxRecordsPerPartner, oldest dropped
//     first.
//   - Record ids increase per partner in append order; a page is the
//     records after a cursor, oldest first.
//
// The package starts no goroutines: gateway/actions, which records the
// decisions, calls Prune on its ticker. SafetyRoute serves the safety
// referral counters next to the decisions, at GET /v1/audit/safety.
package audit
