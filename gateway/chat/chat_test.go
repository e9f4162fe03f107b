package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// keywordSafety: "end my life" is a crisis with one resource.
type keywordSafety struct{}

func (keywordSafety) Assess(history []string, text, region string) safety.Assessment {
	if strings.Contains(strings.ToLower(text), "end my life") {
		return safety.Assessment{Level: safety.LevelCrisis, DisplayRequired: true, Source: safety.SourceLocal,
			Resources: []safety.Resource{{ID: "us-988", Name: "988 Suicide & Crisis Lifeline", Actions: []safety.Action{{Type: safety.ActionCall, Value: "988"}}}}}
	}
	return safety.Assessment{}
}

func (keywordSafety) Merge(engine, local safety.Assessment) safety.Assessment {
	if local.Level > engine.Level {
		return local
	}
	return engine
}

type converser func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error)

func (f converser) Converse(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	return f(ctx, req, onDelta)
}

func echo(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	if req.Text == "flood me" { // streams until cancelled
		req.SafetyFinal(safety.Assessment{})
		chunk := strings.Repeat("x", 4000)
		for ctx.Err() == nil {
			onDelta(chunk)
		}
		return session.Reply{}, ctx.Err()
	}
	onDelta("You said: " + req.Text)
	return session.Reply{Message: "You said: " + req.Text}, nil
}

type server struct {
	*httptest.Server
	h      *chat.Handler
	mgr    *session.Manager
	now    *clocktest.Clock
	closes chan chat.CloseInfo
}

func auth(r *http.Request, token string) (gateway.Principal, error) {
	switch token {
	case "good":
		return gateway.Principal{PartnerID: "p1", EndUserID: "u1"}, nil
	case "other":
		return gateway.Principal{PartnerID: "p1", EndUserID: "u2"}, nil
	case "reader":
		return gateway.Principal{PartnerID: "p1", EndUserID: "u3", Scopes: []string{"conversations:read"}}, nil
	case "glasses":
		return gateway.Principal{PartnerID: "p1", EndUserID: "u4", Device: "meta-rayban-display"}, nil
	case "forbidden":
		return gateway.Principal{}, chat.ErrForbidden
	}
	return gateway.Principal{}, errors.New("bad token")
}

