package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

// startAppEnv is startApp with an environment (model credentials).
func startAppEnv(t *testing.T, cfg fileConfig, env map[string]string) (*app, *httptest.Server) {
	t.Helper()
	a, err := newApp(cfg, envMap(env), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		a.close()
	})
	return a, srv
}

// nextEvent waits (hang guard: 20 s) for the first event on st that
// match accepts.
func nextEvent(t *testing.T, st *session.Stream, match func(typ string, ev map[string]any) bool) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		b, err := st.Next(ctx)
		if err != nil {
			t.Fatalf("no matching event: %v", err)
		}
		var ev map[string]any
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		if typ, _ := ev["type"].(string); match(typ, ev) {
			return ev
		}
	}
}

// field digs a string out of an event by path ("action.id").
func field(ev map[string]any, path string) string {
	var cur any = ev
	for _, k := range strings.Split(path, ".") {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	s, _ := cur.(string)
	return s
}

// hookLog is a webhook receiver on loopback recording event types and data.
type hookLog struct {
	mu     sync.Mutex
	events []webhookBody
}

type webhookBody struct {
	Type string              `json:"type"`
	Data webhook.ActionEvent `json:"data"`
}

func (h *hookLog) serve(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev webhookBody
		_ = json.NewDecoder(r.Body).Decode(&ev)
		h.mu.Lock()
		h.events = append(h.events, ev)
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.Close)
	return s
}

// wait returns the first event of type typ for action id (hang guard 20 s).
func (h *hookLog) wait(t *testing.T, typ, actionID string) webhook.ActionEvent {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		h.mu.Lock()
		for _, e := range h.events {
			if e.Type == typ && e.Data.ActionID == actionID {
				h.mu.Unlock()
				return e.Data
			}
		}
		h.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no %s webhook for %s", typ, actionID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *hookLog) types(actionID string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		if e.Data.ActionID == actionID {
			out = append(out, e.Type)
		}
	}
	return out
}

// fakeEngine is the VERA engine's Partner API on loopback: every message
// reply proposes one action (act_e1, act_e2, …); approve answers with
// approve(actionID, n), n counting that action's approve requests.
type fakeEngine struct {
	mu       sync.Mutex
	msgs     int
	approves map[string][]string // action id → Idempotency-Key per request
	approve  func(actionID string, n int) int
}

