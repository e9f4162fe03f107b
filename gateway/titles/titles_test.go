package titles

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFromAnswer(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Anxious about exam tomorrow", "Anxious about exam tomorrow"},
		{"\"Raid on the button factory.\"", "Raid on the button factory"},
		{"Title: **Moving to Berlin**\nIt is about a move.", "Moving to Berlin"},
		{"\n\n  one two three four five six seven", "one two three four five"},
		{"What's next?", "What's next?"},
		{"   ", ""},
		{"...", ""},
	} {
		if got := FromAnswer(c.in); got != c.want {
			t.Errorf("FromAnswer(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

type oneshotFunc func(context.Context, router.OneshotRequest) (router.OneshotResponse, error)

func (f oneshotFunc) Oneshot(ctx context.Context, req router.OneshotRequest) (router.OneshotResponse, error) {
	return f(ctx, req)
}

// fakeSession records the titles set on it.
type fakeSession struct {
	id  string
	mu  sync.Mutex
	set []string
}

func (s *fakeSession) ID() string { return s.id }

func (s *fakeSession) SetTitle(title string) session.TitleOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set = append(s.set, title)
	return session.TitleSet
}

// TestTitlerOffTurnPathBoundedAndJoined: naming never blocks its caller;
// past eight calls in flight a session is skipped; Close cancels the
// calls in flight and waits for them.
func TestTitlerOffTurnPathBoundedAndJoined(t *testing.T) {
	started := make(chan struct{}, maxCalls+1)
	tt, err := New(oneshotFunc(func(ctx context.Context, req router.OneshotRequest) (router.OneshotResponse, error) {
		if req.Assignment != router.SlotSnappy || req.SystemPrompt != Prompt || req.MaxTokens != maxTokens {
			return router.OneshotResponse{}, fmt.Errorf("request %+v", req)
		}
		started <- struct{}{}
		<-ctx.Done() // a model that never answers
		return router.OneshotResponse{}, ctx.Err()
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sessions []*fakeSession
	for i := range maxCalls + 3 {
		s := &fakeSession{id: fmt.Sprintf("s%d", i)}
		sessions = append(sessions, s)
		tt.Name(s, "hello there")
	}
	for range maxCalls {
		<-started
	}
	if got := counter(t, tt.outcomes.WithLabelValues("skipped")); got != 3 {
		t.Fatalf("skipped %v, want 3", got)
	}
	tt.Close()
	(*Titler)(nil).Close() // a failed start closes what it never built
	late := &fakeSession{id: "late"}
	tt.Name(late, "after close") // ignored once closed
	sessions = append(sessions, late)
	for _, s := range sessions {
		if len(s.set) != 0 {
			t.Fatalf("cancelled or late call named %s %v", s.id, s.set)
		}
	}
	if counter(t, tt.outcomes.WithLabelValues("failed")) != 0 {
		t.Fatal("cancelled calls counted as failed")
	}
}

// echo is a converser that repeats the person.
type echo struct{}

func (echo) Converse(_ context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	onDelta("You said: " + req.Text)
	return session.Reply{Message: "You said: " + req.Text}, nil
}

func newManager(t *testing.T) *session.Manager {
	t.Helper()
	local, err := session.NewLocalSafety("US")
	if err != nil {
		t.Fatal(err)
	}
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo{}, Safety: local, Layout: cardLayout(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

func open(t *testing.T, m *session.Manager, partner string) *session.Session {
	t.Helper()
	s, st, err := m.Open(session.Owner{PartnerID: partner, EndUserID: "u_1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Detach)
	return s
}

// namedSession tells the test when the titler has set its title.
type namedSession struct {
	*session.Session
	done chan session.TitleOutcome
}

func (s namedSession) SetTitle(title string) session.TitleOutcome {
	o := s.Session.SetTitle(title)
	s.done <- o
	return o
}

// TestNamesFromTheSnappySlot: the embedded snappy slot names a session from
// the person's message; a name set first (the partner's or the person's)
// wins over the automatic one, counted as named.
func TestNamesFromTheSnappySlot(t *testing.T) {
	r, err := router.New(router.DefaultConfig(), func(string) string { return "" }, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tt, err := New(r, Options{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer tt.Close()
	m := newManager(t)
	s1 := namedSession{open(t, m, "dev"), make(chan session.TitleOutcome, 1)}
	s2 := namedSession{open(t, m, "dev"), make(chan session.TitleOutcome, 1)}
	if s2.Session.SetTitle("Ride home") != session.TitleSet {
		t.Fatal("the partner's title was not set")
	}
	tt.Name(s1, "I feel anxious about my exam tomorrow")
	tt.Name(s2, "Can you book me a taxi to the station")
	if o := <-s1.done; o != session.TitleSet || s1.Title() != "Anxious about exam tomorrow" {
		t.Fatalf("automatic title %q (%s)", s1.Title(), o)
	}
	if o := <-s2.done; o != session.TitleNamed || s2.Title() != "Ride home" {
		t.Fatalf("title %q (%s): the partner's title must win", s2.Title(), o)
	}
	tt.Close()
	for o, want := range map[string]float64{"set": 1, "named": 1, "failed": 0} {
		if got := counter(t, tt.outcomes.WithLabelValues(o)); got != want {
			t.Errorf("titles{outcome=%q} = %v, want %v", o, got, want)
		}
	}
}

// TestRoute: PUT names a session that never had a name (set), leaves a
// name in place (named); unknown and other partners' sessions are 404, a
// missing, blank or too long title 400.
func TestRoute(t *testing.T) {
	m := newManager(t)
	srv, err := gateway.New(gateway.DefaultConfig(), gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount(Route(m.Get))
	put := func(id, body string) (int, string) {
		req := httptest.NewRequest(http.MethodPut, "/v1/sessions/"+id+"/title", strings.NewReader(body))
		req.RemoteAddr = "127.0.0.1:40000" // dev mode: partner "dev"
		req.Host = "localhost"             // dev mode serves loopback Host values only
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	s := open(t, m, gateway.DevPartnerID)
	if code, body := put(s.ID(), "{\"title\":\"  Ride \\n home  \"}"); code != 200 || !strings.Contains(body, `"outcome":"set"`) {
		t.Fatalf("PUT on a new session = %d %s", code, body)
	}
	if s.Title() != "Ride home" {
		t.Fatalf("title %q", s.Title())
	}
	if code, body := put(s.ID(), `{"title":"Exam prep"}`); code != 200 || !strings.Contains(body, `"outcome":"named"`) || s.Title() != "Ride home" {
		t.Fatalf("PUT on a named session = %d %s (title %q)", code, body, s.Title())
	}
	other := open(t, m, "other")
	for _, c := range []struct {
		id, body string
		code     int
		typ      string
	}{
		{"sess_nope", `{"title":"x"}`, 404, "not_found"},
		{other.ID(), `{"title":"x"}`, 404, "not_found"},
		{s.ID(), `{"title":"   "}`, 400, "invalid_request"},
		{s.ID(), `{}`, 400, "invalid_request"},
		{s.ID(), `{"title":"` + strings.Repeat("a", session.MaxTitleChars+1) + `"}`, 400, "invalid_request"},
	} {
		if code, body := put(c.id, c.body); code != c.code || !strings.Contains(body, c.typ) {
			t.Errorf("PUT %s %.40s = %d %s, want %d %s", c.id, c.body, code, body, c.code, c.typ)
		}
	}
	if other.Title() != "" {
		t.Fatalf("another partner's session was named %q", other.Title())
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
