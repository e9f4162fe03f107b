package main

import (
	"context"
	"sync"

	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// maxThreads bounds the engine conversation ids kept for live sessions.
const maxThreads = 100_000

// converser adapts the model router to the session's Converser: it maps the
// turn to the converse slot, keeps one engine thread per session (so the
// VERA engine sees one conversation, not one per turn) and maps the reply.
type converser struct {
	r *router.Router
	// streamSafe: no model of the converse slot has a safety channel (only
	// the VERA engine does), so the engine's assessment is known to be
	// empty before the first delta and the session may stream the reply
	// instead of holding it until the end. With a VERA model in the slot
	// the reply is held, so the engine's resources are never late.
	streamSafe bool

	mu      sync.Mutex // mu guards threads and order
	threads map[string]*router.Thread
	order   []string
}

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
	return &converser{r: r, streamSafe: safe, threads: map[string]*router.Thread{}}
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
	for _, a := range rep.ProposedActions {
		out.ProposedActions = append(out.ProposedActions, session.Action{ID: a.ID, Type: a.Type, Title: a.Title,
			Summary: a.Summary, Input: a.Input, ExpiresAt: a.ExpiresAt})
	}
	return out, nil
}
