package inbox_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/inbox"
)

const (
	keyA = "vera_sk_inbox_partner_a_0123456789"
	keyB = "vera_sk_inbox_partner_b_0123456789"
)

// world is a fake session layer: which sessions are open, who owns them,
// whether a turn runs, and what was delivered.
type world struct {
	mu        sync.Mutex
	owners    map[string]string
	busy      map[string]bool
	delivered []string
	asked     []inbox.Admission
	fail      error
	clock     *clocktest.Clock
}

func newWorld() *world {
	return &world{owners: map[string]string{"ses_a": "partner-a", "ses_b": "partner-b"}, busy: map[string]bool{},
		clock: clocktest.NewClock(time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC))}
}

func (w *world) options() inbox.Options {
	return inbox.Options{
		Lookup: func(id string) (string, bool) {
			w.mu.Lock()
			defer w.mu.Unlock()
			p, ok := w.owners[id]
			return p, ok
		},
		Deliver: func(id, text, source string) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.fail != nil {
				return w.fail
			}
			w.delivered = append(w.delivered, id+"|"+source+"|"+text)
			w.busy[id] = true
			return nil
		},
		Busy: func(id string) bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.busy[id]
		},
		Ask: func(a inbox.Admission) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.asked = append(w.asked, a)
		},
		Clock: w.clock,
	}
}

func (w *world) setBusy(id string, b bool) {
	w.mu.Lock()
	w.busy[id] = b
	w.mu.Unlock()
}

func (w *world) got() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.delivered...)
}

func (w *world) asks() []inbox.Admission {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]inbox.Admission(nil), w.asked...)
}

// finish ends the running turn as the session layer would.
func (w *world) finish(in *inbox.Inbox, id string) {
	w.setBusy(id, false)
	in.TurnFinished(id)
}

func openStore(t *testing.T, path string) *inbox.BoltStore {
	t.Helper()
	s, err := inbox.OpenBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newServer(t *testing.T, in *inbox.Inbox) *httptest.Server {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.Auth.Keys = []gateway.KeyConfig{
		{ID: "partner-a", Secret: keyA, Scopes: []string{gateway.ScopeConversationsWrite}},
		{ID: "partner-b", Secret: keyB, Scopes: []string{gateway.ScopeToolsWrite}},
	}
	cfg.Limits.RequestsPerMinute = 10_000
	s, err := gateway.New(cfg, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount(in.Route())
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, srv *httptest.Server, key, session, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/sessions/"+session+"/messages", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Error struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(b, &env); err != nil || env.Error.RequestID == "" {
			t.Fatalf("%d without the error envelope: %s", resp.StatusCode, b)
		}
		return resp.StatusCode, env.Error.Type, env.Error.Message
	}
	return resp.StatusCode, strings.TrimSpace(string(b)), ""
}

func msg(text, source string) string {
	b, _ := json.Marshal(map[string]string{"text": text, "source": source})
	return string(b)
}