func newServer(t testing.TB, mut func(*chat.Config, *session.Config)) *server {
	t.Helper()
	cfg, scfg := chat.DefaultConfig(), session.DefaultConfig()
	if mut != nil {
		mut(&cfg, &scfg)
	}
	layout, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := session.NewManager(scfg, session.Deps{Converser: converser(echo), Safety: keywordSafety{}, Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{mgr: mgr, now: clocktest.NewClock(time.Unix(1_800_000_000, 0)), closes: make(chan chat.CloseInfo, 16)}
	s.h, err = chat.New(cfg, mgr, auth, chat.Options{Clock: s.now, OnClose: func(ci chat.CloseInfo) { s.closes <- ci }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/chat", s.h)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.h.Close(ctx); err != nil {
			t.Error(err)
		}
		s.Server.Close()
		if err := mgr.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

func (s *server) url() string { return "ws" + strings.TrimPrefix(s.URL, "http") + "/v1/chat" }

type client struct {
	t testing.TB
	c *websocket.Conn
}

func (s *server) dial(t testing.TB, token string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, s.url(), &websocket.DialOptions{Subprotocols: []string{chat.Subprotocol, token}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	if c.Subprotocol() != chat.Subprotocol {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	c.SetReadLimit(1 << 24)
	t.Cleanup(func() { _ = c.CloseNow() })
	return &client{t: t, c: c}
}

func (c *client) send(v string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, []byte(v)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

type msg struct {
	event.Envelope
	raw map[string]json.RawMessage
}

func (m msg) str(k string) string { var s string; _ = json.Unmarshal(m.raw[k], &s); return s }

func (m msg) errBody() event.ErrorBody {
	var e event.Error
	b, _ := json.Marshal(m.raw)
	_ = json.Unmarshal(b, &e)
	return e.Error
}

func (c *client) read() msg {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.c.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m msg
	_ = json.Unmarshal(b, &m.Envelope)
	if err := json.Unmarshal(b, &m.raw); err != nil {
		c.t.Fatalf("server sent non-JSON %q", b)
	}
	return m
}

func (c *client) until(typ event.Type) []msg {
	c.t.Helper()
	var out []msg
	for {
		m := c.read()
		out = append(out, m)
		if m.Type == typ {
			return out
		}
	}
}

func (c *client) hello(extra string) msg {
	c.t.Helper()
	c.send(`{"type":"hello","device":"meta-rayban-display"` + extra + `}`)
	created := c.read()
	if created.Type != event.TypeSessionCreated {
		c.t.Fatalf("want session.created, got %s %v", created.Type, created.raw)
	}
	return created
}

func TestTurnOverWebsocket(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, "good")
	created := c.hello("")
	if created.str("resume_token") == "" || created.SessionID == "" || created.Seq != 1 {
		t.Fatalf("session.created %v", created.raw)
	}
	if n := c.read(); n.Type != event.TypeNotice || n.str("kind") != "ai_disclosure" {
		t.Fatalf("no disclosure: %v", n.raw)
	}
	c.send(`{"type":"input.text","text":"I want to end my life tonight"}`)
	evs := c.until(event.TypeReplyDone)
	var order []string
	for _, e := range evs {
		order = append(order, string(e.Type))
	}
	if strings.Join(order, ",") != "transcript.final,safety.card,reply.delta,caption,reply.done" {
		t.Fatalf("order %v", order)
	}
	card := evs[1]
	if string(card.raw["requires_ack"]) != "true" || card.str("level") != "crisis" {
		t.Fatalf("card %v", card.raw)
	}
	c.send(`{"type":"display.ack","card_id":"` + card.str("card_id") + `","page":1,"surface":"display"}`)
	c.send(`{"type":"input.text","text":"thanks"}`)
	if got := c.until(event.TypeReplyDone); got[len(got)-1].str("text") != "You said: thanks" {
		t.Fatalf("second turn %v", got)
	}
}

func TestAuthAndToken(t *testing.T) {
	s := newServer(t, nil)
	ctx := context.Background()
	// Query parameter works too.
	c, _, err := websocket.Dial(ctx, s.url()+"?token=good", nil)
	if err != nil {
		t.Fatalf("query token: %v", err)
	}
	c.CloseNow()
	for token, status := range map[string]int{"": 401, "nope": 401, "forbidden": 403, "reader": 403} {
		_, resp, err := websocket.Dial(ctx, s.url()+"?token="+token, nil)
		if err == nil || resp == nil || resp.StatusCode != status {
			t.Fatalf("token %q: %v %v", token, err, resp)
		}
		var body event.Error
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error.Type == "" || body.Error.Message == "" {
			t.Fatalf("token %q: envelope %+v %v", token, body, err)
		}
	}
	resp, err := http.Post(s.URL+"/v1/chat", "text/plain", nil)
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %v %v", err, resp)
	}
	resp.Body.Close()
	// A device-bound token cannot claim another device.
	g := s.dial(t, "glasses")
	g.send(`{"type":"hello","device":"even-g2"}`)
	if e := g.read(); e.Type != event.TypeError || e.errBody().Type != event.ErrPermission {
		t.Fatalf("device binding: %v", e.raw)
	}
	g.hello("")
}

func TestOrigins(t *testing.T) {
	s := newServer(t, func(c *chat.Config, _ *session.Config) { c.AllowedOrigins = []string{"app.example.com"} })
	ctx := context.Background()
	dial := func(origin string) (*http.Response, error) {
		h := http.Header{}
		h.Set("Origin", origin)
		c, resp, err := websocket.Dial(ctx, s.url()+"?token=good", &websocket.DialOptions{HTTPHeader: h})
		if err == nil {
			c.CloseNow()
		}
		return resp, err
	}
	if resp, err := dial("http://evil.example.net"); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v %v", err, resp)
	}
	if _, err := dial("https://app.example.com"); err != nil {
		t.Fatalf("allowed origin: %v", err)
	}
	if _, err := dial(s.URL); err != nil {
		t.Fatalf("same origin: %v", err)
	}
}

func TestBadInputKeepsConnection(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, "good")
	// Before hello.
	c.send(`{"type":"input.text","text":"hi"}`)
	if e := c.read(); e.Type != event.TypeError || !strings.Contains(e.errBody().Message, "hello") || e.Seq != 0 {
		t.Fatalf("pre-hello: %v", e.raw)
	}
	c.send(`{"type":"hello","device":"toaster"}`)
	if e := c.read(); e.Type != event.TypeError || e.errBody().Type != event.ErrInvalidRequest {
		t.Fatalf("bad device: %v", e.raw)
	}
	c.hello("")
	c.until(event.TypeNotice)
	cases := []struct{ in, field string }{
		{`not json`, ""},
		{`{"type":"reply.delta","delta":"x"}`, "type"},
		{`{"type":"input.text","text":"hi","extra":1}`, "extra"},
		{`{"type":"input.text","text":7}`, "text"},
		{`{"type":"input.text","text":"` + strings.Repeat("a", 8001) + `"}`, "text"},
		{`{"type":"display.ack","card_id":"c","page":"one","surface":"display"}`, "page"},
		{`{"type":"hello","device":"browser","resume_token":"rt_x"}`, ""},
		{`{"type":"display.ack","card_id":"missing","page":1,"surface":"display"}`, ""},
	}
	for _, tc := range cases {
		c.send(tc.in)
		e := c.read()
		if e.Type != event.TypeError || e.errBody().Message == "" || e.errBody().Field != tc.field {
			t.Fatalf("%.50s: %v", tc.in, e.raw)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.c.Write(ctx, websocket.MessageBinary, []byte{1, 2, 3})
	if e := c.read(); e.Type != event.TypeError {
		t.Fatalf("binary: %v", e.raw)
	}
	c.send(`{"type":"input.text","text":"still here"}`)
	if got := c.until(event.TypeReplyDone); got[len(got)-1].str("text") != "You said: still here" {
		t.Fatal("connection not usable after bad input")
	}
}

func TestReadLimitCloses(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, "good")
	c.hello("")
	c.send(`{"type":"input.text","text":"` + strings.Repeat("a", int(chat.DefaultConfig().ReadLimitBytes)) + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := c.c.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
				t.Fatalf("want 1009, got %v", err)
			}
			return
		}
	}
}

func TestRateLimit(t *testing.T) {
	s := newServer(t, func(c *chat.Config, _ *session.Config) { c.Burst = 3; c.EventsPerSecond = 1 })
	c := s.dial(t, "good")
	c.hello("") // 1 token used
	c.until(event.TypeNotice)
	// 2 pass, the third is refused. No more are sent: one still in flight
	// when the clock moves on would spend the refilled tokens and the text
	// below would be refused silently (one error per run of refusals).
	for range 3 {
		c.send(`{"type":"response.cancel"}`)
	}
	e := c.read()
	if e.Type != event.TypeError || e.errBody().Type != event.ErrRateLimited {
		t.Fatalf("want rate_limited, got %v", e.raw)
	}
	s.now.Advance(10 * time.Second)
	c.send(`{"type":"input.text","text":"after the pause"}`)
	got := c.until(event.TypeReplyDone)
	for _, m := range got {
		if m.Type == event.TypeError {
			t.Fatalf("still limited: %v", m.raw)
		}
	}
}

func TestSlowReaderClosedWithoutBlockingOthers(t *testing.T) {
	s := newServer(t, func(c *chat.Config, sc *session.Config) {
		sc.ReplayBytes = 64 << 10
		sc.ReplayEvents = 64
		c.WriteTimeout = time.Minute // the log overflows first
	})
	slow := s.dial(t, "good")
	slow.hello("")
	slow.send(`{"type":"input.text","text":"flood me"}`)
	// The slow client reads nothing until the server gives up on it.
	var ci chat.CloseInfo
	select {
	case ci = <-s.closes:
	case <-time.After(30 * time.Second):
		t.Fatal("slow reader never closed")
	}
	if ci.Code != websocket.StatusPolicyViolation || ci.Reason != chat.ReasonSlowConsumer {
		t.Fatalf("close %+v", ci)
	}
	// Meanwhile another session works normally.
	other := s.dial(t, "other")
	other.hello("")
	other.send(`{"type":"input.text","text":"are you there"}`)
	if got := other.until(event.TypeReplyDone); got[len(got)-1].str("text") != "You said: are you there" {
		t.Fatal("other session affected")
	}
	// The slow client drains what was buffered and then sees the close code.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, _, err := slow.c.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Fatalf("want 1008, got %v", err)
			}
			var ce websocket.CloseError
			if errors.As(err, &ce) && ce.Reason != chat.ReasonSlowConsumer {
				t.Fatalf("reason %q", ce.Reason)
			}
			return
		}
	}
}