func (f *fakeEngine) handler(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer vera_sk_engine" || r.Header.Get("VERA-Version") == "" || r.Header.Get("Idempotency-Key") == "" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"type":"invalid_request","message":"headers","request_id":"r"}}`)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/v1/conversations":
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":"conv_1"}`)
	case p == "/v1/conversations/conv_1/messages":
		f.mu.Lock()
		f.msgs++
		n := f.msgs
		f.mu.Unlock()
		fmt.Fprintf(w, `{"id":"msg_%d","message":"I can text Sam for you.","safety":{"level":"none","display_required":false,"resources":[]},
"proposed_actions":[{"id":"act_e%d","type":"send_message","title":"Text Sam","summary":"Tell Sam you're late","input":{"to":"sam"}}]}`, n, n)
	case strings.HasPrefix(p, "/v1/actions/") && strings.HasSuffix(p, "/approve"):
		id := strings.TrimSuffix(strings.TrimPrefix(p, "/v1/actions/"), "/approve")
		f.mu.Lock()
		f.approves[id] = append(f.approves[id], r.Header.Get("Idempotency-Key"))
		n := len(f.approves[id])
		f.mu.Unlock()
		st := f.approve(id, n)
		w.WriteHeader(st)
		if st/100 == 2 {
			fmt.Fprintf(w, `{"id":%q,"status":"approved"}`, id)
		} else {
			fmt.Fprintf(w, `{"error":{"type":"engine_unavailable","message":"status %d","request_id":"r"}}`, st)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"type":"not_found","message":"no route","request_id":"r"}}`)
	}
}

func (f *fakeEngine) keys(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.approves[id]...)
}

func getAudit(t *testing.T, srv *httptest.Server, query string) audit.Page {
	t.Helper()
	resp, err := http.Get(srv.URL + "/v1/audit/decisions" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p audit.Page
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("audit: %d %s", resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEngineApprovalAuditedAndPublished: the person approves an action the
// VERA engine proposed. The gateway calls the engine's approve (a 503 is
// retried with the same Idempotency-Key), the partner's webhook gets
// action.approved and the audit log the decision. When the engine refuses
// an approval the session shows the action failed, the partner is not
// told it was approved, and the audit says so. A hang-up declines what is
// still pending, via hangup, audited and published too.
func TestEngineApprovalAuditedAndPublished(t *testing.T) {
	eng := &fakeEngine{approves: map[string][]string{}, approve: func(id string, n int) int {
		switch {
		case id == "act_e1" && n == 1:
			return http.StatusServiceUnavailable
		case id == "act_e2":
			return http.StatusConflict
		}
		return http.StatusOK
	}}
	es := httptest.NewServer(http.HandlerFunc(eng.handler))
	defer es.Close()
	hooks := &hookLog{}
	recv := hooks.serve(t)

	cfg := testFileConfig()
	cfg.Store.Path = filepath.Join(t.TempDir(), "vera.db")
	cfg.Webhooks = []webhook.Endpoint{{URL: recv.URL, Secret: "whsec_test_0123456789abcdef"}}
	cfg.Router.Models = append(cfg.Router.Models, routerModel("engine", "vera", es.URL+"/v1", "VERA_KEY"))
	cfg.Router.Slots = map[string][]string{"converse": {"engine"}}
	cfg.Router.Retry.InitialMs, cfg.Router.Retry.MaxIntervalMs = 5, 20
	a, srv := startAppEnv(t, cfg, map[string]string{"VERA_KEY": "vera_sk_engine"})

	s, st, err := a.sessions.Open(session.Owner{PartnerID: "dev", EndUserID: "u_7"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Detach()
	proposed := func() string {
		ev := nextEvent(t, st, func(typ string, _ map[string]any) bool { return typ == string(event.TypeActionProposed) })
		return field(ev, "action.id")
	}
	updated := func(id string) string {
		ev := nextEvent(t, st, func(typ string, ev map[string]any) bool {
			return typ == string(event.TypeActionUpdated) && field(ev, "action_id") == id
		})
		return field(ev, "status")
	}

	s.Submit("please tell Sam I'm running late")
	id1 := proposed()
	if err := s.Handle(context.Background(), &event.ActionApprove{ActionID: id1, Surface: "phone"}); err != nil {
		t.Fatal(err)
	}
	if got := updated(id1); got != "approved" {
		t.Fatalf("%s is %s, want approved", id1, got)
	}
	if k := eng.keys(id1); len(k) != 2 || k[0] != k[1] {
		t.Fatalf("engine approve keys %q: a 503 and its retry with one key", k)
	}
	if ev := hooks.wait(t, webhook.TypeActionApproved, id1); ev.Surface != "phone" || ev.Via != session.ViaTap || ev.EndUserID != "u_7" {
		t.Fatalf("action.approved %+v", ev)
	}

	s.Submit("and tell him to start without me")
	id2 := proposed()
	if err := s.Handle(context.Background(), &event.ActionApprove{ActionID: id2, Surface: "glasses"}); err != nil {
		t.Fatal(err)
	}
	if got := updated(id2); got != "failed" {
		t.Fatalf("%s is %s after the engine refused, want failed", id2, got)
	}
	resp, err := http.Post(srv.URL+"/v1/actions/"+id2+"/result", "application/json", strings.NewReader(`{"status":"succeeded"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("result of a refused approval = %d, want 404", resp.StatusCode)
	}

	s.Submit("actually, one more thing")
	id3 := proposed()
	if err := a.sessions.End(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if ev := hooks.wait(t, webhook.TypeActionDeclined, id3); ev.Via != session.ViaHangUp {
		t.Fatalf("hang-up decline %+v", ev)
	}
	if got := hooks.types(id2); len(got) != 0 {
		t.Fatalf("webhooks for the refused approval: %v", got)
	}
	if k := eng.keys(id3); len(k) != 0 {
		t.Fatalf("a hang-up reached the engine's approve: %q", k)
	}

	page := getAudit(t, srv, "?session_id="+s.ID())
	var got []string
	for _, r := range page.Data {
		got = append(got, fmt.Sprintf("%s:%s:%s:%s:%s", r.ActionID, r.Decision, r.Via, r.Surface, r.Status))
		if r.SessionID != s.ID() || r.EndUserID != "u_7" || r.ActionType != "send_message" || r.At.IsZero() {
			t.Errorf("record %+v", r)
		}
	}
	want := fmt.Sprintf("%s:approved:tap:phone:,%s:approved:tap:glasses:failed,%s:declined:hangup::", id1, id2, id3)
	if strings.Join(got, ",") != want {
		t.Fatalf("audit\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}
