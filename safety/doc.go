// Package safety owns the safety assessment of a turn: its level, whether
// resources must be displayed, and the resources themselves; the embedded
// resource catalog by region; the local crisis detector; the merge policy
// between the engine's assessment and the local one; the spoken form of
// resources; referral counters and the AI-disclosure schedule.
//
// Invariants (BRIEF §5): resources the engine sends are never dropped,
// reordered or shortened; the local detector may raise a level, never lower
// it; an unknown region still yields an international directory and a
// "call your local emergency number" entry, never an empty list; no user
// text or identifier is ever logged or counted. This package never imports
// gateway and makes no network calls.
package safety
