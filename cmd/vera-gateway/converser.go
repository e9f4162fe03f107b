package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/tools"
	"github.com/veraneural/vera-gateway/safety"
)

// maxThreads bounds the engine conversation ids kept for live sessions.
const maxThreads = 100_000

// converser adapts the model router to the session's Converser: it maps the
// turn to the converse slot, keeps one engine thread per session (so the
// VERA engine sees one conversation, not one per turn) and maps the reply.
type converser struct {
	r *router.Router
	// validate checks a proposed action's input against the partner's tool
	// schema (tools.Registry.Validate); nil checks nothing.
	validate func(partner, name string, input json.RawMessage) error
	log      *slog.Logger
	// violations counts replies that broke the engine contract (more than
	// maxProposedActions actions, inputs that fail their schema).
	violations *prometheus.CounterVec
	// streamSafe: no model of the converse slot has a safety channel (only
	// the VERA engine does), so the engine's assessment is known to be
	// empty before the first delta and the session may stream the reply
	// instead of holding it until the end. With a VERA model in the slot
	// the reply is held, so the engine's resources are never late.
	streamSafe bool

	// tools returns the partner's tools for providers that take them
	// (tools.Registry.OpenAI); nil offers none.
	tools func(partner string) []tools.OpenAITool

	mu      sync.Mutex // mu guards threads, order, origins and originOrder
	threads map[string]*router.Thread
	order   []string
	// origins are the VERA engine models that proposed live actions, by
	// action id: only the engine that proposed an action can carry it out
	// once the person approves. Bounded FIFO (actions expire in 24 h).
	origins     map[string]actionOrigin
	originOrder []string
}

// actionOrigin is the engine model that proposed an action, in a session.
type actionOrigin struct {
	sessionID, model string
}

// maxOrigins bounds the engine actions remembered for approval.
const maxOrigins = 100_000

// maxProposedActions is the Partner API's limit per reply.
const maxProposedActions = 3

// actionTTL is how long a proposed action may be approved.
const actionTTL = 24 * time.Hour

func newConverser(r *router.Router, cfg router.Config) *converser {
	providers := map[string]string{}
	for _, m := range cfg.Resolved().Models {
		providers[m.Name] = m.Provider
	}
	safe := true
	for _, name := range r.Slots()[router.SlotConverse] {
		if p, ok := providers[name]; !ok || p == router.ProviderVERA {
			safe = false
		}
	}
	return &converser{r: r, streamSafe: safe, threads: map[string]*router.Thread{}, origins: map[string]actionOrigin{},
		log: slog.New(slog.DiscardHandler), violations: newViolations()}
}

func newViolations() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "actions",
		Name: "contract_violations_total", Help: "Proposed actions the gateway dropped: over the 3-per-reply limit, or input that fails its tool's schema."},
		[]string{"kind"})
}

func (c *converser) thread(sessionID, endUser string) *router.Thread {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.threads[sessionID]; ok {
		return t
	}
	if len(c.order) >= maxThreads {
		delete(c.threads, c.order[0])
		c.order = c.order[1:]
	}
	t := router.NewThread(endUser)
	c.threads[sessionID] = t
	c.order = append(c.order, sessionID)
	return t
}

// forget drops a closed session's engine thread.
func (c *converser) forget(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.threads[sessionID]; !ok {
		return
	}
	delete(c.threads, sessionID)
	for i, id := range c.order {
		if id == sessionID {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// Converse implements session.Converser.
func (c *converser) Converse(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	hist := make([]router.Message, len(req.History))
	for i, m := range req.History {
		hist[i] = router.Message{Role: m.Role, Text: m.Text}
	}
	endUser := req.EndUserID
	if endUser == "" {
		endUser = "s_" + req.SessionID
	}
	first := true
	rep, err := c.r.Converse(ctx, router.ConverseRequest{
		Slot: router.SlotConverse, Thread: c.thread(req.SessionID, endUser), History: hist, Text: req.Text,
		Tools: c.offered(req.PartnerID),
	}, func(d string) error {
		if first && c.streamSafe {
			// No engine safety will come: the session's local assessment
			// stands, and the reply can stream.
			req.SafetyFinal(safety.Assessment{})
		}
		first = false
		onDelta(d)
		return nil
	})
	if err != nil {
		return session.Reply{}, err
	}
	out := session.Reply{Message: rep.Message, Safety: rep.Safety, Model: rep.Model, Provider: rep.Provider}
	out.ProposedActions = c.actions(req.PartnerID, rep)
	if rep.Provider == router.ProviderVERA {
		c.remember(req.SessionID, rep.Model, out.ProposedActions)
	}
	return out, nil
}

// offered maps the partner's tools to the router's form.
func (c *converser) offered(partner string) []router.Tool {
	if c.tools == nil {
		return nil
	}
	ts := c.tools(partner)
	out := make([]router.Tool, len(ts))
	for i, t := range ts {
		out[i] = router.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters}
	}
	return out
}

// remember records that model (a VERA engine) proposed acts in sessionID.
func (c *converser) remember(sessionID, model string, acts []session.Action) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range acts {
		if _, ok := c.origins[a.ID]; !ok {
			if len(c.originOrder) >= maxOrigins {
				delete(c.origins, c.originOrder[0])
				c.originOrder = c.originOrder[1:]
			}
			c.originOrder = append(c.originOrder, a.ID)
		}
		c.origins[a.ID] = actionOrigin{sessionID: sessionID, model: model}
	}
}

// approveUpstream tells the VERA engine that proposed action actionID in
// sessionID that the person approved it (Router.ApproveAction: retried,
// one Idempotency-Key per action). It reports false, doing nothing, for
// actions no engine proposed (tool calls, inbox admissions).
func (c *converser) approveUpstream(ctx context.Context, sessionID, actionID string) (bool, error) {
	c.mu.Lock()
	o, ok := c.origins[actionID]
	if ok && o.sessionID == sessionID {
		// Taken: an action is approved at most once; the order slice
		// entry ages out by itself.
		delete(c.origins, actionID)
	}
	c.mu.Unlock()
	if !ok || o.sessionID != sessionID {
		return false, nil
	}
	return true, c.r.ApproveAction(ctx, o.model, actionID)
}

// actions keeps what the person may be asked to approve: at most three per
// reply (the engine contract; more are dropped, counted and logged), and
// only inputs that match the partner's tool schema when the action names
// one of its tools. Actions without an expiry expire after 24 h.
func (c *converser) actions(partner string, rep router.Reply) []session.Action {
	acts := rep.ProposedActions
	if len(acts) > maxProposedActions {
		c.log.Warn("engine proposed too many actions; keeping the first three", "count", len(acts), "model", rep.Model)
		c.violations.WithLabelValues("too_many").Add(float64(len(acts) - maxProposedActions))
		acts = acts[:maxProposedActions]
	}
	var out []session.Action
	for _, a := range acts {
		if c.validate != nil {
			if err := c.validate(partner, a.Type, a.Input); err != nil && !errors.Is(err, tools.ErrUnknownTool) {
				// The error names the JSON path, never the input's values.
				c.log.Warn("proposed action dropped: input does not match its tool schema", "action", a.ID, "tool", a.Type, "err", err)
				c.violations.WithLabelValues("schema").Inc()
				continue
			}
		}
		exp := a.ExpiresAt
		if exp.IsZero() {
			exp = time.Now().Add(actionTTL)
		}
		out = append(out, session.Action{ID: a.ID, Type: a.Type, Title: a.Title, Summary: a.Summary, Input: a.Input, ExpiresAt: exp})
	}
	return out
}