func TestPostValidation(t *testing.T) {
	w := newWorld()
	store := openStore(t, filepath.Join(t.TempDir(), "inbox.db"))
	defer store.Close()
	in, err := inbox.New(inbox.DefaultConfig(), store, w.options())
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, in)
	w.setBusy("ses_a", true) // nothing is delivered during this test

	maxText := strings.Repeat("é", inbox.MaxTextBytes/2) // exactly 16 KiB
	cases := []struct {
		name, key, session, body string
		status                   int
		typ, want                string
	}{
		{"ok", keyA, "ses_a", msg("Your ride is here.", "acme.lookout"), 202, `{"outcome":"queued"}`, ""},
		{"16 KiB exactly", keyA, "ses_a", msg(maxText, "acme.lookout"), 202, `{"outcome":"queued"}`, ""},
		{"16 KiB + 1", keyA, "ses_a", msg(maxText+"x", "acme.lookout"), 400, "invalid_request", "at most 16384"},
		{"16 KiB of escapes", keyA, "ses_a", msg(strings.Repeat("\x01", inbox.MaxTextBytes), "acme.lookout"), 202, `{"outcome":"queued"}`, ""},
		{"blank", keyA, "ses_a", msg(" \n\t ", "acme.lookout"), 400, "invalid_request", "text must not be blank"},
		{"empty", keyA, "ses_a", `{"source":"acme.lookout"}`, 400, "invalid_request", "text must not be blank"},
		{"no source", keyA, "ses_a", `{"text":"hi"}`, 400, "invalid_request", "source is required"},
		{"bad source", keyA, "ses_a", msg("hi", "acme lookout"), 400, "invalid_request", "source \"acme lookout\""},
		{"reserved source", keyA, "ses_a", msg("hi", "acme.peer"), 400, "invalid_request", "a name VERA uses"},
		{"trailing separator", keyA, "ses_a", msg("hi", "acme."), 400, "invalid_request", "must not end in a separator"},
		{"unknown field", keyA, "ses_a", `{"text":"hi","source":"a.b","urgent":true}`, 400, "invalid_request", "unknown field"},
		{"unknown session", keyA, "ses_nope", msg("hi", "acme.lookout"), 404, "not_found", "no open session \"ses_nope\""},
		{"another partner's session", keyA, "ses_b", msg("hi", "acme.lookout"), 404, "not_found", "no open session \"ses_b\""},
		{"no scope", keyB, "ses_b", msg("hi", "acme.lookout"), 403, "permission_error", "conversations:write"},
	}
	for _, c := range cases {
		code, typ, m := post(t, srv, c.key, c.session, c.body)
		if code != c.status || typ != c.typ || !strings.Contains(m, c.want) {
			t.Errorf("%s: %d %s %q, want %d %s containing %q", c.name, code, typ, m, c.status, c.typ, c.want)
		}
	}
	if n := in.Queued("ses_a"); n != 3 {
		t.Errorf("queued = %d, want the 3 accepted", n)
	}
	if n := in.Queued("ses_b"); n != 0 {
		t.Errorf("another partner's session got %d messages", n)
	}
	if d := w.got(); len(d) != 0 {
		t.Errorf("delivered during a running turn: %v", d)
	}
}

func TestDeliversAfterRunningTurnOnePerTurn(t *testing.T) {
	w := newWorld()
	store := openStore(t, filepath.Join(t.TempDir(), "inbox.db"))
	defer store.Close()
	in, err := inbox.New(inbox.DefaultConfig(), store, w.options())
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, in)
	w.setBusy("ses_a", true)
	for i := range 3 {
		if code, _, _ := post(t, srv, keyA, "ses_a", msg(fmt.Sprintf("m%d", i), "acme.lookout")); code != 202 {
			t.Fatal(code)
		}
	}
	if d := w.got(); len(d) != 0 {
		t.Fatalf("delivered during the running turn: %v", d)
	}
	w.finish(in, "ses_a")
	if d := w.got(); len(d) != 1 || d[0] != "ses_a|acme.lookout|m0" {
		t.Fatalf("after the turn: %v", d)
	}
	in.SessionReady("ses_a") // a nudge while the inbox turn runs changes nothing
	if d := w.got(); len(d) != 1 {
		t.Fatalf("second delivery before TurnFinished: %v", d)
	}
	w.finish(in, "ses_a")
	w.finish(in, "ses_a")
	w.finish(in, "ses_a")
	if d := w.got(); len(d) != 3 || d[1] != "ses_a|acme.lookout|m1" || d[2] != "ses_a|acme.lookout|m2" {
		t.Fatalf("order: %v", d)
	}
	if n := in.Queued("ses_a"); n != 0 {
		t.Fatalf("queued = %d", n)
	}
	if n, _ := store.List(); len(n) != 0 {
		t.Fatalf("store still holds %d delivered messages", len(n))
	}
	// Idle session: a message goes straight in.
	post(t, srv, keyA, "ses_a", msg("now", "acme.lookout"))
	if d := w.got(); len(d) != 4 || d[3] != "ses_a|acme.lookout|now" {
		t.Fatalf("idle delivery: %v", d)
	}
	if len(w.asks()) != 0 {
		t.Fatalf("messages of this process needed admission: %v", w.asks())
	}
}

