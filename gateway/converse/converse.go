package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/tools"
	"github.com/veraneural/vera-gateway/safety"
)

const (
	// maxThreads bounds the engine conversation ids kept for live sessions.
	maxThreads = 100_000
	// maxOrigins bounds the engine actions remembered for approval.
	maxOrigins = 100_000
	// MaxProposedActions is the Partner API's limit per reply.
	MaxProposedActions = 3
	// ActionTTL is how long a proposed action without its own expiry may
	// be approved.
	ActionTTL = 24 * time.Hour
)

// Tools is the partner tool registry as the Converser uses it
// (*tools.Registry).
type Tools interface {
	// Validate checks a proposed action's input against the partner's tool
	// schema; tools.ErrUnknownTool for an action that names none of them.
	Validate(partner, name string, input json.RawMessage) error
	// OpenAI returns the partner's tools for providers that take them.
	OpenAI(partner string) []tools.OpenAITool
}

// Options are the Converser's optional collaborators.
type Options struct {
	// Tools checks proposed inputs and offers tools; nil checks and offers
	// nothing.
	Tools Tools
	// Registerer receives vera_actions_contract_violations_total; nil
	// registers nothing.
	Registerer prometheus.Registerer
	// Logger; nil discards.
	Logger *slog.Logger
	// Clock stamps action expiry; nil is the wall clock.
	Clock clock.Clock
}

// Converser implements session.Converser on the model router. Safe for
// concurrent use.
type Converser struct {
	r          *router.Router
	tools      Tools
	log        *slog.Logger
	clock      clock.Clock
	violations *prometheus.CounterVec
	// streamSafe: no model of the converse slot has a safety channel, so
	// the engine's assessment is known to be empty before the first delta.
	streamSafe bool

	mu      sync.Mutex // mu guards threads, order, origins and originOrder
	threads map[string]*router.Thread
	order   []string
	// origins are the VERA engine models that proposed live actions, by
	// action id. Bounded FIFO (actions expire in 24 h).
	origins     map[string]origin
	originOrder []string
}

// origin is the engine model that proposed an action, in a session.
type origin struct {
	sessionID, model string
}

var _ session.Converser = (*Converser)(nil)

// New returns a Converser on r, whose config cfg tells which provider each
// converse model has.
func New(r *router.Router, cfg router.Config, opts Options) (*Converser, error) {
	c := &Converser{r: r, tools: opts.Tools, log: opts.Logger, clock: clock.OrReal(opts.Clock), streamSafe: streamSafe(r, cfg),
		threads: map[string]*router.Thread{}, origins: map[string]origin{}, violations: newViolations()}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(c.violations); err != nil {
			return nil, fmt.Errorf("converse: metrics: %w", err)
		}
	}
	return c, nil
}

// streamSafe reports whether no model of r's converse slot is a VERA engine
// (or unknown to cfg).
func streamSafe(r *router.Router, cfg router.Config) bool {
	providers := map[string]string{}
	for _, m := range cfg.Resolved().Models {
		providers[m.Name] = m.Provider
	}
	for _, name := range r.Slots()[router.SlotConverse] {
		if p, ok := providers[name]; !ok || p == router.ProviderVERA {
			return false
		}
	}
	return true
}

// StreamsEarly reports whether replies stream before the engine's safety is
// known (no model of the converse slot can send any).
func (c *Converser) StreamsEarly() bool { return c.streamSafe }

func newViolations() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "actions",
		Name: "contract_violations_total", Help: "Proposed actions the gateway dropped: over the 3-per-reply limit, or input that fails its tool's schema."},
		[]string{"kind"})
}

func (c *Converser) thread(sessionID, endUser string) *router.Thread {
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

// Forget drops a closed session's engine thread (session.Deps.OnClosed).
func (c *Converser) Forget(sessionID string) {
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
func (c *Converser) Converse(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
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
		// A failed turn may still carry the engine's card (a reply whose
		// safety was valid but whose message was not): the session shows it.
		var nm *router.NoModelError
		if errors.As(err, &nm) {
			if a, ok := nm.Safety(); ok {
				return session.Reply{Safety: a}, err
			}
		}
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
func (c *Converser) offered(partner string) []router.Tool {
	if c.tools == nil {
		return nil
	}
	ts := c.tools.OpenAI(partner)
	out := make([]router.Tool, len(ts))
	for i, t := range ts {
		out[i] = router.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters}
	}
	return out
}

// remember records that model (a VERA engine) proposed acts in sessionID.
func (c *Converser) remember(sessionID, model string, acts []session.Action) {
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
		c.origins[a.ID] = origin{sessionID: sessionID, model: model}
	}
}

// ApproveUpstream tells the VERA engine that proposed action actionID in
// sessionID that the person approved it (Router.ApproveAction: retried,
// one Idempotency-Key per action). It reports false, doing nothing, for
// actions no engine proposed (tool calls, inbox admissions).
func (c *Converser) ApproveUpstream(ctx context.Context, sessionID, actionID string) (bool, error) {
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
// one of its tools. Actions without an expiry expire after ActionTTL.
func (c *Converser) actions(partner string, rep router.Reply) []session.Action {
	acts := rep.ProposedActions
	if len(acts) > MaxProposedActions {
		c.log.Warn("engine proposed too many actions; keeping the first three", "count", len(acts), "model", rep.Model)
		c.violations.WithLabelValues("too_many").Add(float64(len(acts) - MaxProposedActions))
		acts = acts[:MaxProposedActions]
	}
	var out []session.Action
	for _, a := range acts {
		if c.tools != nil {
			if err := c.tools.Validate(partner, a.Type, a.Input); err != nil && !errors.Is(err, tools.ErrUnknownTool) {
				// The error names the JSON path, never the input's values.
				c.log.Warn("proposed action dropped: input does not match its tool schema", "action", a.ID, "tool", a.Type, "err", err)
				c.violations.WithLabelValues("schema").Inc()
				continue
			}
		}
		exp := a.ExpiresAt
		if exp.IsZero() {
			exp = c.clock.Now().Add(ActionTTL)
		}
		out = append(out, session.Action{ID: a.ID, Type: a.Type, Title: a.Title, Summary: a.Summary, Input: a.Input, ExpiresAt: exp})
	}
	return out
}
