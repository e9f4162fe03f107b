package hooks

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/inbox"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/titles"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

// expireEvery is how often held inbox messages past their hold are dropped.
const expireEvery = time.Minute

// Turns reports finished turns to the partner's webhooks
// (*webhook.TurnReporter).
type Turns interface {
	Finished(partner string, t webhook.TurnFinished) error
	Forget(sessionID string)
}

// Namer names a session from the person's first message, off the turn path
// (*titles.Titler).
type Namer interface {
	Name(s titles.Session, prompt string)
}

// Options are the hooks' collaborators. InboxStore and Turns are required.
type Options struct {
	Inbox      inbox.Config
	InboxStore inbox.Store
	Turns      Turns
	// Titles names sessions after their first turn; nil names none.
	Titles Namer
	// Logger; nil discards.
	Logger *slog.Logger
	// Clock paces the inbox's expiry and stamps its messages; nil is the
	// wall clock.
	Clock clock.Clock
}

// Hooks follows sessions for the inbox, turn webhooks and titles. Its
// methods are safe for concurrent use.
type Hooks struct {
	log   *slog.Logger
	turns Turns
	names Namer
	inbox *inbox.Inbox

	mu sync.Mutex // mu guards open, spawned and replied
	// open are the sessions from OnOpened to OnClosed, by id.
	open map[string]*session.Session
	// spawned sessions are in a turn the inbox started.
	spawned map[string]bool
	// replied sessions finished a turn already: only the first turn of a
	// session is named.
	replied map[string]bool

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New builds the hooks and the inbox they feed, and starts the expiry loop.
func New(opts Options) (*Hooks, error) {
	if opts.InboxStore == nil || opts.Turns == nil {
		return nil, errors.New("hooks: an inbox store and a turn reporter are required")
	}
	h := &Hooks{log: opts.Logger, turns: opts.Turns, names: opts.Titles, open: map[string]*session.Session{},
		spawned: map[string]bool{}, replied: map[string]bool{}, stop: make(chan struct{})}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	clk := clock.OrReal(opts.Clock)
	var err error
	if h.inbox, err = inbox.New(opts.Inbox, opts.InboxStore, inbox.Options{
		Lookup: h.partner, Deliver: h.deliver, Ask: h.ask, Logger: h.log, Clock: clk,
	}); err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	tick, ch := clk.NewTicker(expireEvery)
	h.wg.Add(1)
	go h.expireLoop(tick, ch)
	return h, nil
}

// Inbox is the session inbox the hooks feed (its route, admissions).
func (h *Hooks) Inbox() *inbox.Inbox { return h.inbox }

// Get returns the open session id.
func (h *Hooks) Get(id string) (*session.Session, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.open[id]
	return s, ok
}

// Close stops the expiry loop and waits for it. A nil Hooks is closed.
func (h *Hooks) Close() {
	if h == nil {
		return
	}
	h.closeOnce.Do(func() {
		close(h.stop)
		h.wg.Wait()
	})
}

func (h *Hooks) expireLoop(tick clock.Ticker, ch <-chan time.Time) {
	defer h.wg.Done()
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-ch:
			h.inbox.Expire()
		}
	}
}

// Opened is session.Deps.OnOpened: the session is open (or resumed), and
// the inbox may deliver what it holds for it.
func (h *Hooks) Opened(s *session.Session) {
	h.mu.Lock()
	h.open[s.ID()] = s
	h.mu.Unlock()
	h.inbox.SessionReady(s.ID())
}

// Closed is session.Deps.OnClosed.
func (h *Hooks) Closed(s *session.Session) {
	h.inbox.SessionClosed(s.ID())
	h.turns.Forget(s.ID())
	h.mu.Lock()
	delete(h.open, s.ID())
	delete(h.spawned, s.ID())
	delete(h.replied, s.ID())
	h.mu.Unlock()
}

// partner is the inbox's Lookup: the owner of an open session.
func (h *Hooks) partner(id string) (string, bool) {
	s, ok := h.Get(id)
	if !ok {
		return "", false
	}
	return s.Owner().PartnerID, true
}

// deliver starts a spawned turn with an inbox message; the inbox calls it
// only between turns.
func (h *Hooks) deliver(id, text, source string) error {
	s, ok := h.Get(id)
	if !ok {
		return fmt.Errorf("hooks: session %s is gone", id)
	}
	h.mu.Lock()
	h.spawned[id] = true
	h.mu.Unlock()
	s.Submit(text)
	return nil
}

// ask offers an admission prompt as an action on every surface.
func (h *Hooks) ask(a inbox.Admission) {
	if s, ok := h.Get(a.SessionID); ok {
		s.Propose("", session.Action{ID: a.ActionID, Type: "inbox.admit", Title: a.Title(), Summary: a.Summary()})
	}
}

var _ session.TurnObserver = (*Hooks)(nil)

// SafetyCard implements session.TurnObserver; cards need nothing here.
func (h *Hooks) SafetyCard(*session.Session, event.SafetyCard) {}

// ReplyDelta implements session.TurnObserver; deltas need nothing here.
func (h *Hooks) ReplyDelta(*session.Session, string, string) {}

// ReplyDone implements session.TurnObserver: the inbox may deliver its
// next message, the partner's webhooks get turn_finished, and the first
// turn the person started names the session.
func (h *Hooks) ReplyDone(s *session.Session, turnID, text string) {
	h.inbox.TurnFinished(s.ID())
	h.mu.Lock()
	spawned := h.spawned[s.ID()]
	delete(h.spawned, s.ID())
	first := !h.replied[s.ID()]
	h.replied[s.ID()] = true
	h.mu.Unlock()
	prompt := ""
	if !spawned {
		prompt = lastUserText(s.History())
	}
	o := s.Owner()
	if err := h.turns.Finished(o.PartnerID, webhook.TurnFinished{SessionID: s.ID(), EndUserID: o.EndUserID,
		Spawned: spawned, Outcome: webhook.OutcomeCompleted, Prompt: prompt, Reply: text}); err != nil {
		h.log.Warn("turn_finished not queued", "session", s.ID(), "turn", turnID, "err", err)
	}
	if first && !spawned && h.names != nil && prompt != "" {
		h.names.Name(s, prompt)
	}
}

func lastUserText(h []session.Message) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == "user" {
			return h[i].Text
		}
	}
	return ""
}