func TestDeliveryFailureKeepsMessage(t *testing.T) {
	w := newWorld()
	store := openStore(t, filepath.Join(t.TempDir(), "inbox.db"))
	defer store.Close()
	in, _ := inbox.New(inbox.DefaultConfig(), store, w.options())
	srv := newServer(t, in)
	w.fail = errors.New("session closed")
	post(t, srv, keyA, "ses_a", msg("x", "acme.lookout"))
	if in.Queued("ses_a") != 1 {
		t.Fatal("a failed delivery lost the message")
	}
	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
	in.SessionReady("ses_a")
	if d := w.got(); len(d) != 1 {
		t.Fatalf("retry: %v", d)
	}
}

// TestRestartBetweenQueueAndDelivery: a message queued before a restart is
// lost by nothing, is held until the person admits its source, and is then
// delivered once.
func TestRestartBetweenQueueAndDelivery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inbox.db")
	w := newWorld()
	store := openStore(t, path)
	in, _ := inbox.New(inbox.DefaultConfig(), store, w.options())
	srv := newServer(t, in)
	w.setBusy("ses_a", true)
	post(t, srv, keyA, "ses_a", msg("Your ride is here.", "acme.lookout"))
	post(t, srv, keyA, "ses_a", msg("Driver: blue car.", "acme.lookout"))
	post(t, srv, keyA, "ses_a", msg("Package arrived.", "shop/courier"))
	srv.Close()
	if err := store.Close(); err != nil { // the process dies here
		t.Fatal(err)
	}

	w2 := newWorld()
	store = openStore(t, path)
	defer store.Close()
	in, err := inbox.New(inbox.DefaultConfig(), store, w2.options())
	if err != nil {
		t.Fatal(err)
	}
	if n := in.Queued("ses_a"); n != 3 {
		t.Fatalf("after restart %d queued, want 3", n)
	}
	in.SessionReady("ses_a")
	in.TurnFinished("ses_a")
	if d := w2.got(); len(d) != 0 {
		t.Fatalf("held messages delivered without admission: %v", d)
	}
	asks := w2.asks()
	if len(asks) != 2 || asks[0].Name != "lookout" || asks[0].Count != 2 || asks[1].Name != "courier" ||
		asks[0].ActionID != inbox.AdmissionID("acme.lookout") || !inbox.IsAdmission(asks[0].ActionID) {
		t.Fatalf("asks = %+v", asks)
	}
	if !strings.Contains(asks[0].Summary(), "2 messages from lookout") || asks[0].Title() != "Messages from lookout" {
		t.Fatalf("prompt = %q / %q", asks[0].Title(), asks[0].Summary())
	}
	in.SessionReady("ses_a")
	if len(w2.asks()) != 2 {
		t.Fatal("asked twice")
	}
	if err := in.Admit("ses_a", "inbox_admit_nope"); !errors.Is(err, inbox.ErrUnknownAdmission) {
		t.Fatalf("unknown admission: %v", err)
	}
	if err := in.Admit("ses_b", asks[0].ActionID); !errors.Is(err, inbox.ErrUnknownAdmission) {
		t.Fatalf("admission in another session: %v", err)
	}
	if err := in.Refuse("ses_a", asks[1].ActionID); err != nil {
		t.Fatal(err)
	}
	if err := in.Admit("ses_a", asks[0].ActionID); err != nil {
		t.Fatal(err)
	}
	w2.finish(in, "ses_a")
	w2.finish(in, "ses_a")
	want := []string{"ses_a|acme.lookout|Your ride is here.", "ses_a|acme.lookout|Driver: blue car."}
	if d := w2.got(); len(d) != 2 || d[0] != want[0] || d[1] != want[1] {
		t.Fatalf("delivered %v, want %v", d, want)
	}
	if m, _ := store.List(); len(m) != 0 {
		t.Fatalf("store holds %d after delivery and refusal", len(m))
	}
}

func TestHeldMessagesExpire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inbox.db")
	w := newWorld()
	store := openStore(t, path)
	in, _ := inbox.New(inbox.DefaultConfig(), store, w.options())
	srv := newServer(t, in)
	w.setBusy("ses_a", true)
	post(t, srv, keyA, "ses_a", msg("old", "acme.lookout"))
	w.clock.Advance(23 * time.Hour)
	post(t, srv, keyA, "ses_a", msg("new", "acme.lookout"))
	w.clock.Advance(2 * time.Hour)
	if n := in.Expire(); n != 1 || in.Queued("ses_a") != 1 {
		t.Fatalf("Expire dropped %d, %d left", n, in.Queued("ses_a"))
	}
	srv.Close()
	store.Close()
	store = openStore(t, path)
	defer store.Close()
	w.clock.Advance(23 * time.Hour)
	in, _ = inbox.New(inbox.DefaultConfig(), store, w.options())
	if n := in.Queued("ses_a"); n != 0 {
		t.Fatalf("%d held messages older than hold_for survived the restart", n)
	}
}

