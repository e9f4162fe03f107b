package router

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of context: who said it and what.
type Message struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// OneshotRequest is model.oneshot: one answer from the models of the slot
// named in Assignment.
type OneshotRequest struct {
	Assignment   string    `json:"assignment"`
	SystemPrompt string    `json:"systemPrompt,omitempty"`
	Messages     []Message `json:"messages"`
	MaxTokens    int       `json:"maxTokens,omitempty"`
	// IdempotencyKey, when set, is sent (suffixed per model) on every try;
	// otherwise the router makes one per model.
	IdempotencyKey string `json:"-"`
}

// OneshotResponse is the reply text and the model and provider that gave it.
type OneshotResponse struct {
	Text     string `json:"text"`
	Model    string `json:"model"`
	Provider string `json:"provider"`
}
