package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/gateway"
)

// Oneshotter answers model.oneshot requests (a *Router).
type Oneshotter interface {
	Oneshot(ctx context.Context, req OneshotRequest) (OneshotResponse, error)
}

// OneshotRoute is POST /v1/oneshot: one answer from the models of the slot
// the request names, for partners and extensions, within the edge's
// message and context limits. Scope conversations:write. log (nil
// discards) gets the failures, whose provider details stay out of the
// response.
func OneshotRoute(o Oneshotter, limits gateway.LimitsConfig, log *slog.Logger) gateway.Route {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &oneshotHandler{o: o, limits: limits, log: log}
	return gateway.Route{Method: http.MethodPost, Path: "/v1/oneshot", Scope: gateway.ScopeConversationsWrite, Idempotent: true,
		Handler: h}
}

type oneshotHandler struct {
	o      Oneshotter
	limits gateway.LimitsConfig
	log    *slog.Logger
}

type oneshotBody struct {
	Assignment   string    `json:"assignment"`
	SystemPrompt string    `json:"systemPrompt"`
	Messages     []Message `json:"messages"`
	MaxTokens    int       `json:"maxTokens"`
}

// maxOneshotMessages bounds the context a partner may send in one request.
const maxOneshotMessages = 64

func (h *oneshotHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b oneshotBody
	if err := gateway.DecodeJSON(r, &b); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	if err := validateOneshot(b, h.limits); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	resp, err := h.o.Oneshot(r.Context(), OneshotRequest{
		Assignment: b.Assignment, SystemPrompt: b.SystemPrompt, Messages: b.Messages, MaxTokens: b.MaxTokens,
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	})
	if err != nil {
		h.log.Warn("oneshot failed", "request_id", gateway.RequestID(r.Context()), "slot", b.Assignment, "err", err)
		gateway.WriteError(w, r, oneshotError(err))
		return
	}
	gateway.WriteJSON(w, http.StatusOK, resp)
}

func validateOneshot(b oneshotBody, lim gateway.LimitsConfig) *gateway.Error {
	switch {
	case strings.TrimSpace(b.Assignment) == "":
		return gateway.Errorf(gateway.InvalidRequest, "assignment is required: the slot to use (e.g. converse, snappy, eco)")
	case len(b.Messages) == 0:
		return gateway.Errorf(gateway.InvalidRequest, "messages must hold at least one message")
	case len(b.Messages) > maxOneshotMessages:
		return gateway.Errorf(gateway.InvalidRequest, "messages holds %d messages; at most %d", len(b.Messages), maxOneshotMessages)
	case utf8.RuneCountInString(b.SystemPrompt) > lim.ContextChars:
		return gateway.Errorf(gateway.InvalidRequest, "systemPrompt is longer than %d characters", lim.ContextChars)
	case b.MaxTokens < 0:
		return gateway.Errorf(gateway.InvalidRequest, "maxTokens must not be negative")
	}
	for i, m := range b.Messages {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			return gateway.Errorf(gateway.InvalidRequest, "messages[%d].role must be user, assistant or system, not %q", i, m.Role)
		}
		if strings.TrimSpace(m.Text) == "" {
			return gateway.Errorf(gateway.InvalidRequest, "messages[%d].text must not be blank", i)
		}
		if n := utf8.RuneCountInString(m.Text); n > lim.MessageChars {
			return gateway.Errorf(gateway.InvalidRequest, "messages[%d].text has %d characters; at most %d", i, n, lim.MessageChars)
		}
	}
	return nil
}

// oneshotError maps router errors to the envelope: no model answered is
// engine_unavailable listing every attempt; an unknown slot or a request the
// router refuses is invalid_request.
func oneshotError(err error) error {
	var nm *NoModelError
	switch {
	case errors.As(err, &nm):
		// Summary names model, provider, kind and status per attempt; raw
		// provider errors can carry internal addresses, so they stay in logs.
		return gateway.Errorf(gateway.EngineUnavailable, "%s", nm.Summary())
	case errors.Is(err, ErrUnknownSlot):
		return gateway.Errorf(gateway.InvalidRequest, "assignment: %v", err)
	case errors.Is(err, ErrBadRequest):
		return gateway.Errorf(gateway.InvalidRequest, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return gateway.Errorf(gateway.EngineUnavailable, "the request ended before a model answered")
	default:
		return fmt.Errorf("oneshot: %w", err)
	}
}
