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
	var raw json.RawMessage
	if err := p.post(ctx, "/conversations/"+url.PathEscape(conv)+"/messages", c.key, map[string]string{"text": text}, &raw); err != nil {
		return Reply{}, err
	}
	rep, err := decodeVERAReply(raw, p.env.clock.Now(), p.env.fallbackResources)
	if err != nil {
		return Reply{}, perr(KindProtocol, "%w", err)
	}
	for _, d := range rep.Defects {
		p.env.replyDefect(p.cfg.Name, d)
	}
	if !rep.MessageOK {
		s := rep.Safety
		return Reply{}, &ProviderError{Kind: KindProtocol, Err: errors.New("reply without a readable message"), Safety: &s}
	}
	reply := Reply{Message: rep.Message, Safety: rep.Safety, ProposedActions: rep.Actions}
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