func TestQueueBound(t *testing.T) {
	w := newWorld()
	store := openStore(t, filepath.Join(t.TempDir(), "inbox.db"))
	defer store.Close()
	cfg := inbox.DefaultConfig()
	cfg.MaxQueued = 2
	in, _ := inbox.New(cfg, store, w.options())
	srv := newServer(t, in)
	w.setBusy("ses_a", true)
	post(t, srv, keyA, "ses_a", msg("1", "a.b"))
	post(t, srv, keyA, "ses_a", msg("2", "a.b"))
	if code, typ, m := post(t, srv, keyA, "ses_a", msg("3", "a.b")); code != 429 || typ != "rate_limited" || !strings.Contains(m, "2 queued messages") {
		t.Fatalf("over the bound: %d %s %q", code, typ, m)
	}
}

func TestSourceName(t *testing.T) {
	for in, want := range map[string]string{"acme.lookout": "lookout", "lookout": "lookout", "org/team:bot": "bot", "a.b.c": "c"} {
		if got := inbox.SourceName(in); got != want {
			t.Errorf("SourceName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := inbox.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	err := inbox.Config{}.Validate()
	for _, k := range []string{"inbox.max_queued", "inbox.hold_for", "inbox.turn_timeout"} {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("Validate() = %v, want it to name %s", err, k)
		}
	}
	if _, err := inbox.New(inbox.DefaultConfig(), nil, inbox.Options{}); !errors.Is(err, inbox.ErrMissingDeps) {
		t.Errorf("New without deps = %v", err)
	}
}

// TestLostTurnFinishedDoesNotStallForever: when the session layer never
// reports the inbox turn's end, the next message still goes in after
// turn_timeout — never earlier.
func TestLostTurnFinishedDoesNotStallForever(t *testing.T) {
	w := newWorld()
	store := openStore(t, filepath.Join(t.TempDir(), "inbox.db"))
	defer store.Close()
	in, _ := inbox.New(inbox.DefaultConfig(), store, w.options())
	srv := newServer(t, in)
	post(t, srv, keyA, "ses_a", msg("1", "a.b"))
	w.setBusy("ses_a", false) // the turn ended, but nobody called TurnFinished
	post(t, srv, keyA, "ses_a", msg("2", "a.b"))
	if d := w.got(); len(d) != 1 {
		t.Fatalf("delivered %v before the turn timeout", d)
	}
	w.clock.Advance(5*time.Minute + time.Second)
	in.SessionReady("ses_a")
	if d := w.got(); len(d) != 2 {
		t.Fatalf("after the turn timeout: %v", d)
	}
}

func TestQueueBoundUnderConcurrentPosts(t *testing.T) {
	w := newWorld()
	store := openStore(t, filepath.Join(t.TempDir(), "inbox.db"))
	defer store.Close()
	cfg := inbox.DefaultConfig()
	cfg.MaxQueued = 5
	in, _ := inbox.New(cfg, store, w.options())
	srv := newServer(t, in)
	w.setBusy("ses_a", true)
	var wg sync.WaitGroup
	codes := make([]int, 12)
	for i := range codes {
		wg.Go(func() { // no t.Fatal off the test goroutine
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/sessions/ses_a/messages", strings.NewReader(msg("m", "a.b")))
			req.Header.Set("Authorization", "Bearer "+keyA)
			if resp, err := srv.Client().Do(req); err == nil {
				codes[i] = resp.StatusCode
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	ok, limited := 0, 0
	for _, c := range codes {
		switch c {
		case 202:
			ok++
		case 429:
			limited++
		}
	}
	if ok != 5 || limited != 7 || in.Queued("ses_a") != 5 {
		t.Fatalf("accepted %d, limited %d, queued %d; want 5, 7, 5", ok, limited, in.Queued("ses_a"))
	}
	if m, _ := store.List(); len(m) != 5 {
		t.Fatalf("store holds %d", len(m))
	}
}
