package router

import (
	"context"
	"fmt"
	"strings"
)

// Oneshot asks the slot named in req.Assignment for one answer. Its models
// are tried in order, skipping those whose context window cannot hold the
// request; it never falls back to another slot. No answer: *NoModelError.
func (r *Router) Oneshot(ctx context.Context, req OneshotRequest) (OneshotResponse, error) {
	if err := validateMessages(req.Messages); err != nil {
		return OneshotResponse{}, err
	}
	if req.MaxTokens < 0 {
		return OneshotResponse{}, fmt.Errorf("%w: maxTokens must be >= 0", ErrBadRequest)
	}
	if req.Assignment == SlotListen || req.Assignment == SlotSpeak {
		return OneshotResponse{}, fmt.Errorf("%w: assignment %q is an audio slot", ErrBadRequest, req.Assignment)
	}
	models, err := r.slot(req.Assignment)
	if err != nil {
		return OneshotResponse{}, err
	}
	var reply Reply
	thread := NewThread("") // so retries reuse an engine conversation
	m, err := r.run(ctx, plan{
		slot:   req.Assignment,
		models: models,
		key:    req.IdempotencyKey,
		tokens: func(m *model) int {
			return estimateTokens(req.SystemPrompt, req.Messages, outputTokens(req.MaxTokens, m.cfg))
		},
	}, func(ctx context.Context, m *model, c *call) error {
		tr := textRequest{System: req.SystemPrompt, Messages: req.Messages, MaxTokens: outputTokens(req.MaxTokens, m.cfg), Thread: thread, Oneshot: true}
		rep, err := m.text.complete(ctx, c, tr, nil)
		if err != nil {
			return err
		}
		if strings.TrimSpace(rep.Message) == "" {
			return perr(KindProtocol, "empty reply")
		}
		reply = rep
		return nil
	})
	if err != nil {
		return OneshotResponse{}, err
	}
	return OneshotResponse{Text: reply.Message, Model: m.cfg.Name, Provider: m.cfg.Provider}, nil
}

func validateMessages(msgs []Message) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%w: messages: at least one is required", ErrBadRequest)
	}
	for i, m := range msgs {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return fmt.Errorf("%w: messages[%d].role: must be user or assistant, got %q", ErrBadRequest, i, m.Role)
		}
		if strings.TrimSpace(m.Text) == "" {
			return fmt.Errorf("%w: messages[%d].text: must not be blank", ErrBadRequest, i)
		}
	}
	return nil
}
