package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/gateway/router"
)

// Oneshotter answers model.oneshot requests (the model router).
type Oneshotter interface {
	Oneshot(ctx context.Context, req router.OneshotRequest) (router.OneshotResponse, error)
}

// OneshotRoute is POST /v1/oneshot: one answer from the models of the slot
// the request names, for partners and extensions. Scope conversations:write.
func (s *Server) OneshotRoute(o Oneshotter) Route {
	return Route{Method: http.MethodPost, Path: "/v1/oneshot", Scope: ScopeConversationsWrite, Idempotent: true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.handleOneshot(w, r, o) })}
}

type oneshotBody struct {
	Assignment   string           `json:"assignment"`
	SystemPrompt string           `json:"systemPrompt"`
	Messages     []router.Message `json:"messages"`
	MaxTokens    int              `json:"maxTokens"`
}

// maxOneshotMessages bounds the context a partner may send in one request.
const maxOneshotMessages = 64

func (s *Server) handleOneshot(w http.ResponseWriter, r *http.Request, o Oneshotter) {
	var b oneshotBody
	if err := DecodeJSON(r, &b); err != nil {
		WriteError(w, r, err)
		return
	}
	if err := s.validateOneshot(b); err != nil {
		WriteError(w, r, err)
		return
	}
	resp, err := o.Oneshot(r.Context(), router.OneshotRequest{
		Assignment: b.Assignment, SystemPrompt: b.SystemPrompt, Messages: b.Messages, MaxTokens: b.MaxTokens,
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	})
	if err != nil {
		s.log.Warn("oneshot failed", "request_id", RequestID(r.Context()), "slot", b.Assignment, "err", err)
		WriteError(w, r, oneshotError(err))
		return
	}
	WriteJSON(w, http.StatusOK, resp)
}

func (s *Server) validateOneshot(b oneshotBody) *Error {
	lim := s.cfg.Limits
	switch {
	case strings.TrimSpace(b.Assignment) == "":
		return Errorf(InvalidRequest, "assignment is required: the slot to use (e.g. converse, snappy, eco)")
	case len(b.Messages) == 0:
		return Errorf(InvalidRequest, "messages must hold at least one message")
	case len(b.Messages) > maxOneshotMessages:
		return Errorf(InvalidRequest, "messages holds %d messages; at most %d", len(b.Messages), maxOneshotMessages)
	case utf8.RuneCountInString(b.SystemPrompt) > lim.ContextChars:
		return Errorf(InvalidRequest, "systemPrompt is longer than %d characters", lim.ContextChars)
	case b.MaxTokens < 0:
		return Errorf(InvalidRequest, "maxTokens must not be negative")
	}
	for i, m := range b.Messages {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			return Errorf(InvalidRequest, "messages[%d].role must be user, assistant or system, not %q", i, m.Role)
		}
		if strings.TrimSpace(m.Text) == "" {
			return Errorf(InvalidRequest, "messages[%d].text must not be blank", i)
		}
		if n := utf8.RuneCountInString(m.Text); n > lim.MessageChars {
			return Errorf(InvalidRequest, "messages[%d].text has %d characters; at most %d", i, n, lim.MessageChars)
		}
	}
	return nil
}

// oneshotError maps router errors to the envelope: no model answered is
// engine_unavailable listing every attempt; an unknown slot or a request the
// router refuses is invalid_request.
func oneshotError(err error) error {
	var nm *router.NoModelError
	switch {
	case errors.As(err, &nm):
		// Summary names model, provider, kind and status per attempt; raw
		// provider errors can carry internal addresses, so they stay in logs.
		return Errorf(EngineUnavailable, "%s", nm.Summary())
	case errors.Is(err, router.ErrUnknownSlot):
		return Errorf(InvalidRequest, "assignment: %v", err)
	case errors.Is(err, router.ErrBadRequest):
		return Errorf(InvalidRequest, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Errorf(EngineUnavailable, "the request ended before a model answered")
	default:
		return fmt.Errorf("oneshot: %w", err)
	}
}
