package webhook

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Event is what a receiver gets as the request body:
//
//	{"id":"evt_…","type":"turn_finished","created":1764550000,"data":{…}}
//
// ID is also sent as VERA-Event-Id and never changes between retries.
type Event struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Created int64  `json:"created"`
	Data    any    `json:"data"`
}

// TurnFinished is the data of a turn_finished event: the extension API's
// turn_finished hook object. Tool calls, thinking and internal messages are
// never in Prompt or Reply; a turn that an inbox message started has an empty
// Prompt.
type TurnFinished struct {
	SessionID string `json:"session_id"`
	EndUserID string `json:"end_user_id,omitempty"`
	// Turns counts the session's finished turns, this one included.
	Turns int `json:"turns"`
	// Spawned is true for a turn the person did not start (an inbox
	// message).
	Spawned bool `json:"spawned"`
	// Outcome is completed, cancelled, interrupted or failed.
	Outcome string `json:"outcome"`
	Prompt  string `json:"prompt"`
	Reply   string `json:"reply"`
}

// ActionEvent is the data of the action.* events. It carries no message
// text: who decided, on which surface, and when (the event's created time).
type ActionEvent struct {
	ActionID   string `json:"action_id"`
	ActionType string `json:"action_type"`
	SessionID  string `json:"session_id,omitempty"`
	EndUserID  string `json:"end_user_id,omitempty"`
	// Surface is where the decision was made (glasses, phone, browser,
	// voice); empty for expiry, hang-up and results.
	Surface string `json:"surface,omitempty"`
	// Via is how: tap, key or speech; expiry on action.expired, hangup on
	// an action.declined the end of the session caused.
	Via string `json:"via,omitempty"`
	// Reason says why an action was declined or expired.
	Reason string `json:"reason,omitempty"`
	// Status and Result are the partner's report (action.result).
	Status string          `json:"status,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// NewEvent returns an event of type t with a fresh id, created at now.
func NewEvent(t string, now time.Time, data any) (Event, error) {
	if !slices.Contains(EventTypes, t) {
		return Event{}, fmt.Errorf("webhook: %w: %q", ErrUnknownEvent, t)
	}
	return Event{ID: NewEventID(), Type: t, Created: now.Unix(), Data: data}, nil
}

// NewEventID returns "evt_" and 32 random hex digits.
func NewEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "evt_" + hex.EncodeToString(b[:])
}
