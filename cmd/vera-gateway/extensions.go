package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/boltstore"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/inbox"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/tools"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

// storeConfig places the embedded database that keeps inbox messages and
// webhook deliveries across restarts.
type storeConfig struct {
	// Path of the bbolt file. Empty: a file in a temporary directory that is
	// removed at exit, so nothing survives a restart (fine for make run;
	// set a path in production).
	Path string `yaml:"path"`
}

// extensions are the partner-facing features around sessions: signed
// webhooks, tools, the session inbox and action decisions.
type extensions struct {
	log        *slog.Logger
	db         *bolt.DB
	tmpDir     string
	dispatcher *webhook.Dispatcher
	turns      *webhook.TurnReporter
	tools      *tools.Registry
	inbox      *inbox.Inbox
	audit      *audit.Log
	sessions   func() *session.Manager
	// engineApprove carries an approval to the VERA engine that proposed
	// the action (converser.approveUpstream); false: no engine did. Nil
	// approves nothing upstream.
	engineApprove func(ctx context.Context, sessionID, actionID string) (bool, error)
	// titles names sessions after their first turn; nil names none.
	titles *titler
	// setTitle is the sessions' setTitle (set, named, not_found).
	setTitle func(sessionID, title string) string

	mu sync.Mutex // mu guards owners, spawned, replied and approved
	// owners of the open sessions, by id, from OnOpened to OnClosed: a
	// hang-up declines pending actions after the manager forgot the
	// session, and those declines are still audited and published.
	owners  map[string]session.Owner
	spawned map[string]bool
	// replied are sessions that finished a turn already: only the first
	// turn of a session is named.
	replied map[string]bool
	// approved are actions the person approved, waiting for the partner's
	// result report, by action id.
	approved map[string]*approvedAction

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

func newExtensions(cfg fileConfig, reg prometheus.Registerer, log *slog.Logger, sessions func() *session.Manager) (_ *extensions, err error) {
	x := &extensions{log: log, sessions: sessions, owners: map[string]session.Owner{}, spawned: map[string]bool{}, replied: map[string]bool{},
		approved: map[string]*approvedAction{}, stop: make(chan struct{})}
	defer func() {
		if err != nil {
			x.close(context.Background())
		}
	}()
	path := cfg.Store.Path
	if path == "" {
		if x.tmpDir, err = os.MkdirTemp("", "vera-gateway-store"); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		path = filepath.Join(x.tmpDir, "vera.db")
		log.Warn("store.path is not set: inbox messages, webhook deliveries and the decision audit will not survive a restart")
	}
	if x.db, err = boltstore.Open(path); err != nil {
		return nil, fmt.Errorf("store.path: %w", err)
	}

	endpoints := map[string][]webhook.Endpoint{}
	for _, k := range cfg.Auth.Keys {
		if len(k.Webhooks) > 0 {
			endpoints[k.ID] = k.Webhooks
		}
	}
	if cfg.DevMode() && len(cfg.Webhooks) > 0 {
		endpoints[gateway.DevPartnerID] = cfg.Webhooks
	}
	wstore, err := webhook.NewBoltStore(x.db)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	if x.dispatcher, err = webhook.NewDispatcher(cfg.WebhookDelivery, wstore, webhook.Options{
		Endpoints: endpoints, Dev: cfg.DevMode(), Logger: log.With("pkg", "webhook"), Registerer: reg}); err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	x.turns = webhook.NewTurnReporter(x.dispatcher)

	if x.tools, err = tools.New(cfg.Tools, nil, nil); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}

	istore, err := inbox.NewBoltStore(x.db)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	if x.inbox, err = inbox.New(cfg.Inbox, istore, inbox.Options{
		Lookup: x.lookup, Deliver: x.deliver, Ask: x.ask, Logger: log.With("pkg", "inbox"),
	}); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	astore, err := audit.NewBoltStore(x.db)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if x.audit, err = audit.New(cfg.Audit, astore, audit.Options{Logger: log.With("pkg", "audit")}); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := x.audit.Prune(); err != nil {
		log.Warn("audit prune failed", "err", err)
	}
	x.wg.Add(1)
	go x.expireLoop()
	return x, nil
}