func TestResumeAfterReconnect(t *testing.T) {
	s := newServer(t, nil)
	c1 := s.dial(t, "good")
	created := c1.hello("")
	c1.until(event.TypeNotice)
	c1.send(`{"type":"input.text","text":"first"}`)
	got := c1.until(event.TypeReplyDone)
	last := got[0].Seq // pretend only transcript.final was seen
	c1.c.Close(websocket.StatusNormalClosure, "network change")

	// Another user cannot take the session over.
	x := s.dial(t, "other")
	x.send(`{"type":"hello","device":"browser","resume_token":"` + created.str("resume_token") + `","last_seq":1}`)
	if e := x.read(); e.Type != event.TypeError || e.errBody().Type != event.ErrNotFound {
		t.Fatalf("foreign resume: %v", e.raw)
	}

	c2 := s.dial(t, "good")
	b, _ := json.Marshal(map[string]any{"type": "hello", "device": "meta-rayban-display", "resume_token": created.str("resume_token"), "last_seq": last})
	c2.send(string(b))
	r := c2.read()
	if r.Type != event.TypeSessionCreated || string(r.raw["resumed"]) != "true" || r.SessionID != created.SessionID {
		t.Fatalf("resume ack %v", r.raw)
	}
	replay := c2.until(event.TypeReplyDone)
	if replay[0].Seq != last+1 {
		t.Fatalf("replay starts at %d, want %d", replay[0].Seq, last+1)
	}
	if len(replay) != len(got)-1 {
		t.Fatalf("replayed %d events, missed %d", len(replay), len(got)-1)
	}
	// A third connection resuming replaces the second, which is told why.
	c3 := s.dial(t, "good")
	b, _ = json.Marshal(map[string]any{"type": "hello", "device": "meta-rayban-display", "resume_token": created.str("resume_token"), "last_seq": replay[len(replay)-1].Seq})
	c3.send(string(b))
	c3.read()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c2.c.Read(ctx)
	if websocket.CloseStatus(err) != chat.StatusReplaced {
		t.Fatalf("replaced connection: %v", err)
	}
	c3.send(`{"type":"input.text","text":"still the same conversation"}`)
	c3.until(event.TypeReplyDone)
}

