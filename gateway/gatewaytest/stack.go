// Package gatewaytest is the one test stack: the gateway's real voice and
// chat path on an httptest server — the model router on its embedded
// engines (pocketsphinx, espeak-ng, the companion), the local safety
// detector, the glasses layout, the session manager, the converser, the
// WebRTC engine and signaling handler and the chat websocket — built the
// way cmd/vera-gateway wires them, with options for what a test changes.
//
// Tests of every package that need a live stack use NewStack instead of
// assembling one by hand, so a new dependency of the session or the voice
// path is wired once. The voice factory itself is passed in (Options.Voice)
// so that gateway/voice's own white-box tests can use the stack too without
// an import cycle. Only tests import this package.
package gatewaytest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/converse"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// Region is the stack's default safety region (the local catalog's).
const Region = "US"

// Options says what a test changes in the stack; the zero value is the
// gateway as `make run` wires it, without the voice path.
type Options struct {
	// Router answers listen, converse and speak. Nil: the shared embedded
	// router (Shared), or a router of the test's own with FreshRouter; none
	// for a stack with its own Converser and no voice path.
	Router *router.Router
	// FreshRouter gives the stack a router of its own (RouterConfig, or
	// router.DefaultConfig), closed when the test ends: pocketsphinx adapts
	// its cepstral mean to what a pooled decoder heard before.
	FreshRouter  bool
	RouterConfig *router.Config
	// Env is the fresh router's environment (API keys of remote models).
	Env map[string]string
	// Converser answers turns. Nil: gateway/converse on the router.
	Converser session.Converser
	// Session is the session manager's config (nil: session.DefaultConfig).
	Session *session.Config
	// Deps adjusts the session manager's dependencies before it is made
	// (an ActionHandler, counters, hooks, a classifier on st.Router).
	Deps func(st *Stack, d *session.Deps)
	// Voice makes the voice path (gateway/voice's Factory.New and Admit)
	// once the router and the session manager exist. Nil: the stack serves
	// no /v1/voice/sessions.
	Voice func(*Stack) (Voice, error)
	// RTC replaces rtc.LoopbackConfig; EngineOptions go to rtc.NewEngine.
	RTC           *rtc.Config
	EngineOptions []rtc.EngineOption
	// Logger receives the WebRTC engine's and handler's logs (nil: none).
	Logger *slog.Logger
	// Chat mounts GET /v1/chat, authenticated by ChatAuth (nil: dev mode,
	// every connection one test partner's).
	Chat     bool
	ChatAuth chat.Authenticate
	// Mux adds the test's own routes (/metrics, the web apps, reports).
	Mux func(*http.ServeMux)
}

// Voice is the voice path a test hands the stack: the session factory and,
// optionally, the admission check the rtc handler asks before each offer.
type Voice struct {
	NewSession rtc.SessionFactory
	Admit      func() error
}

// Stack is one running gateway stack. Everything in it is closed when the
// test ends, in the order the gateway's drain closes it.
type Stack struct {
	// Server serves the stack; URL is the voice session collection
	// (Server.URL + rtc.DefaultBasePath) and ChatURL the websocket.
	Server  *httptest.Server
	URL     string
	ChatURL string

	Router    *router.Router
	Local     *session.LocalSafety
	Layout    *glasses.Engine
	Converser session.Converser
	Sessions  *session.Manager
	Engine    *rtc.Engine
	Handler   *rtc.Handler
	Chat      *chat.Handler
}

// TestPartner is the partner every dev-mode connection of the stack
// belongs to.
const TestPartner = "p_test"

// DevAuth is the chat authentication of dev mode: every connection is the
// test partner's.
func DevAuth(*http.Request, string) (gateway.Principal, error) {
	return gateway.Principal{PartnerID: TestPartner}, nil
}

