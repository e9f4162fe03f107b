package actions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/actions"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/boltstore"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/webhook"
	"github.com/veraneural/vera-gateway/glasses"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAdmissionOnlyRefusedByThePerson: held inbox messages are dropped only
// when the person declines their source; a hang-up (every session of a
// draining gateway) or an expiry keeps them for the next time.
func TestAdmissionOnlyRefusedByThePerson(t *testing.T) {
	for _, c := range []struct {
		via  string
		want bool
	}{
		{session.ViaTap, true}, {session.ViaKey, true}, {session.ViaSpeech, true}, {session.ViaText, true},
		{session.ViaHangUp, false}, {session.ViaExpiry, false},
	} {
		if got := actions.RefusesAdmission(session.Decision{Via: c.via}); got != c.want {
			t.Errorf("via %q: refuses = %v, want %v", c.via, got, c.want)
		}
	}
	(*actions.Flow)(nil).Close() // a failed start closes what it never built
}

// published is one webhook event the flow queued.
type published struct {
	partner string
	ev      webhook.Event
}

// rig records published events and knows the open sessions (from
// OnOpened to OnClosed, as gateway/hooks does).
type rig struct {
	t        *testing.T
	clk      *clocktest.Clock
	mgr      *session.Manager
	flow     *actions.Flow
	srv      *gateway.Server
	mu       sync.Mutex
	open     map[string]*session.Session
	events   []published
	engineOK func(actionID string) error
	engine   []string
}

func (r *rig) Publish(partner string, ev webhook.Event) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, published{partner, ev})
	return 1, nil
}

func (r *rig) lookup(id string) (*session.Session, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.open[id]
	return s, ok
}

// engine stands in for converse.Converser.ApproveUpstream: actions whose
// id starts with act_e are the engine's.
func (r *rig) approveUpstream(_ context.Context, sessionID, actionID string) (bool, error) {
	if !strings.HasPrefix(actionID, "act_e") {
		return false, nil
	}
	r.mu.Lock()
	r.engine = append(r.engine, actionID)
	r.mu.Unlock()
	return true, r.engineOK(actionID)
}

func (r *rig) types(actionID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.events {
		if ae, ok := p.ev.Data.(webhook.ActionEvent); ok && ae.ActionID == actionID {
			out = append(out, p.ev.Type)
		}
	}
	return out
}