func TestKeepAliveAndHelloTimeout(t *testing.T) {
	s := newServer(t, func(c *chat.Config, _ *session.Config) {
		c.PingInterval, c.PingTimeout, c.HelloTimeout = 20*time.Millisecond, 100*time.Millisecond, 200*time.Millisecond
	})
	// No hello at all.
	c := s.dial(t, "good")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.c.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != chat.ReasonNoHello {
		t.Fatalf("hello timeout: %v", err)
	}
	// A peer that stops answering pings (it never reads, so never pongs).
	d := s.dial(t, "good")
	d.send(`{"type":"hello","device":"browser"}`)
	for {
		select {
		case ci := <-s.closes:
			if ci.Reason == chat.ReasonKeepAlive {
				return
			}
		case <-ctx.Done():
			t.Fatal("no keep-alive close")
		}
	}
}

func TestHandlerCloseGoesAway(t *testing.T) {
	s := newServer(t, nil)
	c := s.dial(t, "good")
	c.hello("")
	c.until(event.TypeNotice)
	go func() { _ = s.h.Close(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("want 1001, got %v", err)
	}
	if _, resp, err := websocket.Dial(ctx, s.url()+"?token=good", nil); err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("after close: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := chat.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for key, mut := range map[string]func(*chat.Config){
		"chat.read_limit_bytes":   func(c *chat.Config) { c.ReadLimitBytes = 100 },
		"chat.allowed_origins[0]": func(c *chat.Config) { c.AllowedOrigins = []string{"*"} },
		"chat.burst":              func(c *chat.Config) { c.Burst = 0 },
	} {
		c := chat.DefaultConfig()
		mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v", key, err)
		}
	}
}

func TestTokenFrom(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/chat?token=q", nil)
	r.Header.Set("Sec-WebSocket-Protocol", "vera.v1, tok.abc")
	if got := chat.TokenFrom(r); got != "tok.abc" {
		t.Fatalf("subprotocol token %q", got)
	}
	r.Header.Set("Sec-WebSocket-Protocol", "vera.v1")
	if got := chat.TokenFrom(r); got != "q" {
		t.Fatalf("query token %q", got)
	}
}
