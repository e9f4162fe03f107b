package pairing_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/pairing"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
)

type echo struct{}

func (echo) Converse(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	onDelta("You said: " + req.Text)
	return session.Reply{Message: "You said: " + req.Text}, nil
}

// TestPairedTokensOnTheWebsocket: tokens from a pairing act for their end
// user and device only, on the real websocket handler: the glasses open a
// session and resume it with a refreshed token; the same token cannot
// speak as another device, and another end user's token cannot resume it.
func TestPairedTokensOnTheWebsocket(t *testing.T) {
	h := newHarness(t, pairing.NewMemoryStore(), pairing.DefaultConfig())
	mgr, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo{}, Safety: safetyFor(t), Layout: cardLayout(t)})
	if err != nil {
		t.Fatal(err)
	}
	// As cmd wires it: the edge authenticates the upgrade (the token as a
	// subprotocol), the handler reads the principal it stored.
	auth := func(r *http.Request, _ string) (gateway.Principal, error) {
		p, ok := gateway.PrincipalFrom(r.Context())
		if !ok {
			return gateway.Principal{}, errors.New("not authenticated by the edge")
		}
		return p, nil
	}
	ch, err := chat.New(chat.DefaultConfig(), mgr, auth, chat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.srv.Mount(gateway.Route{Method: http.MethodGet, Path: "/v1/chat", Scope: gateway.ScopeSessionsWrite,
		AllowClientToken: true, Token: chat.TokenFrom, Upgrade: true, MaxBodyBytes: -1, Handler: ch})
	ts := httptest.NewServer(h.srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ch.Close(ctx)
		ts.Close()
		_ = mgr.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	pair := func(endUser string) pairingCreds {
		ex := h.exchange(h.code(keyA, endUser, device).str("code"), device, "")
		if ex.status != 201 {
			t.Fatalf("exchange: %d %v", ex.status, ex.body)
		}
		return pairingCreds{token: ex.str("token"), refresh: ex.str("refresh_token")}
	}
	a, b := pair("u_alice_7"), pair("u_bob_7")

	wa := dial(ctx, t, ts.URL, a.token)
	send(ctx, t, wa, map[string]any{"type": "hello", "device": device})
	created := await(ctx, t, wa, "session.created")
	resume, sid := created["resume_token"].(string), created["session_id"].(string)
	_ = wa.Close(websocket.StatusNormalClosure, "page hidden")

	// Another device with the glasses' token: refused.
	wx := dial(ctx, t, ts.URL, a.token)
	send(ctx, t, wx, map[string]any{"type": "hello", "device": "browser"})
	if e := await(ctx, t, wx, "error"); !strings.Contains(fmt.Sprint(e["error"]), "bound to device "+device) {
		t.Fatalf("hello as another device: %v", e)
	}
	_ = wx.CloseNow()

	// Another end user (same partner, same device) cannot resume it.
	wb := dial(ctx, t, ts.URL, b.token)
	send(ctx, t, wb, map[string]any{"type": "hello", "device": device, "resume_token": resume, "last_seq": 1})
	if e := await(ctx, t, wb, "error"); !strings.Contains(fmt.Sprint(e["error"]), "not_found") {
		t.Fatalf("another end user resumed: %v", e)
	}
	_ = wb.CloseNow()

	// Later: the token has expired; the glasses refresh and resume.
	h.clock.Advance(90 * time.Second)
	if _, _, err := websocket.Dial(ctx, wsURL(ts.URL), &websocket.DialOptions{Subprotocols: []string{"vera.v1", a.token}}); err == nil {
		t.Fatal("an expired token opened the websocket")
	}
	r := h.refresh(a.refresh, device)
	if r.status != 200 {
		t.Fatalf("refresh: %d %v", r.status, r.body)
	}
	wa = dial(ctx, t, ts.URL, r.str("token"))
	defer wa.CloseNow()
	send(ctx, t, wa, map[string]any{"type": "hello", "device": device, "resume_token": resume, "last_seq": 2})
	again := await(ctx, t, wa, "session.created")
	if again["resumed"] != true || again["session_id"] != sid {
		t.Fatalf("resume with a refreshed token: %v", again)
	}
}

type pairingCreds struct{ token, refresh string }

func wsURL(u string) string { return "ws" + strings.TrimPrefix(u, "http") + "/v1/chat" }

func dial(ctx context.Context, t *testing.T, base, token string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, wsURL(base), &websocket.DialOptions{Subprotocols: []string{"vera.v1", token}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return c
}

func send(ctx context.Context, t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// await reads events until one of type typ.
func await(ctx context.Context, t *testing.T, c *websocket.Conn, typ string) map[string]any {
	t.Helper()
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", typ, err)
		}
		var ev map[string]any
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		if ev["type"] == typ {
			return ev
		}
	}
}

func safetyFor(t *testing.T) session.SafetyLayer {
	t.Helper()
	ls, err := session.NewLocalSafety("US")
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// cardLayout is the real glasses engine, as production lays cards out.
func cardLayout(t testing.TB) *glasses.Engine {
	t.Helper()
	e, err := glasses.New(glasses.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