// routes are the extensions' HTTP endpoints.
func (x *extensions) routes() []gateway.Route {
	return append(x.tools.Routes(), x.inbox.Route(), x.audit.Route(),
		gateway.Route{Method: http.MethodPost, Path: "/v1/actions/{id}/result",
			Scope: gateway.ScopeActionsWrite, Idempotent: true, Handler: http.HandlerFunc(x.handleResult)},
		gateway.Route{Method: http.MethodPut, Path: "/v1/sessions/{id}/title",
			Scope: gateway.ScopeConversationsWrite, Handler: http.HandlerFunc(x.handleTitle)})
}

// approvedAction is an approved action awaiting its result.
type approvedAction struct {
	partner, sessionID, endUser, typ string
	reported                         bool
	at                               time.Time
}

// maxApproved bounds the approved actions kept for result reports; actions
// expire after 24 h anyway.
const maxApproved = 100_000

type resultBody struct {
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
}

// handleResult is POST /v1/actions/{id}/result: the partner reports what
// happened to an approved action. The session gets action.updated and the
// partner's webhooks action.result. Another partner's action is 404.
func (x *extensions) handleResult(w http.ResponseWriter, r *http.Request) {
	p, _ := gateway.PrincipalFrom(r.Context())
	id := mux.Vars(r)["id"]
	var b resultBody
	if err := gateway.DecodeJSON(r, &b); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	if b.Status != "succeeded" && b.Status != "failed" {
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "status must be succeeded or failed, not %q", b.Status))
		return
	}
	x.mu.Lock()
	a := x.approved[id]
	switch {
	case a == nil || a.partner != p.PartnerID:
		x.mu.Unlock()
		gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no approved action %q", id))
		return
	case a.reported:
		x.mu.Unlock()
		gateway.WriteError(w, r, gateway.Errorf(gateway.Conflict, "the result of action %q was already reported", id))
		return
	}
	a.reported = true
	act := *a
	x.mu.Unlock()
	x.record(act.partner, audit.Record{ActionID: id, ActionType: act.typ, SessionID: act.sessionID, EndUserID: act.endUser,
		Decision: audit.DecisionResult, Via: "partner", Status: b.Status})
	// The session shows the result and confirms it to the person (spoken
	// in a voice call, captioned and shown in chat).
	if s, ok := x.sessions().Get(act.sessionID); ok {
		if err := s.ReportResult(id, b.Status); err != nil && !errors.Is(err, session.ErrClosed) {
			x.log.Warn("action result not shown in the session", "session", act.sessionID, "action", id, "err", err)
		}
	}
	ev, err := webhook.NewEvent(webhook.TypeActionResult, time.Now(), webhook.ActionEvent{ActionID: id, ActionType: act.typ,
		SessionID: act.sessionID, EndUserID: act.endUser, Status: b.Status, Result: b.Result})
	if err == nil {
		_, err = x.dispatcher.Publish(act.partner, ev)
	}
	if err != nil {
		x.log.Warn("action.result webhook not queued", "action", id, "err", err)
	}
	gateway.WriteJSON(w, http.StatusOK, map[string]string{"action_id": id, "status": b.Status})
}

func (x *extensions) lookup(id string) (string, bool) {
	s, ok := x.sessions().Get(id)
	if !ok {
		return "", false
	}
	return s.Owner().PartnerID, true
}

// deliver starts a spawned turn with an inbox message; the inbox calls it
// only between turns.
func (x *extensions) deliver(id, text, source string) error {
	s, ok := x.sessions().Get(id)
	if !ok {
		return fmt.Errorf("inbox: session %s is gone", id)
	}
	x.mu.Lock()
	x.spawned[id] = true
	x.mu.Unlock()
	s.Submit(text)
	return nil
}

// ask offers an admission prompt as an action on every surface.
func (x *extensions) ask(a inbox.Admission) {
	s, ok := x.sessions().Get(a.SessionID)
	if !ok {
		return
	}
	s.Propose("", session.Action{ID: a.ActionID, Type: "inbox.admit", Title: a.Title(), Summary: a.Summary()})
}

