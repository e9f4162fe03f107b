package actions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/inbox"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

const (
	// maxApproved bounds the approved actions kept for result reports;
	// actions expire after 24 h anyway.
	maxApproved = 100_000
	// pruneEvery is how often the decision audit is pruned.
	pruneEvery = time.Minute
)

// Publisher queues a signed webhook event for a partner
// (*webhook.Dispatcher).
type Publisher interface {
	Publish(partner string, ev webhook.Event) (int, error)
}

// Admissions is the inbox as decisions on its admission prompts reach it
// (*inbox.Inbox).
type Admissions interface {
	Admit(sessionID, actionID string) error
	Refuse(sessionID, actionID string) error
}

// Options are the Flow's collaborators. Sessions, Audit and Webhooks are
// required.
type Options struct {
	// Sessions finds an open session, until its OnClosed (hooks.Get): a
	// hang-up declines pending actions as the session closes.
	Sessions func(id string) (*session.Session, bool)
	Audit    *audit.Log
	Webhooks Publisher
	// Inbox receives decisions on admission prompts; nil: there are none.
	Inbox Admissions
	// Engine approves an action at the VERA engine that proposed it
	// (converse.Converser.ApproveUpstream), reporting false when no engine
	// did; nil approves nothing upstream.
	Engine func(ctx context.Context, sessionID, actionID string) (bool, error)
	// OnApproved, if set, learns of each action now awaiting its result
	// (the cluster records which node holds it, so the result report
	// reaches it from any node).
	OnApproved func(partner, actionID string)
	// Logger; nil discards.
	Logger *slog.Logger
	// Clock; nil is the wall clock.
	Clock clock.Clock
}

// Flow is the approve/decline flow and the result route.
type Flow struct {
	o     Options
	log   *slog.Logger
	clock clock.Clock

	mu sync.Mutex // mu guards approved
	// approved are actions the person approved, waiting for the partner's
	// result report, by action id.
	approved map[string]*approvedAction

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// approvedAction is an approved action awaiting its result.
type approvedAction struct {
	partner, sessionID, endUser, typ string
	reported                         bool
	at                               time.Time
}

var _ session.ActionHandler = (*Flow)(nil)

// New returns a Flow, prunes the audit once and starts pruning it every
// minute.
func New(o Options) (*Flow, error) {
	if o.Sessions == nil || o.Audit == nil || o.Webhooks == nil {
		return nil, errors.New("actions: sessions, an audit log and a webhook publisher are required")
	}
	f := &Flow{o: o, log: o.Logger, clock: clock.OrReal(o.Clock), approved: map[string]*approvedAction{}, stop: make(chan struct{})}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	f.prune()
	tick, ch := f.clock.NewTicker(pruneEvery)
	f.wg.Add(1)
	go f.pruneLoop(tick, ch)
	return f, nil
}

// Close stops pruning and waits for it. A nil Flow is closed.
func (f *Flow) Close() {
	if f == nil {
		return
	}
	f.closeOnce.Do(func() {
		close(f.stop)
		f.wg.Wait()
	})
}

func (f *Flow) pruneLoop(tick clock.Ticker, ch <-chan time.Time) {
	defer f.wg.Done()
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-ch:
			f.prune()
		}
	}
}

func (f *Flow) prune() {
	if err := f.o.Audit.Prune(); err != nil {
		f.log.Warn("audit prune failed", "err", err)
	}
}

