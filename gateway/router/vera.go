package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/safety"
)

// VERAVersion is the Partner API version the vera provider speaks.
const VERAVersion = "2026-10-09"

// defaultOneshotUser is the opaque end_user_id of oneshot conversations
// when the model names none.
const defaultOneshotUser = "vera-gateway-oneshot"

// vera is the VERA engine through the Partner API: a conversation per
// thread (POST /conversations), then a message per turn
// (POST /conversations/{id}/messages). It does not stream: the first
// useful token is the whole reply.
type vera struct {
	cfg  ModelConfig
	key  string
	env  *providerEnv
	base string
}

func newVERA(cfg ModelConfig, key string, env *providerEnv) *vera {
	return &vera{cfg: cfg, key: key, env: env, base: strings.TrimRight(cfg.BaseURL, "/")}
}

func (p *vera) post(ctx context.Context, path, idemKey string, in, out any) error {
	buf, err := json.Marshal(in)
	if err != nil {
		return &ProviderError{Kind: KindInternal, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+path, bytes.NewReader(buf))
	if err != nil {
		return &ProviderError{Kind: KindInternal, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("VERA-Version", VERAVersion)
	req.Header.Set("Idempotency-Key", idemKey)
	if p.key != "" {
		req.Header.Set("Authorization", "Bearer "+p.key)
	}
	resp, err := do(ctx, p.env.client, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return httpFailure(resp, p.env.maxBody, p.env.clock.Now())
	}
	if out == nil {
		// Only the status matters; read what is left (bounded) so the
		// connection can be reused.
		if _, err := io.Copy(io.Discard, &boundedReader{r: resp.Body, n: p.env.maxBody}); err != nil {
			return readErr(err, "read body")
		}
		return nil
	}
	if err := decodeJSON(resp, p.env.maxBody, out); err != nil {
		var pe *ProviderError
		if errors.As(err, &pe) && pe.RequestID == "" {
			pe.RequestID = resp.Header.Get("Request-Id")
		}
		return err
	}
	return nil
}

// veraMessage is the reply of POST /conversations/{id}/messages.
type veraMessage struct {
	ID              string           `json:"id"`
	Message         veraText         `json:"message"`
	Safety          *veraSafety      `json:"safety"`
	ProposedActions []ProposedAction `json:"proposed_actions"`
}

// veraText accepts message as a string or as {"role","text"}.
type veraText struct {
	Text string
	Set  bool
}

func (t *veraText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		t.Set = true
		return json.Unmarshal(b, &t.Text)
	}
	if string(b) == "null" {
		return nil
	}
	var obj struct {
		Role string `json:"role"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("message: want a string or {role,text}: %w", err)
	}
	t.Text, t.Set = obj.Text, true
	return nil
}

// veraSafety is the wire form of safety; level is a string ("none",
// "elevated", "crisis") mapped here so this package does not depend on
// safety.Level's JSON form.
type veraSafety struct {
	Level           string            `json:"level"`
	DisplayRequired bool              `json:"display_required"`
	Resources       []safety.Resource `json:"resources"`
}

func (s *veraSafety) assessment() (safety.Assessment, error) {
	a := safety.Assessment{DisplayRequired: s.DisplayRequired, Resources: s.Resources, Source: safety.SourceEngine}
	switch s.Level {
	case "none", "":
		a.Level = safety.LevelNone
	case "elevated":
		a.Level = safety.LevelElevated
	case "crisis":
		a.Level = safety.LevelCrisis
	default:
		// An unknown level from a newer engine is not a reason to show
		// less: treat it as the highest we know.
		a.Level = safety.LevelCrisis
	}
	if a.Resources == nil {
		a.Resources = []safety.Resource{}
	}
	return a, nil
}

func (p *vera) complete(ctx context.Context, c *call, tr textRequest, delta func(string) error) (Reply, error) {
	endUser := p.cfg.EndUserID
	if tr.Thread != nil && tr.Thread.EndUserID != "" {
		endUser = tr.Thread.EndUserID
	}
	if endUser == "" {
		endUser = defaultOneshotUser
	}
	conv := ""
	if tr.Thread != nil {
		conv = tr.Thread.conversation(p.cfg.Name)
	}
	if conv == "" {
		var out struct {
			ID string `json:"id"`
		}
		if err := p.post(ctx, "/conversations", c.key+"-conversation", map[string]string{"end_user_id": endUser}, &out); err != nil {
			return Reply{}, err
		}
		if out.ID == "" {
			return Reply{}, perr(KindProtocol, "conversation without id")
		}
		conv = out.ID
		if tr.Thread != nil {
			tr.Thread.setConversation(p.cfg.Name, conv)
		}
	}
	text := tr.Messages[len(tr.Messages)-1].Text
	if tr.Oneshot || tr.Thread == nil {
		// The engine keeps context per conversation; a oneshot has none,
		// so the prompt and earlier messages travel in the one message.
		text = flatten(tr.System, tr.Messages)
	}
	var out veraMessage
	if err := p.post(ctx, "/conversations/"+url.PathEscape(conv)+"/messages", c.key, map[string]string{"text": text}, &out); err != nil {
		return Reply{}, err
	}
	if !out.Message.Set {
		return Reply{}, perr(KindProtocol, "reply without message")
	}
	reply := Reply{Message: out.Message.Text, ProposedActions: out.ProposedActions}
	if out.Safety != nil {
		a, err := out.Safety.assessment()
		if err != nil {
			return Reply{}, perr(KindProtocol, "safety: %w", err)
		}
		reply.Safety = a
	} else {
		reply.Safety = safety.Assessment{Level: safety.LevelNone, Resources: []safety.Resource{}, Source: safety.SourceEngine}
	}
	for i, a := range reply.ProposedActions {
		if a.ID == "" || a.Type == "" {
			return Reply{}, perr(KindProtocol, "proposed_actions[%d]: id and type are required", i)
		}
		if a.ExpiresAt.IsZero() {
			reply.ProposedActions[i].ExpiresAt = p.env.clock.Now().Add(24 * time.Hour) // Partner API: actions expire after 24 h
		}
	}
	if err := emitDelta(c, delta, reply.Message); err != nil {
		return Reply{}, err
	}
	return reply, nil
}

// flatten renders a system prompt and messages as one text.
func flatten(system string, msgs []Message) string {
	var b strings.Builder
	if system != "" {
		b.WriteString(system)
		b.WriteString("\n\n")
	}
	if len(msgs) == 1 {
		b.WriteString(msgs[0].Text)
		return b.String()
	}
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(m.Role)
		b.WriteString(": ")
		b.WriteString(m.Text)
	}
	return b.String()
}

// ErrNotEngine: ApproveAction named a model that is not a VERA engine
// (only the engine keeps actions that need its approval).
var ErrNotEngine = errors.New("router: model is not a VERA engine")

// approveKeyPrefix starts the Idempotency-Key of an approval; with the
// action id and model name it is the same on every retry and every call,
// so the engine carries an action out at most once.
const approveKeyPrefix = "approve-"

// ApproveAction tells the VERA engine model (the model that proposed the
// action, Reply.Model) that the person explicitly approved action
// actionID: POST /actions/{id}/approve. Call it only after an explicit yes.
// 429 (honouring Retry-After), 502/503/504 and connection failures are
// retried with the router's backoff and the same Idempotency-Key; the
// model's breaker and timeout_ms apply. No other model is tried: only the
// engine that proposed an action can carry it out. Failure: *NoModelError
// listing the attempts, ErrNotEngine, or ErrBadRequest.
func (r *Router) ApproveAction(ctx context.Context, modelName, actionID string) error {
	if strings.TrimSpace(actionID) == "" {
		return fmt.Errorf("%w: action id must not be blank", ErrBadRequest)
	}
	m, ok := r.models[modelName]
	if !ok {
		return fmt.Errorf("%w: unknown model %q", ErrNotEngine, modelName)
	}
	v, ok := m.text.(*vera)
	if !ok {
		return fmt.Errorf("%w: model %q has provider %q", ErrNotEngine, modelName, m.cfg.Provider)
	}
	_, err := r.run(ctx, plan{slot: slotActions, models: []*model{m}, key: approveKeyPrefix + actionID},
		func(ctx context.Context, _ *model, c *call) error { return v.approve(ctx, c, actionID) })
	return err
}

// slotActions labels the metrics of action calls (they belong to no slot).
const slotActions = "actions"

// approve is POST /actions/{id}/approve with an empty JSON body; any 2xx is
// success (the engine's answer body is not needed).
func (p *vera) approve(ctx context.Context, c *call, actionID string) error {
	if err := p.post(ctx, "/actions/"+url.PathEscape(actionID)+"/approve", c.key, struct{}{}, nil); err != nil {
		return err
	}
	if !c.first() {
		return errAbandoned
	}
	return nil
}
