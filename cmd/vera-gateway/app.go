package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/voice"
	"github.com/veraneural/vera-gateway/gateway/web"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// app is the wired gateway: the HTTP edge and the packages mounted on it.
type app struct {
	srv      *gateway.Server
	log      *slog.Logger
	router   *router.Router
	sessions *session.Manager
	chat     *chat.Handler
	rtc      *rtc.Handler
	engine   *rtc.Engine
	owners   *voiceOwners
	ext      *extensions
	// admission is read by admit on every new voice session.
	admission admissionConfig
	counters  *safety.Counters
}

// newApp wires every package by hand. Anything that cannot work — a card
// of the safety catalog that does not lay out on a profile, a router slot
// naming an unknown model, a missing credential — stops start-up here.
func newApp(cfg fileConfig, getenv func(string) string, log *slog.Logger) (*app, error) {
	a := &app{log: log}
	if err := a.build(cfg, getenv); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

func (a *app) build(cfg fileConfig, getenv func(string) string) (err error) {
	log := a.log
	a.admission = cfg.Admission
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	profiles, err := cfg.Devices.Profiles()
	if err != nil {
		return fmt.Errorf("devices: %w", err)
	}
	catalog, err := safety.DefaultCatalog()
	if err != nil {
		return fmt.Errorf("safety catalog: %w", err)
	}
	if _, err := glasses.PrecomputeCatalog(profiles, catalog.All()); err != nil {
		return fmt.Errorf("safety catalog does not lay out on every device: %w", err)
	}
	local, err := session.NewLocalSafety(cfg.Safety.DefaultRegion)
	if err != nil {
		return err
	}
	a.counters = safety.NewCounters(gateway.NewSafetyCounters(reg))

	a.router, err = router.New(cfg.Router, getenv, router.Options{
		Registerer: reg, Logger: log.With("pkg", "router"),
		Assess: func(history []string, text string) safety.Assessment {
			return local.Assess(history, text, "")
		},
	})
	if err != nil {
		return fmt.Errorf("router: %w", err)
	}

	a.srv, err = gateway.New(cfg.Config, gateway.Options{Logger: log, Registry: reg,
		ValidateDevice: func(id string) error { _, err := devices.Lookup(id); return err }})
	if err != nil {
		return err
	}

	layout, err := session.NewGlassesLayout(cfg.Glasses)
	if err != nil {
		return err
	}
	conv := newConverser(a.router, cfg.Router)
	a.ext, err = newExtensions(cfg, reg, log, func() *session.Manager { return a.sessions })
	if err != nil {
		return err
	}
	conv.validate, conv.log, conv.tools = a.ext.tools.Validate, log.With("pkg", "actions"), a.ext.tools.OpenAI
	reg.MustRegister(conv.violations)
	a.ext.engineApprove = conv.approveUpstream
	a.ext.setTitle = func(id, title string) string { return string(a.sessions.SetTitle(id, title)) }
	a.ext.titles = newTitler(a.router.Oneshot, a.ext.setTitle, log.With("pkg", "titles"))
	reg.MustRegister(a.ext.titles.outcomes)
	// voices is assigned below; the sessions' unacknowledged-card hook
	// reaches it through this variable (nil until then, and nil-safe).
	var voices *voice.Factory
	a.sessions, err = session.NewManager(cfg.Session, session.Deps{
		Converser: conv, Safety: local, Layout: layout, Counters: a.counters,
		Actions: a.ext, Observer: a.ext, OnOpened: a.ext.opened,
		Logger: log.With("pkg", "session"),
		OnClosed: func(s *session.Session) {
			conv.forget(s.ID())
			a.ext.closed(s)
		},
		// A card nobody acknowledged in time is spoken in the session's
		// voice call, if it has one (the session also re-sends it and
		// notifies the phone surface).
		OnUnacked: func(s *session.Session, c event.SafetyCard, surface string) {
			if voices != nil {
				voices.OnUnacked(s, c, surface)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}

	a.chat, err = chat.New(cfg.Chat, a.sessions, a.chatAuth, chat.Options{Logger: log.With("pkg", "chat")})
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}

	voices, err = voice.NewFactory(cfg.Voice, voice.Deps{
		Listener: a.router, Speaker: a.router, Sessions: a.sessions, Logger: log.With("pkg", "voice"),
		Metrics: voice.NewMetrics(reg), Counters: a.counters,
		Owner: func(principal any) session.Owner {
			p, _ := principal.(gateway.Principal)
			return session.Owner{PartnerID: p.PartnerID, EndUserID: p.EndUserID}
		},
	})
	if err != nil {
		return err
	}
	a.owners = newVoiceOwners(voices.New)
	a.engine, err = rtc.NewEngine(cfg.RTC, log.With("pkg", "rtc"))
	if err != nil {
		return fmt.Errorf("rtc: %w", err)
	}
	a.rtc, err = rtc.NewHandler(rtc.HandlerOptions{
		Engine: a.engine, Logger: log.With("pkg", "rtc"), NewSession: a.owners.New,
		// The gateway's middleware authenticated the request already; a
		// request without a principal never reached here through it.
		Authorize: func(w http.ResponseWriter, r *http.Request) (any, bool) {
			p, ok := gateway.PrincipalFrom(r.Context())
			if !ok {
				gateway.WriteError(w, r, gateway.Errorf(gateway.AuthenticationError, "missing credentials"))
			}
			return p, ok
		},
		WriteError: gateway.WriteErrorStatus,
	})
	if err != nil {
		return fmt.Errorf("rtc: %w", err)
	}

	a.mount()
	return nil
}

func (a *app) mount() {
	s := a.srv
	s.Mount(s.OneshotRoute(a.router))
	for _, rt := range a.ext.routes() {
		s.Mount(rt)
	}
	s.Mount(gateway.Route{Method: http.MethodGet, Path: "/v1/audit/safety", Scope: gateway.ScopeAuditRead,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gateway.WriteJSON(w, http.StatusOK, a.counters.Snapshot())
		})})
	// The websocket authenticates itself: browsers send the token as a
	// subprotocol or query parameter, not as a header.
	s.Mount(gateway.Route{Method: http.MethodGet, Path: "/v1/chat", MaxBodyBytes: -1, CreatesSession: true, Handler: a.chat})
	voice := func(method, path string, h http.HandlerFunc, creates bool) gateway.Route {
		return gateway.Route{Method: method, Path: path, Scope: gateway.ScopeSessionsWrite, AllowClientToken: true,
			CreatesSession: creates, MaxBodyBytes: -1, Handler: h}
	}
	s.Mount(voice(http.MethodPost, rtc.DefaultBasePath, a.admit(a.rtc.Create), true))
	s.Mount(voice(http.MethodPatch, rtc.DefaultBasePath+"/{id}", a.owners.guard(a.rtc.Update), false))
	// A hang-up releases resources: it is never refused for rate.
	hangup := voice(http.MethodDelete, rtc.DefaultBasePath+"/{id}", a.owners.guard(a.rtc.Delete), false)
	hangup.NoRateLimit = true
	s.Mount(hangup)
	s.Mount(gateway.Route{Method: http.MethodGet, Path: "/", NoRateLimit: true, Handler: web.Handler()})
	s.Mount(gateway.Route{Method: http.MethodGet, Path: web.AssetPrefix, Prefix: true, NoRateLimit: true, Undocumented: true, Handler: web.Handler()})
}

// admit refuses a new voice session with 503 and Retry-After once
// admission.max_voice_sessions are live, so live sessions keep their CPU.
func (a *app) admit(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.rtc.Len() >= a.admission.MaxVoiceSessions {
			gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: a.admission.RetryAfterSeconds,
				Message: "the gateway is at its voice session limit; retry later"})
			return
		}
		next(w, r)
	}
}