// Approve implements session.ActionHandler. Inbox admissions go to the
// inbox; an engine's action is approved at the engine first, then recorded
// for its result and published as action.approved.
func (f *Flow) Approve(ctx context.Context, sessionID string, a session.Action, d session.Decision) error {
	owner, ok := f.owner(sessionID)
	if !ok {
		return fmt.Errorf("actions: session %s is gone", sessionID)
	}
	rec := audit.Record{ActionID: a.ID, ActionType: a.Type, SessionID: sessionID, EndUserID: owner.EndUserID,
		Decision: audit.DecisionApproved, Via: d.Via, Surface: d.Surface, At: d.At}
	if inbox.IsAdmission(a.ID) && f.o.Inbox != nil {
		f.record(owner.PartnerID, rec)
		return f.o.Inbox.Admit(sessionID, a.ID)
	}
	if f.o.Engine != nil {
		if _, err := f.o.Engine(ctx, sessionID, a.ID); err != nil {
			rec.Status = "failed"
			f.record(owner.PartnerID, rec)
			f.log.Warn("engine did not accept the approval", "session", sessionID, "action", a.ID, "err", err)
			return fmt.Errorf("actions: engine approve %s: %w", a.ID, err)
		}
	}
	f.record(owner.PartnerID, rec)
	f.mu.Lock()
	if len(f.approved) >= maxApproved {
		f.dropOldestApprovedLocked()
	}
	f.approved[a.ID] = &approvedAction{partner: owner.PartnerID, sessionID: sessionID, endUser: owner.EndUserID, typ: a.Type, at: f.clock.Now()}
	f.mu.Unlock()
	if f.o.OnApproved != nil {
		f.o.OnApproved(owner.PartnerID, a.ID)
	}
	return f.publish(owner, sessionID, a, webhook.TypeActionApproved, d)
}

// Decline implements session.ActionHandler: a decline, an expiry (Via
// expiry: action.expired) or a hang-up mid-prompt (a decline via hangup).
func (f *Flow) Decline(ctx context.Context, sessionID string, a session.Action, d session.Decision) error {
	owner, ok := f.owner(sessionID)
	if !ok {
		return fmt.Errorf("actions: session %s is gone", sessionID)
	}
	decision, typ := audit.DecisionDeclined, webhook.TypeActionDeclined
	if d.Via == session.ViaExpiry {
		decision, typ = audit.DecisionExpired, webhook.TypeActionExpired
	}
	f.record(owner.PartnerID, audit.Record{ActionID: a.ID, ActionType: a.Type, SessionID: sessionID, EndUserID: owner.EndUserID,
		Decision: decision, Via: d.Via, Surface: d.Surface, At: d.At})
	if inbox.IsAdmission(a.ID) && f.o.Inbox != nil {
		if !RefusesAdmission(d) {
			// Nobody said no: the messages stay held (durably) and are
			// asked about again when the session is back, until they expire.
			return nil
		}
		return f.o.Inbox.Refuse(sessionID, a.ID)
	}
	return f.publish(owner, sessionID, a, typ, d)
}

// RefusesAdmission reports whether a declined inbox admission was the
// person's own no (tap, key, speech, text). An expiry or a hang-up must not
// drop held messages.
func RefusesAdmission(d session.Decision) bool {
	return d.Via != session.ViaExpiry && d.Via != session.ViaHangUp
}

func (f *Flow) owner(sessionID string) (session.Owner, bool) {
	s, ok := f.o.Sessions(sessionID)
	if !ok {
		return session.Owner{}, false
	}
	return s.Owner(), true
}

// record audits one decision. A store failure is logged, not returned:
// the person's decision stands either way.
func (f *Flow) record(partner string, r audit.Record) {
	if _, err := f.o.Audit.Record(partner, r); err != nil {
		f.log.Error("decision not audited", "action", r.ActionID, "decision", r.Decision, "err", err)
	}
}

func (f *Flow) publish(o session.Owner, sessionID string, a session.Action, typ string, d session.Decision) error {
	ev, err := webhook.NewEvent(typ, d.At, webhook.ActionEvent{ActionID: a.ID, ActionType: a.Type,
		SessionID: sessionID, EndUserID: o.EndUserID, Surface: d.Surface, Via: d.Via, Reason: d.Reason})
	if err != nil {
		return err
	}
	_, err = f.o.Webhooks.Publish(o.PartnerID, ev)
	return err
}

func (f *Flow) dropOldestApprovedLocked() {
	var oldest string
	var at time.Time
	for id, a := range f.approved {
		if oldest == "" || a.at.Before(at) {
			oldest, at = id, a.at
		}
	}
	delete(f.approved, oldest)
}
