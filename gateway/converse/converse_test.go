package converse

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/tools"
	"github.com/veraneural/vera-gateway/safety"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// schemaTools knows one tool, send_message, whose input needs "to".
type schemaTools struct{}

func (schemaTools) Validate(partner, name string, input json.RawMessage) error {
	if name != "send_message" {
		return tools.ErrUnknownTool
	}
	if !strings.Contains(string(input), `"to"`) {
		return fmt.Errorf("input/to: missing: %w", tools.ErrInvalid)
	}
	return nil
}

func (schemaTools) OpenAI(string) []tools.OpenAITool { return nil }

// TestActionsContract: at most three actions per reply, inputs that fail
// their tool's schema never reach the person, unknown tools (engine
// actions) pass, and every action expires: ActionTTL from now unless the
// engine set its own expiry.
func TestActionsContract(t *testing.T) {
	clk := clocktest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	reg := prometheus.NewRegistry()
	c := &Converser{tools: schemaTools{}, log: discard(), clock: clk, violations: newViolations()}
	reg.MustRegister(c.violations)
	own := clk.Now().Add(time.Hour)
	rep := router.Reply{ProposedActions: []router.ProposedAction{
		{ID: "a1", Type: "send_message", Input: json.RawMessage(`{"to":"u_1"}`)},
		{ID: "a2", Type: "send_message", Input: json.RawMessage(`{}`)},
		{ID: "a3", Type: "book_slot", ExpiresAt: own},
		{ID: "a4", Type: "book_slot"},
	}}
	got := c.actions("p", rep)
	var ids []string
	for _, a := range got {
		ids = append(ids, a.ID)
	}
	if strings.Join(ids, ",") != "a1,a3" {
		t.Fatalf("kept %v, want a1,a3 (a4 over the limit, a2 fails its schema)", ids)
	}
	if !got[0].ExpiresAt.Equal(clk.Now().Add(ActionTTL)) || !got[1].ExpiresAt.Equal(own) {
		t.Fatalf("expiries %v, %v", got[0].ExpiresAt, got[1].ExpiresAt)
	}
	for kind, want := range map[string]float64{"too_many": 1, "schema": 1} {
		if v := counter(t, c.violations.WithLabelValues(kind)); v != want {
			t.Errorf("violations{kind=%q} = %v, want %v", kind, v, want)
		}
	}
}

// TestStreamsOnlyWithoutEngineSafety: replies stream early only when no
// model of the converse slot can send engine safety resources.
func TestStreamsOnlyWithoutEngineSafety(t *testing.T) {
	cfg := router.DefaultConfig()
	if c := newConverser(t, cfg, nil); !c.StreamsEarly() {
		t.Error("the embedded companion slot should stream")
	}
	cfg.Models = append(cfg.Models, engineModel("https://api.example.invalid/v1"))
	cfg.Slots = map[string][]string{router.SlotConverse: {"engine", "embedded-companion"}}
	if c := newConverser(t, cfg, map[string]string{"VERA_KEY": "vera_sk_engine"}); c.StreamsEarly() {
		t.Error("a VERA engine in the slot must hold replies until its safety is known")
	}
}

// TestEngineThreadAndApproval: the turns of one session share one engine
// conversation; an action the engine proposed is approved at that engine
// once, from that session only; Forget drops the session's thread.
func TestEngineThreadAndApproval(t *testing.T) {
	eng := &fakeEngine{}
	es := httptest.NewServer(http.HandlerFunc(eng.serve))
	defer es.Close()
	cfg := router.DefaultConfig()
	cfg.Models = append(cfg.Models, engineModel(es.URL+"/v1"))
	cfg.Slots = map[string][]string{router.SlotConverse: {"engine"}}
	c := newConverser(t, cfg, map[string]string{"VERA_KEY": "vera_sk_engine"})

	ctx := context.Background()
	turn := func(sessionID, text string) session.Reply {
		t.Helper()
		rep, err := c.Converse(ctx, session.ConverseRequest{SessionID: sessionID, PartnerID: "p", Text: text,
			SafetyFinal: func(safety.Assessment) { t.Error("an engine reply must not stream before its safety") }}, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	r1 := turn("s1", "text Sam")
	turn("s1", "and Kim")
	if got := eng.count("conversations"); got != 1 {
		t.Fatalf("%d engine conversations for one session, want 1", got)
	}
	if len(r1.ProposedActions) != 1 || r1.Provider != router.ProviderVERA {
		t.Fatalf("reply %+v", r1)
	}
	id := r1.ProposedActions[0].ID
	if ok, err := c.ApproveUpstream(ctx, "s2", id); ok || err != nil {
		t.Fatalf("approve from another session = %v %v", ok, err)
	}
	if ok, err := c.ApproveUpstream(ctx, "s1", "tool_call_1"); ok || err != nil {
		t.Fatalf("approve of an action no engine proposed = %v %v", ok, err)
	}
	if ok, err := c.ApproveUpstream(ctx, "s1", id); !ok || err != nil {
		t.Fatalf("approve = %v %v", ok, err)
	}
	if ok, _ := c.ApproveUpstream(ctx, "s1", id); ok || eng.count("approve") != 1 {
		t.Fatalf("a second approval reached the engine (%d approves)", eng.count("approve"))
	}
	c.Forget("s1")
	turn("s1", "new thread")
	if got := eng.count("conversations"); got != 2 {
		t.Fatalf("%d engine conversations after Forget, want 2", got)
	}
}

func newConverser(t *testing.T, cfg router.Config, env map[string]string) *Converser {
	t.Helper()
	r, err := router.New(cfg, func(k string) string { return env[k] }, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	c, err := New(r, cfg, Options{Registerer: prometheus.NewRegistry(), Tools: schemaTools{}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func engineModel(baseURL string) router.ModelConfig {
	return router.ModelConfig{Name: "engine", Provider: router.ProviderVERA, BaseURL: baseURL, APIKeyEnv: "VERA_KEY", Model: "m",
		ContextWindow: 8192, TTFTMs: 5000, TimeoutMs: 20000}
}

// fakeEngine is the VERA engine's Partner API on loopback: every message
// reply proposes one action (act_e1, act_e2, …).
type fakeEngine struct {
	mu    sync.Mutex
	calls map[string]int
}

func (f *fakeEngine) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[kind]
}

func (f *fakeEngine) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer vera_sk_engine" {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"type":"authentication_error","message":"key","request_id":"r"}}`)
		return
	}
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	defer f.mu.Unlock()
	p := r.URL.Path
	switch {
	case p == "/v1/conversations":
		f.calls["conversations"]++
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"conv_%d"}`, f.calls["conversations"])
	case strings.HasPrefix(p, "/v1/conversations/") && strings.HasSuffix(p, "/messages"):
		f.calls["messages"]++
		n := f.calls["messages"]
		fmt.Fprintf(w, `{"id":"msg_%d","message":"I can text Sam for you.","safety":{"level":"none","display_required":false,"resources":[]},
"proposed_actions":[{"id":"act_e%d","type":"send_message","title":"Text Sam","input":{"to":"sam"}}]}`, n, n)
	case strings.HasPrefix(p, "/v1/actions/") && strings.HasSuffix(p, "/approve"):
		f.calls["approve"]++
		fmt.Fprint(w, `{"status":"approved"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"type":"not_found","message":"no route","request_id":"r"}}`)
	}
}

func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