// chatAuth resolves the websocket's principal with the gateway's rules
// (keys, client tokens, dev mode on loopback).
func (a *app) chatAuth(r *http.Request, token string) (chat.Principal, error) {
	p, e := a.srv.Authenticate(r, token)
	if e != nil {
		return chat.Principal{}, e
	}
	if !p.Has(gateway.ScopeSessionsWrite) {
		return chat.Principal{}, fmt.Errorf("%w: this credential lacks the %s scope", chat.ErrForbidden, gateway.ScopeSessionsWrite)
	}
	return chat.Principal{PartnerID: p.PartnerID, EndUserID: p.EndUserID, Device: p.Device}, nil
}

// drain gives live voice sessions until ctx's deadline to end by
// themselves (new ones are already refused), then closes voice
// connections, websockets and sessions. Websocket clients resume on
// another instance, so they are not waited for.
func (a *app) drain(ctx context.Context) {
	if a.rtc != nil && a.rtc.Len() > 0 {
		a.log.Info("waiting for live voice sessions", "sessions", a.rtc.Len())
		t := time.NewTicker(100 * time.Millisecond)
	wait:
		for a.rtc.Len() > 0 {
			select {
			case <-ctx.Done():
				break wait
			case <-t.C:
			}
		}
		t.Stop()
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if a.rtc != nil {
		errs = append(errs, a.rtc.Close(closeCtx))
	}
	if a.chat != nil {
		errs = append(errs, a.chat.Close(closeCtx))
	}
	if a.sessions != nil {
		errs = append(errs, a.sessions.Close(closeCtx))
	}
	if err := errors.Join(errs...); err != nil {
		a.log.Warn("drain incomplete", "err", err)
	}
}

// close releases what newApp built (after drain, or after a failed start).
func (a *app) close() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing to wait for: close at once
	a.drain(ctx)
	if a.engine != nil {
		_ = a.engine.Close()
	}
	if a.router != nil {
		_ = a.router.Close()
	}
	if a.ext != nil {
		a.ext.close(context.Background())
	}
}