func (r *rig) event(typ, actionID string) webhook.ActionEvent {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.events {
		if ae, ok := p.ev.Data.(webhook.ActionEvent); ok && p.ev.Type == typ && ae.ActionID == actionID {
			return ae
		}
	}
	r.t.Fatalf("no %s event for %s: %+v", typ, actionID, r.events)
	return webhook.ActionEvent{}
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{t: t, clk: clocktest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)), open: map[string]*session.Session{},
		engineOK: func(string) error { return nil }}
	db, err := boltstore.Open(filepath.Join(t.TempDir(), "vera.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	st, err := audit.NewBoltStore(db)
	if err != nil {
		t.Fatal(err)
	}
	log, err := audit.New(audit.DefaultConfig(), st, audit.Options{Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	if r.flow, err = actions.New(actions.Options{Sessions: r.lookup, Audit: log, Webhooks: r, Engine: r.approveUpstream, Clock: r.clk}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.flow.Close)
	local, err := session.NewLocalSafety("US")
	if err != nil {
		t.Fatal(err)
	}
	r.mgr, err = session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo{}, Safety: local, Layout: cardLayout(t),
		Actions: r.flow, Clock: r.clk,
		OnOpened: func(s *session.Session) { r.mu.Lock(); r.open[s.ID()] = s; r.mu.Unlock() },
		OnClosed: func(s *session.Session) { r.mu.Lock(); delete(r.open, s.ID()); r.mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.mgr.Close(context.Background()) })
	if r.srv, err = gateway.New(gateway.DefaultConfig(), gateway.Options{Clock: r.clk}); err != nil {
		t.Fatal(err)
	}
	r.srv.Mount(r.flow.Route())
	r.srv.Mount(log.Route())
	return r
}

type echo struct{}

func (echo) Converse(_ context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	onDelta("You said: " + req.Text)
	return session.Reply{Message: "You said: " + req.Text}, nil
}

func (r *rig) openSession(partner, endUser string) (*session.Session, *session.Stream) {
	r.t.Helper()
	s, st, err := r.mgr.Open(session.Owner{PartnerID: partner, EndUserID: endUser}, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(st.Detach)
	return s, st
}

// do serves one request from the dev-mode partner ("dev", loopback).
func (r *rig) do(method, path, body string) (int, string) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Host = "localhost" // dev mode serves loopback Host values only
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	r.srv.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func (r *rig) result(id, body string) int {
	code, _ := r.do(http.MethodPost, "/v1/actions/"+id+"/result", body)
	return code
}

func (r *rig) audit(query string) audit.Page {
	r.t.Helper()
	code, body := r.do(http.MethodGet, "/v1/audit/decisions"+query, "")
	var p audit.Page
	if err := json.Unmarshal([]byte(body), &p); code != 200 || err != nil {
		r.t.Fatalf("audit: %d %s", code, body)
	}
	return p
}

// updated waits (hang guard: 10 s) for action.updated of id on st and
// returns its status.
func updated(t *testing.T, st *session.Stream, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		b, err := st.Next(ctx)
		if err != nil {
			t.Fatalf("no action.updated for %s: %v", id, err)
		}
		var ev struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Status   string `json:"status"`
		}
		if json.Unmarshal(b, &ev) == nil && ev.Type == string(event.TypeActionUpdated) && ev.ActionID == id {
			return ev.Status
		}
	}
}

// TestApprovedThenResult: an explicit approve reaches the partner's
// webhooks; the partner's result report updates the session once, is
// audited and published; bad reports are refused.
func TestApprovedThenResult(t *testing.T) {
	r := newRig(t)
	s, st := r.openSession(gateway.DevPartnerID, "u_7")
	s.Propose("", session.Action{ID: "act_1", Type: "send_message", Title: "Send a text", ExpiresAt: r.clk.Now().Add(24 * time.Hour)})
	if c := r.result("act_1", `{"status":"succeeded"}`); c != 404 {
		t.Fatalf("result before approval = %d, want 404", c)
	}
	if err := s.Handle(context.Background(), &event.ActionApprove{ActionID: "act_1", Surface: "browser"}); err != nil {
		t.Fatal(err)
	}
	if got := updated(t, st, "act_1"); got != "approved" {
		t.Fatalf("act_1 is %s", got)
	}
	if ev := r.event(webhook.TypeActionApproved, "act_1"); ev.Surface != "browser" || ev.Via != session.ViaTap || ev.EndUserID != "u_7" {
		t.Fatalf("action.approved %+v", ev)
	}
	if c := r.result("act_1", `{"status":"done"}`); c != 400 {
		t.Fatalf("bad status = %d, want 400", c)
	}
	if c := r.result("act_1", `{"status":"succeeded","result":{"note":"secret text"}}`); c != 200 {
		t.Fatalf("result = %d", c)
	}
	if c := r.result("act_1", `{"status":"failed"}`); c != 409 {
		t.Fatalf("second result = %d, want 409", c)
	}
	if got := updated(t, st, "act_1"); got != "succeeded" {
		t.Fatalf("after the result act_1 is %s", got)
	}
	if ev := r.event(webhook.TypeActionResult, "act_1"); ev.Status != "succeeded" || string(ev.Result) != `{"note":"secret text"}` {
		t.Fatalf("action.result %+v", ev)
	}
	page := r.audit("")
	var got []string
	for _, rec := range page.Data {
		got = append(got, rec.ActionID+":"+rec.Decision+":"+rec.Via+":"+rec.Status)
	}
	if want := "act_1:approved:tap:,act_1:result:partner:succeeded"; strings.Join(got, ",") != want {
		t.Fatalf("audit %s, want %s", strings.Join(got, ","), want)
	}
	raw, _ := json.Marshal(page)
	for _, leak := range []string{"secret text", "Send a text"} {
		if strings.Contains(string(raw), leak) {
			t.Fatalf("audit holds text %q: %s", leak, raw)
		}
	}
}

// TestEngineRefusalExpiryAndHangUp: an action the engine refuses to
// approve shows failed, is audited so, gets no webhook and no result; an
// expiry is action.expired (never declined); a hang-up declines what is
// still pending, via hangup. Another partner's records and actions stay
// out of the caller's reach.
func TestEngineRefusalExpiryAndHangUp(t *testing.T) {
	r := newRig(t)
	r.engineOK = func(id string) error {
		if id == "act_e2" {
			return errors.New("engine: 409 conflict")
		}
		return nil
	}
	s, st := r.openSession(gateway.DevPartnerID, "u_8")
	exp := r.clk.Now().Add(time.Hour)
	s.Propose("", session.Action{ID: "act_e1", Type: "send_message", Title: "Text Sam", ExpiresAt: exp},
		session.Action{ID: "act_e2", Type: "send_message", Title: "Text Kim", ExpiresAt: exp},
		session.Action{ID: "act_x1", Type: "book_slot", Title: "Book 9am", ExpiresAt: r.clk.Now().Add(time.Minute)})
	if err := s.Handle(context.Background(), &event.ActionApprove{ActionID: "act_e2", Surface: "glasses"}); err != nil {
		t.Fatal(err)
	}
	if got := updated(t, st, "act_e2"); got != "failed" {
		t.Fatalf("act_e2 is %s after the engine refused, want failed", got)
	}
	if c := r.result("act_e2", `{"status":"succeeded"}`); c != 404 {
		t.Fatalf("result of a refused approval = %d, want 404", c)
	}
	r.clk.Advance(time.Minute) // act_x1 expires
	if ev := r.event(webhook.TypeActionExpired, "act_x1"); ev.Via != session.ViaExpiry || ev.ActionType != "book_slot" {
		t.Fatalf("action.expired %+v", ev)
	}
	if err := r.mgr.End(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if ev := r.event(webhook.TypeActionDeclined, "act_e1"); ev.Via != session.ViaHangUp {
		t.Fatalf("hang-up decline %+v", ev)
	}
	if got := r.types("act_e2"); len(got) != 0 {
		t.Fatalf("webhooks for the refused approval: %v", got)
	}
	if fmt.Sprint(r.engine) != "[act_e2]" {
		t.Fatalf("engine approvals %v: a hang-up or expiry must never reach it", r.engine)
	}
	other, _ := r.openSession("other", "u_9")
	other.Propose("", session.Action{ID: "act_o1", Type: "t", ExpiresAt: exp})
	if err := other.Handle(context.Background(), &event.ActionApprove{ActionID: "act_o1", Surface: "phone"}); err != nil {
		t.Fatal(err)
	}
	if c := r.result("act_o1", `{"status":"succeeded"}`); c != 404 {
		t.Fatalf("another partner's result = %d, want 404", c)
	}
	var got []string
	for _, rec := range r.audit("").Data {
		got = append(got, fmt.Sprintf("%s:%s:%s:%s:%s", rec.ActionID, rec.Decision, rec.Via, rec.Surface, rec.Status))
		if rec.SessionID != s.ID() || rec.EndUserID != "u_8" || rec.At.IsZero() {
			t.Errorf("record %+v", rec)
		}
	}
	want := "act_e2:approved:tap:glasses:failed,act_x1:expired:expiry::,act_e1:declined:hangup::"
	if strings.Join(got, ",") != want {
		t.Fatalf("audit\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}

// cardLayout is the glasses engine the test sessions lay cards out with
// (with its plain fallback).
func cardLayout(t testing.TB) *glasses.Engine {
	t.Helper()
	e, err := glasses.New(glasses.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
