package hooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/hooks"
	"github.com/veraneural/vera-gateway/gateway/inbox"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/titles"
	"github.com/veraneural/vera-gateway/gateway/webhook"
	"github.com/veraneural/vera-gateway/glasses"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// turns records every turn_finished, in order.
type turns struct{ got chan webhook.TurnFinished }

func (t turns) Finished(partner string, f webhook.TurnFinished) error {
	t.got <- f
	return nil
}

func (turns) Forget(string) {}

// namer records every naming request.
type namer struct{ got chan string }

func (n namer) Name(s titles.Session, prompt string) { n.got <- s.ID() + ": " + prompt }

type echo struct{}

func (echo) Converse(_ context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	onDelta("You said: " + req.Text)
	return session.Reply{Message: "You said: " + req.Text}, nil
}

type world struct {
	clk   *clocktest.Clock
	hooks *hooks.Hooks
	mgr   *session.Manager
	srv   *gateway.Server
	turns turns
	names namer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{clk: clocktest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)),
		turns: turns{got: make(chan webhook.TurnFinished, 8)}, names: namer{got: make(chan string, 8)}}
	store, err := inbox.OpenBoltStore(filepath.Join(t.TempDir(), "inbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if w.hooks, err = hooks.New(hooks.Options{Inbox: inbox.DefaultConfig(), InboxStore: store, Turns: w.turns, Titles: w.names, Clock: w.clk}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.hooks.Close)
	local, err := session.NewLocalSafety("US")
	if err != nil {
		t.Fatal(err)
	}
	if w.mgr, err = session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo{}, Safety: local, Layout: cardLayout(t),
		Observer: w.hooks, OnOpened: w.hooks.Opened, OnClosed: w.hooks.Closed}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.mgr.Close(context.Background()) })
	if w.srv, err = gateway.New(gateway.DefaultConfig(), gateway.Options{}); err != nil {
		t.Fatal(err)
	}
	w.srv.Mount(w.hooks.Inbox().Route())
	return w
}

func (w *world) post(t *testing.T, id, body string) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/sessions/"+id+"/messages", strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000" // dev mode: partner "dev"
	req.Host = "localhost"             // dev mode serves loopback Host values only
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	w.srv.Handler().ServeHTTP(rec, req)
	return rec.Code
}

// next waits for the next turn_finished (hang guard: 10 s).
func (w *world) next(t *testing.T) webhook.TurnFinished {
	t.Helper()
	select {
	case f := <-w.turns.got:
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("no turn_finished")
		return webhook.TurnFinished{}
	}
}

// TestFirstPersonTurnNamesTheSession: every finished turn reaches the
// partner's webhooks with the person's prompt; only the first names the
// session.
func TestFirstPersonTurnNamesTheSession(t *testing.T) {
	w := newWorld(t)
	s, st, err := w.mgr.Open(session.Owner{PartnerID: gateway.DevPartnerID, EndUserID: "u_1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Detach()
	if got, ok := w.hooks.Get(s.ID()); !ok || got != s {
		t.Fatal("an open session is not found")
	}
	s.Submit("I feel anxious about my exam tomorrow")
	if f := w.next(t); f.Spawned || f.Prompt != "I feel anxious about my exam tomorrow" || f.SessionID != s.ID() || f.EndUserID != "u_1" ||
		f.Outcome != webhook.OutcomeCompleted || !strings.Contains(f.Reply, "exam") {
		t.Fatalf("turn_finished %+v", f)
	}
	s.Submit("and my driving test")
	if f := w.next(t); f.Prompt != "and my driving test" {
		t.Fatalf("second turn_finished %+v", f)
	}
	// Ending the session joins its turn goroutine, where the hooks run.
	if err := w.mgr.End(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := drain(w.names.got); len(got) != 1 || got[0] != s.ID()+": I feel anxious about my exam tomorrow" {
		t.Fatalf("named %q, want the first turn only", got)
	}
	if _, ok := w.hooks.Get(s.ID()); ok {
		t.Fatal("a closed session is still found")
	}
}

// TestSpawnedFirstTurnIsNotNamed: as in vera.titles, only a first turn the
// person started names the session: after an inbox message opened the
// conversation, later turns do not name it either. The spawned turn's
// turn_finished carries no prompt.
func TestSpawnedFirstTurnIsNotNamed(t *testing.T) {
	w := newWorld(t)
	s, st, err := w.mgr.Open(session.Owner{PartnerID: gateway.DevPartnerID, EndUserID: "u_1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Detach()
	if c := w.post(t, s.ID(), `{"text":"Your ride is here","source":"rides/dispatch"}`); c != 202 {
		t.Fatalf("inbox = %d", c)
	}
	if f := w.next(t); !f.Spawned || f.Prompt != "" || !strings.Contains(f.Reply, "Your ride is here") {
		t.Fatalf("spawned turn_finished %+v", f)
	}
	s.Submit("I feel anxious about my exam tomorrow")
	if f := w.next(t); f.Spawned || f.Prompt == "" {
		t.Fatalf("person's turn_finished %+v", f)
	}
	if err := w.mgr.End(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := drain(w.names.got); len(got) != 0 {
		t.Fatalf("named %q", got)
	}
	found := false
	for _, m := range s.History() {
		found = found || (m.Role == "user" && m.Text == "Your ride is here")
	}
	if !found {
		t.Fatalf("the transcript does not show the inbox message: %+v", s.History())
	}
}

// TestExpiryRunsOnTheClock: the inbox's expiry is a minute ticker on the
// injected clock, stopped by Close.
func TestExpiryRunsOnTheClock(t *testing.T) {
	w := newWorld(t)
	if a := w.clk.Armed(); len(a) != 1 || a[0].D != time.Minute {
		t.Fatalf("armed %+v, want the one-minute expiry ticker", a)
	}
	w.hooks.Close()
	(*hooks.Hooks)(nil).Close() // a failed start closes what it never built
	if n := w.clk.Pending(); n != 0 {
		t.Fatalf("%d timers armed after Close", n)
	}
}

func drain(ch chan string) []string {
	var out []string
	for {
		select {
		case s := <-ch:
			out = append(out, s)
		default:
			return out
		}
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