func (x *extensions) expireLoop() {
	defer x.wg.Done()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-x.stop:
			return
		case <-t.C:
			x.inbox.Expire()
			if err := x.audit.Prune(); err != nil {
				x.log.Warn("audit prune failed", "err", err)
			}
		}
	}
}

// opened and closed follow sessions' lives for the inbox and the turn
// counts of turn_finished.
func (x *extensions) opened(s *session.Session) {
	x.mu.Lock()
	x.owners[s.ID()] = s.Owner()
	x.mu.Unlock()
	x.inbox.SessionReady(s.ID())
}

func (x *extensions) closed(s *session.Session) {
	x.inbox.SessionClosed(s.ID())
	x.turns.Forget(s.ID())
	x.mu.Lock()
	delete(x.owners, s.ID())
	delete(x.spawned, s.ID())
	delete(x.replied, s.ID())
	x.mu.Unlock()
}

// SafetyCard, ReplyDelta and ReplyDone make extensions a
// session.TurnObserver: a finished reply tells the inbox the session is
// free and the partner's webhooks that a turn finished.
func (x *extensions) SafetyCard(*session.Session, event.SafetyCard) {}

func (x *extensions) ReplyDelta(*session.Session, string, string) {}

func (x *extensions) ReplyDone(s *session.Session, turnID, text string) {
	x.inbox.TurnFinished(s.ID())
	x.mu.Lock()
	spawned := x.spawned[s.ID()]
	delete(x.spawned, s.ID())
	first := !x.replied[s.ID()]
	x.replied[s.ID()] = true
	x.mu.Unlock()
	prompt := ""
	if !spawned {
		h := s.History()
		for i := len(h) - 1; i >= 0; i-- {
			if h[i].Role == "user" {
				prompt = h[i].Text
				break
			}
		}
	}
	o := s.Owner()
	if err := x.turns.Finished(o.PartnerID, webhook.TurnFinished{SessionID: s.ID(), EndUserID: o.EndUserID,
		Spawned: spawned, Outcome: webhook.OutcomeCompleted, Prompt: prompt, Reply: text}); err != nil {
		x.log.Warn("turn_finished not queued", "session", s.ID(), "turn", turnID, "err", err)
	}
	// The extension API's vera.titles: the first turn, if the person
	// started it, names the session — off the turn path.
	if first && !spawned && x.titles != nil && prompt != "" {
		x.titles.name(s.ID(), prompt)
	}
}

// Approve and Decline make extensions the sessions' ActionHandler. Every
// decision is audited (ids, decision, via, surface, time; never text).
// Inbox admissions go to the inbox. An action the VERA engine proposed is
// approved at the engine first: if the engine does not accept it, the
// error makes the session show the action failed, and the partner is not
// told it was approved. Then the partner's webhooks get action.approved.
func (x *extensions) Approve(ctx context.Context, sessionID string, a session.Action, d session.Decision) error {
	owner, ok := x.owner(sessionID)
	if !ok {
		return fmt.Errorf("actions: session %s is gone", sessionID)
	}
	rec := audit.Record{ActionID: a.ID, ActionType: a.Type, SessionID: sessionID, EndUserID: owner.EndUserID,
		Decision: audit.DecisionApproved, Via: d.Via, Surface: d.Surface, At: d.At}
	if inbox.IsAdmission(a.ID) {
		x.record(owner.PartnerID, rec)
		return x.inbox.Admit(sessionID, a.ID)
	}
	if x.engineApprove != nil {
		if _, err := x.engineApprove(ctx, sessionID, a.ID); err != nil {
			rec.Status = "failed"
			x.record(owner.PartnerID, rec)
			x.log.Warn("engine did not accept the approval", "session", sessionID, "action", a.ID, "err", err)
			return fmt.Errorf("actions: engine approve %s: %w", a.ID, err)
		}
	}
	x.record(owner.PartnerID, rec)
	x.mu.Lock()
	if len(x.approved) >= maxApproved {
		x.dropOldestApprovedLocked()
	}
	x.approved[a.ID] = &approvedAction{partner: owner.PartnerID, sessionID: sessionID, endUser: owner.EndUserID, typ: a.Type, at: time.Now()}
	x.mu.Unlock()
	return x.publishAction(owner, sessionID, a, webhook.TypeActionApproved, d)
}

