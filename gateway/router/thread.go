package router

import "sync"

// Thread is the router's memory of one conversation across turns: the
// engine-side conversation id each stateful model (vera) opened for it.
// Create one per gateway session with NewThread; safe for concurrent use.
type Thread struct {
	EndUserID string

	mu  sync.Mutex        // mu guards ids
	ids map[string]string // model name → engine conversation id
}

// NewThread starts a thread for an opaque end user id.
func NewThread(endUserID string) *Thread {
	return &Thread{EndUserID: endUserID, ids: map[string]string{}}
}

func (t *Thread) conversation(model string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ids[model]
}

func (t *Thread) setConversation(model, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ids[model] = id
}