// NewStack starts the stack o describes; it is closed by t's cleanup.
func NewStack(t testing.TB, o Options) *Stack {
	t.Helper()
	st := &Stack{Router: o.Router, Local: sharedLocal(t)}
	fresh := o.FreshRouter || o.RouterConfig != nil
	// A chat stack with the test's own converser needs no router.
	needed := o.Converser == nil || o.Voice != nil || fresh
	if st.Router == nil && needed && !fresh {
		st.Router = Shared(t) // owned by TestMain: made before the guard looks
	}
	// Before anything the stack starts, a fresh router included (its
	// cleanup then runs before the check).
	LeakGuard(t)
	if st.Router == nil && fresh {
		st.Router = NewRouterEnv(t, o.RouterConfig, o.Env)
	}
	var err error
	if st.Layout, err = session.NewGlassesLayout(glasses.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	st.Converser = o.Converser
	var forget func(*session.Session)
	if st.Converser == nil {
		c, err := converse.New(st.Router, router.DefaultConfig(), converse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st.Converser, forget = c, func(s *session.Session) { c.Forget(s.ID()) }
	}
	scfg := session.DefaultConfig()
	if o.Session != nil {
		scfg = *o.Session
	}
	deps := session.Deps{Converser: st.Converser, Safety: st.Local, Layout: st.Layout, OnClosed: forget}
	if o.Deps != nil {
		o.Deps(st, &deps)
	}
	if st.Sessions, err = session.NewManager(scfg, deps); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	if o.Voice != nil {
		st.mountVoice(t, o, mux)
	}
	if o.Chat {
		auth := o.ChatAuth
		if auth == nil {
			auth = DevAuth
		}
		if st.Chat, err = chat.New(chat.DefaultConfig(), st.Sessions, auth, chat.Options{}); err != nil {
			t.Fatal(err)
		}
		mux.Handle("/v1/chat", st.Chat)
	}
	if o.Mux != nil {
		o.Mux(mux)
	}
	st.Server = httptest.NewServer(mux)
	st.URL = st.Server.URL + rtc.DefaultBasePath
	st.ChatURL = "ws" + strings.TrimPrefix(st.Server.URL, "http") + "/v1/chat"
	t.Cleanup(func() { st.close(t) })
	return st
}

func (st *Stack) mountVoice(t testing.TB, o Options, mux *http.ServeMux) {
	t.Helper()
	v, err := o.Voice(st)
	if err != nil {
		t.Fatal(err)
	}
	rcfg := rtc.LoopbackConfig()
	if o.RTC != nil {
		rcfg = *o.RTC
	}
	if st.Engine, err = rtc.NewEngine(rcfg, o.Logger, o.EngineOptions...); err != nil {
		t.Fatal(err)
	}
	if st.Handler, err = rtc.NewHandler(rtc.HandlerOptions{Engine: st.Engine, NewSession: v.NewSession, Admit: v.Admit, Logger: o.Logger}); err != nil {
		t.Fatal(err)
	}
	mux.Handle(rtc.DefaultBasePath, st.Handler)
	mux.Handle(rtc.DefaultBasePath+"/", st.Handler)
}

// close ends the stack as the gateway drains: media and chat first, then
// the server, the sessions, the WebRTC engine.
func (st *Stack) close(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if st.Handler != nil {
		if err := st.Handler.Close(ctx); err != nil {
			t.Errorf("rtc handler close: %v", err)
		}
	}
	if st.Chat != nil {
		if err := st.Chat.Close(ctx); err != nil {
			t.Errorf("chat close: %v", err)
		}
	}
	st.Server.Close()
	if err := st.Sessions.Close(ctx); err != nil {
		t.Errorf("session manager close: %v", err)
	}
	if st.Engine != nil {
		if err := st.Engine.Close(); err != nil {
			t.Errorf("rtc engine close: %v", err)
		}
	}
}

// The shared router (pocketsphinx decoders, espeak, the companion) is the
// costly part of the stack: the tests of one binary share it, and its
// TestMain closes it (CloseShared).
var (
	sharedMu     sync.Mutex // guards the shared router and detector
	sharedRouter *router.Router
	sharedSafety *session.LocalSafety
)

// SharedSafety is the test binary's local safety layer (the detector and
// the catalog for Region), made on first use.
func SharedSafety(t testing.TB) *session.LocalSafety {
	t.Helper()
	return sharedLocal(t)
}

func sharedLocal(t testing.TB) *session.LocalSafety {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSafety == nil {
		l, err := session.NewLocalSafety(Region)
		if err != nil {
			t.Fatal(err)
		}
		sharedSafety = l
	}
	return sharedSafety
}

// Shared returns the test binary's shared embedded router, made on first
// use with router.DefaultConfig and the local detector as its companion's
// assessor.
func Shared(t testing.TB) *router.Router {
	t.Helper()
	local := sharedLocal(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedRouter == nil {
		r, err := newRouter(router.DefaultConfig(), nil, local)
		if err != nil {
			t.Fatalf("shared router: %v", err)
		}
		sharedRouter = r
	}
	return sharedRouter
}

// CloseShared closes the shared router, if one was made (from TestMain,
// after m.Run).
func CloseShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedRouter != nil {
		_ = sharedRouter.Close()
		sharedRouter = nil
	}
}

// NewRouter makes a router of the test's own on cfg (nil:
// router.DefaultConfig), closed when the test ends, after the stacks made
// later that use it.
func NewRouter(t testing.TB, cfg *router.Config) *router.Router {
	t.Helper()
	return NewRouterEnv(t, cfg, nil)
}

// NewRouterEnv is NewRouter with the environment env (API keys of remote
// models).
func NewRouterEnv(t testing.TB, cfg *router.Config, env map[string]string) *router.Router {
	t.Helper()
	c := router.DefaultConfig()
	if cfg != nil {
		c = *cfg
	}
	r, err := newRouter(c, env, sharedLocal(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func newRouter(cfg router.Config, env map[string]string, local *session.LocalSafety) (*router.Router, error) {
	return router.New(cfg, func(k string) string { return env[k] }, router.Options{
		Assess: func(history []string, text string) safety.Assessment { return local.Assess(history, text, "") },
	})
}