// Decline records a decline, an expiry (Via expiry: action.expired, never
// action.declined) or a hang-up mid-prompt (a decline via hangup).
func (x *extensions) Decline(ctx context.Context, sessionID string, a session.Action, d session.Decision) error {
	owner, ok := x.owner(sessionID)
	if !ok {
		return fmt.Errorf("actions: session %s is gone", sessionID)
	}
	decision, typ := audit.DecisionDeclined, webhook.TypeActionDeclined
	if d.Via == session.ViaExpiry {
		decision, typ = audit.DecisionExpired, webhook.TypeActionExpired
	}
	x.record(owner.PartnerID, audit.Record{ActionID: a.ID, ActionType: a.Type, SessionID: sessionID, EndUserID: owner.EndUserID,
		Decision: decision, Via: d.Via, Surface: d.Surface, At: d.At})
	if inbox.IsAdmission(a.ID) {
		if !refusesAdmission(d) {
			// Nobody said no: the messages stay held (durably) and are
			// asked about again when the session is back, until they expire.
			return nil
		}
		return x.inbox.Refuse(sessionID, a.ID)
	}
	return x.publishAction(owner, sessionID, a, typ, d)
}

// refusesAdmission reports whether a declined inbox admission was the
// person's own no (tap, key, speech, text). An expiry or a hang-up — and a
// draining gateway hangs every session up — must not drop held messages.
func refusesAdmission(d session.Decision) bool {
	return d.Via != session.ViaExpiry && d.Via != session.ViaHangUp
}

func (x *extensions) owner(sessionID string) (session.Owner, bool) {
	x.mu.Lock()
	o, ok := x.owners[sessionID]
	x.mu.Unlock()
	if ok {
		return o, true
	}
	s, ok := x.sessions().Get(sessionID)
	if !ok {
		return session.Owner{}, false
	}
	return s.Owner(), true
}

// record audits one decision. A store failure is logged, not returned:
// the person's decision stands either way.
func (x *extensions) record(partner string, r audit.Record) {
	if _, err := x.audit.Record(partner, r); err != nil {
		x.log.Error("decision not audited", "action", r.ActionID, "decision", r.Decision, "err", err)
	}
}

func (x *extensions) publishAction(o session.Owner, sessionID string, a session.Action, typ string, d session.Decision) error {
	ev, err := webhook.NewEvent(typ, d.At, webhook.ActionEvent{ActionID: a.ID, ActionType: a.Type,
		SessionID: sessionID, EndUserID: o.EndUserID, Surface: d.Surface, Via: d.Via, Reason: d.Reason})
	if err != nil {
		return err
	}
	_, err = x.dispatcher.Publish(o.PartnerID, ev)
	return err
}

func (x *extensions) dropOldestApprovedLocked() {
	var oldest string
	var at time.Time
	for id, a := range x.approved {
		if oldest == "" || a.at.Before(at) {
			oldest, at = id, a.at
		}
	}
	delete(x.approved, oldest)
}

// close stops the dispatcher before the database it writes to.
func (x *extensions) close(ctx context.Context) { x.closeOnce.Do(func() { x.doClose(ctx) }) }

func (x *extensions) doClose(ctx context.Context) {
	close(x.stop)
	x.wg.Wait()
	if x.titles != nil {
		x.titles.close()
	}
	var errs []error
	if x.dispatcher != nil {
		errs = append(errs, x.dispatcher.Close(ctx))
	}
	if x.db != nil {
		errs = append(errs, x.db.Close())
	}
	if x.tmpDir != "" {
		errs = append(errs, os.RemoveAll(x.tmpDir))
	}
	if err := errors.Join(errs...); err != nil {
		x.log.Warn("extensions close", "err", err)
	}
}
