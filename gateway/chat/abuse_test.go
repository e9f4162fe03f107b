package chat_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
)

// Attacks on the chat endpoint, each with the refusal it must get.
// THREATS.md lists them with their mitigations.

// sharedServer is a chat endpoint with fair shares of 4 chats and 4
// sessions: 2 per partner, 1 per end user. Tokens are "partner/enduser".
func sharedServer(t testing.TB) *server { return sharedServerOf(t, 4, 0.25) }

// sharedServerOf is sharedServer with n chats and n sessions, half per
// partner, perToken of them per end user.
func sharedServerOf(t testing.TB, n int, perToken float64) *server {
	t.Helper()
	lim := gateway.DefaultConfig().Limits
	lim.PerPartner = gateway.ShareConfig{Chats: 0.5, Sessions: 0.5, VoiceSessions: 0.5}
	lim.PerToken = gateway.ShareConfig{Chats: perToken, Sessions: max(perToken, 0.5), VoiceSessions: 0.25}
	shares := gateway.NewShares(lim, map[gateway.ShareKind]int{gateway.ShareChats: n, gateway.ShareSessions: n}, 5)
	cfg, scfg := chat.DefaultConfig(), session.DefaultConfig()
	cfg.MaxConnections, scfg.MaxSessions = n, n
	layout, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := session.NewManager(scfg, session.Deps{Converser: converser(echo), Safety: keywordSafety{}, Layout: layout,
		Admit: func(o session.Owner) (func(), error) {
			return shares.Admit(gateway.ShareSessions, o.PartnerID, o.EndUserID)
		}})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{mgr: mgr}
	auth := func(r *http.Request, token string) (gateway.Principal, error) {
		partner, user, ok := strings.Cut(token, "/")
		if !ok {
			return gateway.Principal{}, errors.New("bad token")
		}
		return gateway.Principal{PartnerID: partner, EndUserID: user, Via: "token"}, nil
	}
	if s.h, err = chat.New(cfg, mgr, auth, chat.Options{Shares: shares}); err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(s.h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = s.h.Close(ctx)
		s.Server.Close()
		_ = mgr.Close(ctx)
	})
	return s
}

func (s *server) tryDial(t testing.TB, token string) (*client, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http"), &websocket.DialOptions{Subprotocols: []string{chat.Subprotocol, token}})
	if err != nil {
		return nil, resp
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return &client{t: t, c: c}, resp
}

// TestAbuseChatFairShares: one partner's tokens cannot take every chat
// connection (the issue saw 150 chats in 75 ms lock another partner out):
// past an end user's share and past the partner's, 429 with Retry-After;
// the other partner still connects.
func TestAbuseChatFairShares(t *testing.T) {
	s := sharedServer(t)
	if c, _ := s.tryDial(t, "pa/u1"); c == nil {
		t.Fatal("first chat refused")
	}
	refused := func(token, naming string) {
		t.Helper()
		c, resp := s.tryDial(t, token)
		if c != nil || resp == nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "5" {
			t.Fatalf("%s: %v, want 429 with Retry-After", token, resp)
		}
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), naming) {
			t.Fatalf("%s: 429 %s, want it to name %s", token, body, naming)
		}
	}
	refused("pa/u1", "limits.per_token.chats")
	if c, _ := s.tryDial(t, "pa/u2"); c == nil {
		t.Fatal("the partner's second end user refused")
	}
	refused("pa/u3", "limits.per_partner.chats")
	for _, tok := range []string{"pb/u1", "pb/u2"} {
		if c, _ := s.tryDial(t, tok); c == nil {
			t.Fatalf("partner b (%s) locked out by partner a at its caps", tok)
		}
	}
}

// TestAbuseSessionFairShares: sessions outlive their connections (the
// resume window), so churning chats piles them up; past the partner's
// share of sessions a hello gets a rate_limited error naming the key, and
// the other partner still opens sessions.
func TestAbuseSessionFairShares(t *testing.T) {
	s := sharedServer(t)
	for _, tok := range []string{"pa/u1", "pa/u2"} {
		c, _ := s.tryDial(t, tok)
		if c == nil {
			t.Fatalf("%s refused", tok)
		}
		c.hello("")
		_ = c.c.Close(websocket.StatusNormalClosure, "") // the session waits for a resume
	}
	c, _ := s.tryDial(t, "pa/u3")
	if c == nil {
		t.Fatal("a chat within the chats share refused")
	}
	c.send(`{"type":"hello","device":"meta-rayban-display"}`)
	m := c.read()
	if m.Type != event.TypeError || m.errBody().Type != event.ErrRateLimited || !strings.Contains(m.errBody().Message, "limits.per_partner.sessions") {
		t.Fatalf("hello past the partner's sessions = %s %+v, want rate_limited naming limits.per_partner.sessions", m.Type, m.errBody())
	}
	b, _ := s.tryDial(t, "pb/u1")
	if b == nil {
		t.Fatal("partner b refused")
	}
	b.hello("")
}
