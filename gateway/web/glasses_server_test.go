package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/pairing"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/web"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

const partnerKey = "vera_sk_test_glasses_partner_0123"

// glassesServer is the gateway as cmd wires it for the glasses, with a
// partner key (so the app must pair): the HTTP edge with its auth, the
// pairing routes, the websocket, a real session manager with the local
// safety detector and the glasses layout, and the app at /glasses.
type glassesServer struct {
	*httptest.Server
	gw  *gateway.Server
	mgr *session.Manager
	app *web.Glasses
	// serve is the app the routes serve now (a test swaps it to upgrade
	// the gateway, or to nil: the app's requests then fail as if offline).
	serve    atomic.Pointer[web.Glasses]
	actions  *actionRecorder
	counters *safety.Counters
	wire     *wireMeter
}

func newGlassesServer(t testing.TB, conv session.Converser) *glassesServer {
	t.Helper()
	ls, err := session.NewLocalSafety("")
	if err != nil {
		t.Fatal(err)
	}
	gl, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	g := &glassesServer{actions: &actionRecorder{}, counters: safety.NewCounters(nil), wire: &wireMeter{}}
	g.mgr, err = session.NewManager(session.DefaultConfig(), session.Deps{Converser: conv, Safety: ls, Layout: gl,
		Actions: g.actions, Counters: g.counters})
	if err != nil {
		t.Fatal(err)
	}
	cfg := gateway.DefaultConfig()
	cfg.Auth.Keys = []gateway.KeyConfig{{ID: "partner-g", Secret: partnerKey, Scopes: gateway.AllScopes}}
	device := func(id string) error { _, err := devices.Lookup(id); return err }
	g.gw, err = gateway.New(cfg, gateway.Options{ValidateDevice: device})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := pairing.New(pairing.DefaultConfig(), pairing.NewMemoryStore(), pairing.Options{Tokens: g.gw.Tokens(),
		TokenTTL: time.Minute, ValidateDevice: device})
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range pair.Routes() {
		g.gw.Mount(rt)
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
	ch, err := chat.New(chat.DefaultConfig(), g.mgr, auth, chat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.gw.Mount(gateway.Route{Method: http.MethodGet, Path: "/v1/chat", Scope: gateway.ScopeSessionsWrite,
		AllowClientToken: true, Token: chat.TokenFrom, Upgrade: true, MaxBodyBytes: -1, Handler: ch})
	if g.app, err = web.NewGlasses(web.GlassesOptions{}); err != nil {
		t.Fatal(err)
	}
	g.serve.Store(g.app)
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := g.serve.Load()
		if a == nil {
			panic(http.ErrAbortHandler) // the connection drops: a network error for the browser
		}
		a.ServeHTTP(w, r)
	})
	g.gw.Mount(gateway.Route{Method: http.MethodGet, Path: web.GlassesPath, NoRateLimit: true, Handler: app})
	g.gw.Mount(gateway.Route{Method: http.MethodGet, Path: web.GlassesPath + "/", Prefix: true, NoRateLimit: true,
		Undocumented: true, Handler: app})
	// The desktop web client too, as cmd mounts it.
	g.gw.Mount(gateway.Route{Method: http.MethodGet, Path: "/", NoRateLimit: true, Handler: web.Handler()})
	g.gw.Mount(gateway.Route{Method: http.MethodGet, Path: web.AssetPrefix, Prefix: true, NoRateLimit: true,
		Undocumented: true, Handler: web.Handler()})
	g.Server = httptest.NewServer(g.wire.wrap(g.gw.Handler()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = ch.Close(ctx)
		g.Close()
		_ = g.mgr.Close(ctx)
	})
	return g
}

// clientToken mints a client token for one end user's device, as the
// partner's server would.
func (g *glassesServer) clientToken(t testing.TB, endUser, device string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/client_tokens",
		strings.NewReader(fmt.Sprintf(`{"end_user_id":%q,"device":%q,"ttl_seconds":600}`, endUser, device)))
	req.Header.Set("Authorization", "Bearer "+partnerKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/client_tokens: %d %v", res.StatusCode, err)
	}
	return body.Token
}

// code asks for a pairing code as the partner's server would.
func (g *glassesServer) code(t testing.TB, endUser string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/pairings",
		strings.NewReader(fmt.Sprintf(`{"end_user_id":%q,"device":"meta-rayban-display"}`, endUser)))
	req.Header.Set("Authorization", "Bearer "+partnerKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Code string `json:"code"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/pairings: %d %v", res.StatusCode, err)
	}
	return body.Code
}

// wireMeter counts the HTTP requests the server answers and the bytes it
// writes for them (status line, headers, body): what crossed the wire
// towards the glasses, service worker fetches included. Websocket upgrades
// are counted apart; their frames are not.
type wireMeter struct {
	mu   sync.Mutex // guards reqs
	reqs []wireReq
}

type wireReq struct {
	Method, Path string
	Status       int
	Bytes        int
	Websocket    bool
}

func (m *wireMeter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			m.add(wireReq{Method: r.Method, Path: r.URL.Path, Websocket: true})
			next.ServeHTTP(w, r)
			return
		}
		mw := &meteredWriter{ResponseWriter: w}
		next.ServeHTTP(mw, r)
		mw.header()
		m.add(wireReq{Method: r.Method, Path: r.URL.Path, Status: mw.status, Bytes: mw.n})
	})
}

func (m *wireMeter) add(r wireReq) {
	m.mu.Lock()
	m.reqs = append(m.reqs, r)
	m.mu.Unlock()
}

// take returns the requests counted since the last take.
func (m *wireMeter) take() []wireReq {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.reqs
	m.reqs = nil
	return out
}

type meteredWriter struct {
	http.ResponseWriter
	status int
	n      int
}

func (w *meteredWriter) header() {
	if w.status != 0 {
		return
	}
	w.status = http.StatusOK
	w.n += len("HTTP/1.1 200 OK\r\n\r\n")
	for k, vs := range w.Header() {
		for _, v := range vs {
			w.n += len(k) + len(v) + 4
		}
	}
	w.n += len("Date: Tue, 01 Dec 2026 09:00:00 GMT\r\n")
}

func (w *meteredWriter) WriteHeader(code int) {
	w.header()
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *meteredWriter) Write(b []byte) (int, error) {
	w.header()
	n, err := w.ResponseWriter.Write(b)
	w.n += n
	return n, err
}
