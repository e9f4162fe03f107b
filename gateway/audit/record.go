package audit

import (
	"fmt"
	"strconv"
	"time"
)

// Decisions a Record holds.
const (
	// DecisionApproved: the person explicitly approved (tap, key or a
	// clear spoken yes). Status "failed" means the engine refused it.
	DecisionApproved = "approved"
	// DecisionDeclined: the person declined, or hung up mid-prompt (Via
	// "hangup").
	DecisionDeclined = "declined"
	// DecisionExpired: the action expired unanswered.
	DecisionExpired = "expired"
	// DecisionResult: the partner reported the outcome (Status succeeded
	// or failed) through POST /v1/actions/{id}/result.
	DecisionResult = "result"
)

// Record is one audited decision. It has no field for message text,
// titles, summaries or inputs, by design.
type Record struct {
	// ID is assigned by the store: increasing per partner, the paging
	// cursor.
	ID         string `json:"id"`
	ActionID   string `json:"action_id"`
	ActionType string `json:"action_type"`
	SessionID  string `json:"session_id"`
	EndUserID  string `json:"end_user_id,omitempty"`
	Decision   string `json:"decision"`
	// Via is how: tap, key, speech, expiry, hangup, or partner (results).
	Via string `json:"via,omitempty"`
	// Surface is where: glasses, phone, browser, voice; empty for expiry,
	// hang-up and results.
	Surface string `json:"surface,omitempty"`
	// Status of a result (succeeded, failed), or "failed" on an approval
	// the engine did not accept.
	Status string    `json:"status,omitempty"`
	At     time.Time `json:"at"`
}

func (r Record) validate() error {
	switch r.Decision {
	case DecisionApproved, DecisionDeclined, DecisionExpired, DecisionResult:
	default:
		return fmt.Errorf("%w: decision %q", ErrInvalid, r.Decision)
	}
	if r.ActionID == "" || r.SessionID == "" {
		return fmt.Errorf("%w: action_id and session_id are required", ErrInvalid)
	}
	if r.At.IsZero() {
		return fmt.Errorf("%w: at is required", ErrInvalid)
	}
	return nil
}

// Query selects one partner's records: those after the record id After
// (0: from the oldest), matching SessionID and ActionID when set, at most
// Limit.
type Query struct {
	SessionID string
	ActionID  string
	After     uint64
	Limit     int
}

// ParseID reads a record id (a cursor).
func ParseID(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: record id %q", ErrInvalid, s)
	}
	return n, nil
}

func formatID(n uint64) string { return strconv.FormatUint(n, 10) }
