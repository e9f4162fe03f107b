package router

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/veraneural/vera-gateway/safety"
)

// ConverseRequest is one conversation turn.
type ConverseRequest struct {
	// Slot defaults to "converse".
	Slot string
	// Thread carries engine-side conversation ids across turns (vera);
	// nil makes a fresh engine conversation per turn.
	Thread *Thread
	// SystemPrompt, optional (HTTP LLM providers only).
	SystemPrompt string
	// History is the earlier context, oldest first, without Text.
	History []Message
	// Text is what the user just said or typed.
	Text string
	// MaxTokens bounds the reply; 0 uses the model's max_output_tokens.
	MaxTokens int
	// IdempotencyKey of the turn, reused on every retry; "" makes one.
	IdempotencyKey string
	// Tools are offered to providers that support them (openai); their
	// calls come back as Reply.ProposedActions. Others ignore them.
	Tools []Tool
}

// Converse sends a turn to the slot's models and streams the reply text to
// onDelta as it arrives (onDelta may be nil). Once a delta has reached the
// caller the turn is bound to that model: a later failure ends the call
// with a *NoModelError whose last attempt has KindTruncated, never a reply
// spliced from two models. An error from onDelta aborts the turn.
//
// An engine reply with a valid safety object but no usable message fails
// over like any protocol fault, and its safety is kept: merged
// never-downgrade into the reply that answers, or, when none does, returned
// by (*NoModelError).Safety.
func (r *Router) Converse(ctx context.Context, req ConverseRequest, onDelta func(delta string) error) (Reply, error) {
	if req.Slot == "" {
		req.Slot = SlotConverse
	}
	if strings.TrimSpace(req.Text) == "" {
		return Reply{}, fmt.Errorf("%w: text must not be blank", ErrBadRequest)
	}
	if req.Slot == SlotListen || req.Slot == SlotSpeak {
		return Reply{}, fmt.Errorf("%w: slot %q is an audio slot", ErrBadRequest, req.Slot)
	}
	models, err := r.slot(req.Slot)
	if err != nil {
		return Reply{}, err
	}
	msgs := make([]Message, 0, len(req.History)+1)
	for _, h := range req.History {
		if strings.TrimSpace(h.Text) != "" {
			msgs = append(msgs, h)
		}
	}
	msgs = append(msgs, Message{Role: RoleUser, Text: req.Text})
	var reply Reply
	// salvaged is the engine safety of attempts that failed for another
	// reason; it is merged into the reply that answers (never lost).
	var salvaged safety.Assessment
	haveSalvaged := false
	deltas := guard(onDelta)
	m, err := r.run(ctx, plan{
		slot:     req.Slot,
		models:   models,
		key:      req.IdempotencyKey,
		streamed: true,
		tokens: func(m *model) int {
			n := estimateTokens(req.SystemPrompt, msgs, outputTokens(req.MaxTokens, m.cfg))
			if m.cfg.Provider == ProviderOpenAI {
				n += toolTokens(req.Tools) // only providers that take tools are sent them
			}
			return n
		},
	}, func(ctx context.Context, m *model, c *call) error {
		tr := textRequest{System: req.SystemPrompt, Messages: msgs, MaxTokens: outputTokens(req.MaxTokens, m.cfg), Thread: req.Thread, Tools: req.Tools}
		rep, err := m.text.complete(ctx, c, tr, deltas)
		if err != nil {
			var pe *ProviderError
			if errors.As(err, &pe) && pe.Safety != nil {
				salvaged, haveSalvaged = mergeSalvaged(salvaged, haveSalvaged, *pe.Safety), true
			}
			return err
		}
		if strings.TrimSpace(rep.Message) == "" {
			s := rep.Safety
			salvaged, haveSalvaged = mergeSalvaged(salvaged, haveSalvaged, s), true
			return &ProviderError{Kind: KindProtocol, Err: errors.New("empty reply"), Safety: &s}
		}
		reply = rep
		return nil
	})
	if err != nil {
		return Reply{}, err
	}
	reply.Model, reply.Provider = m.cfg.Name, m.cfg.Provider
	if haveSalvaged {
		reply.Safety = keepSalvaged(reply.Safety, salvaged)
	}
	if reply.Safety.Resources == nil {
		reply.Safety.Resources = []safety.Resource{}
	}
	if reply.ProposedActions == nil {
		reply.ProposedActions = []ProposedAction{}
	}
	return reply, nil
}

// keepSalvaged merges a salvaged engine verdict into the answering model's
// (its resources first), never lowering either; Source says who decided.
func keepSalvaged(reply, salvaged safety.Assessment) safety.Assessment {
	m := safety.Merge(reply, salvaged)
	switch m.Source {
	case safety.SourceEngine: // the salvaged verdict changed nothing
		m.Source = reply.Source
	case safety.SourceLocal: // the answering model judged nothing
		m.Source = salvaged.Source
	}
	return m
}
