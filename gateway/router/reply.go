package router

import (
	"encoding/json"
	"time"

	"github.com/veraneural/vera-gateway/safety"
)

// Reply is the Partner API reply shape of one converse turn, plus the model
// and provider that produced it.
type Reply struct {
	Message         string            `json:"message"`
	Safety          safety.Assessment `json:"safety"`
	ProposedActions []ProposedAction  `json:"proposed_actions"`
	Model           string            `json:"model"`
	Provider        string            `json:"provider"`
}

// ProposedAction is an action the engine proposes; the person approves.
type ProposedAction struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Title     string          `json:"title,omitempty"`
	Summary   string          `json:"summary,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ExpiresAt time.Time       `json:"expires_at,omitzero"`
}

// Tool is a partner tool offered to converse providers that take tools
// (OpenAI-compatible chat completions). A call the model makes becomes a
// ProposedAction the person must approve: Type is the tool name, Input the
// arguments; it is never run by the router.
type Tool struct {
	Name        string
	Description string
	// Parameters is the tool's JSON Schema for its input (an object).
	Parameters json.RawMessage
}
