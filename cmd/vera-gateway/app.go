package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	bolt "go.etcd.io/bbolt"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/actions"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/boltstore"
	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/cluster"
	"github.com/veraneural/vera-gateway/gateway/converse"
	"github.com/veraneural/vera-gateway/gateway/hooks"
	"github.com/veraneural/vera-gateway/gateway/inbox"
	"github.com/veraneural/vera-gateway/gateway/pairing"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/titles"
	"github.com/veraneural/vera-gateway/gateway/tools"
	"github.com/veraneural/vera-gateway/gateway/voice"
	"github.com/veraneural/vera-gateway/gateway/web"
	"github.com/veraneural/vera-gateway/gateway/webhook"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// app is the wired gateway: the HTTP edge and the packages mounted on it.
type app struct {
	srv      *gateway.Server
	log      *slog.Logger
	counters *safety.Counters
	router   *router.Router
	sessions *session.Manager
	chat     *chat.Handler
	rtc      *rtc.Handler
	engine   *rtc.Engine
	// The partner's features around sessions, on the embedded store.
	db         *bolt.DB
	tmpDir     string
	dispatcher *webhook.Dispatcher
	tools      *tools.Registry
	audit      *audit.Log
	titles     *titles.Titler
	hooks      *hooks.Hooks
	actions    *actions.Flow
	// cluster is this node's membership when the config has a cluster
	// section; nil (alone) passes everything through.
	cluster *cluster.Cluster
	// pairings keep paired glasses (bbolt alone, Redis in a cluster).
	pairings pairing.Store
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
	if a.router, err = router.New(cfg.Router, getenv, router.Options{
		Registerer: reg, Logger: log.With("pkg", "router"),
		Assess: func(history []string, text string) safety.Assessment {
			return local.Assess(history, text, "")
		},
		// A card the router fills itself (an engine safety object it cannot
		// read) has the deployment's resources.
		FallbackResources: func(l safety.Level) []safety.Resource {
			return safety.ResourcesFor(l, catalog, safety.RegionPrefs{Default: cfg.Safety.DefaultRegion})
		},
	}); err != nil {
		return fmt.Errorf("router: %w", err)
	}
	if err := a.newEdge(cfg, reg); err != nil {
		return err
	}
	if err := a.buildExtensions(cfg, reg); err != nil {
		return err
	}
	conv, err := converse.New(a.router, cfg.Router, converse.Options{Tools: a.tools, Registerer: reg, Logger: log.With("pkg", "actions")})
	if err != nil {
		return err
	}
	if a.actions, err = actions.New(actions.Options{Sessions: a.hooks.Get, Audit: a.audit, Webhooks: a.dispatcher,
		Inbox: a.hooks.Inbox(), Engine: conv.ApproveUpstream, OnApproved: a.cluster.ActionApproved, Logger: log.With("pkg", "actions")}); err != nil {
		return err
	}
	shares := newShares(cfg, log)
	a.cluster.Shares(shares) // in a cluster, counted across every node
	layout, err := session.NewGlassesLayout(cfg.Glasses)
	if err != nil {
		return err
	}
	if a.sessions, err = session.NewManager(cfg.Session, session.Deps{
		Converser: conv, Safety: local, Layout: layout, Counters: a.counters,
		Actions: a.actions, Observer: a.hooks,
		OnOpened: a.opened,
		Logger:   log.With("pkg", "session"),
		OnClosed: a.closer(conv),
		// The safety slot, if configured, judges each user turn beside
		// converse (nil: none, nothing added to a turn).
		Classifier: converse.NewClassifier(a.router), ClassifyBudget: time.Duration(cfg.Safety.ClassifyBudgetMs) * time.Millisecond,
		Admit: func(o session.Owner) (func(), error) {
			return shares.Admit(gateway.ShareSessions, o.PartnerID, o.EndUserID)
		},
	}); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if a.chat, err = chat.New(cfg.Chat, a.sessions, a.chatAuth, chat.Options{Logger: log.With("pkg", "chat"), Shares: shares, Elsewhere: a.cluster.ResumeElsewhere}); err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	voices, err := voice.NewFactory(cfg.Voice, voice.Deps{
		Listener: a.router, Speaker: a.router, Sessions: a.sessions, Logger: log.With("pkg", "voice"),
		Metrics: voice.NewMetrics(reg), Counters: a.counters, Recognisers: listenPool(cfg.Router),
	})
	if err != nil {
		return err
	}
	if a.engine, err = rtc.NewEngine(cfg.RTC, log.With("pkg", "rtc")); err != nil {
		return fmt.Errorf("rtc: %w", err)
	}
	if a.rtc, err = rtc.NewHandler(rtc.HandlerOptions{
		Engine: a.engine, Logger: log.With("pkg", "rtc"), NewSession: voices.New, Admit: voices.Admit,
		MaxSessions: cfg.Admission.MaxVoiceSessions, RetryAfterSeconds: cfg.Admission.RetryAfterSeconds,
		Authorize: gateway.RequirePrincipal, // the routes below authenticate first
		Shares:    shares,
		OnClosed:  func(id string, _ error, _ rtc.Stats) { a.cluster.VoiceClosed(id) },
	}); err != nil {
		return fmt.Errorf("rtc: %w", err)
	}
	if err := a.mountGlasses(reg); err != nil {
		return fmt.Errorf("glasses: %w", err)
	}
	a.mount()
	return nil
}

// newEdge joins the cluster when the config has one, then builds the HTTP
// edge on its rate limits and idempotency store (alone: in memory).
func (a *app) newEdge(cfg fileConfig, reg *prometheus.Registry) (err error) {
	if cfg.Cluster.Enabled() {
		if a.cluster, err = cluster.New(context.Background(), cfg.Cluster, cluster.Options{Logger: a.log.With("pkg", "cluster"), Registerer: reg}); err != nil {
			return err
		}
	}
	a.srv, err = gateway.New(cfg.edge(), gateway.Options{Logger: a.log, Registry: reg,
		RateLimiter: a.cluster.RateLimiter(), Idempotency: a.cluster.Idempotency(cfg.Idempotency),
		ValidateDevice: func(id string) error { _, err := devices.Lookup(id); return err }})
	return err
}

// opened is a session's start (or resume) for the inbox, titles and, in a
// cluster, the session directory.
func (a *app) opened(s *session.Session) {
	a.hooks.Opened(s)
	a.cluster.Opened(s)
}

// closer is a session's end for the converser, the hooks and the
// directory.
func (a *app) closer(conv *converse.Converser) func(*session.Session) {
	return func(s *session.Session) {
		conv.Forget(s.ID())
		a.hooks.Closed(s)
		a.cluster.Closed(s)
	}
}

// newShares sizes the fair shares of the global caps per partner and per
// end user (limits.per_partner, limits.per_token); dev mode has one
// partner, so only the global caps hold (nil).
func newShares(cfg fileConfig, log *slog.Logger) *gateway.Shares {
	if cfg.DevMode() {
		return nil
	}
	shares := gateway.NewShares(cfg.Limits, map[gateway.ShareKind]int{gateway.ShareChats: cfg.Chat.MaxConnections,
		gateway.ShareSessions: cfg.Session.MaxSessions, gateway.ShareVoiceSessions: cfg.Admission.MaxVoiceSessions},
		cfg.Admission.RetryAfterSeconds)
	for _, k := range []gateway.ShareKind{gateway.ShareChats, gateway.ShareSessions, gateway.ShareVoiceSessions} {
		partner, token := shares.Caps(k)
		log.Info("fair shares", "of", string(k), "per_partner", partner, "per_token", token)
	}
	return shares
}

// buildExtensions opens the store and builds the partner's features around
// sessions: signed webhooks, tools, the decision audit, titles and the
// hooks that feed them (with the session inbox).
func (a *app) buildExtensions(cfg fileConfig, reg prometheus.Registerer) (err error) {
	log := a.log
	st, err := a.openStores(cfg)
	if err != nil {
		return err
	}
	a.pairings = st.Pairing
	if a.dispatcher, err = webhook.NewDispatcher(cfg.WebhookDelivery, st.Webhook, webhook.Options{
		Endpoints: cfg.partnerWebhooks(), Dev: cfg.DevMode(), Logger: log.With("pkg", "webhook"), Registerer: reg}); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	if a.tools, err = tools.New(cfg.Tools, st.Tools, nil); err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	if a.audit, err = audit.New(cfg.Audit, st.Audit, audit.Options{Logger: log.With("pkg", "audit")}); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if a.titles, err = titles.New(a.router, titles.Options{Registerer: reg, Logger: log.With("pkg", "titles")}); err != nil {
		return err
	}
	if a.hooks, err = hooks.New(hooks.Options{Inbox: cfg.Inbox, InboxStore: st.Inbox, Turns: webhook.NewTurnReporter(a.dispatcher),
		Titles: a.titles, Logger: log.With("pkg", "inbox")}); err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	return nil
}

// openStores are the cluster's Redis stores, or alone the bbolt file's
// (tools in memory).
func (a *app) openStores(cfg fileConfig) (st cluster.Stores, err error) {
	if a.cluster != nil {
		return a.cluster.Stores(cfg.Inbox.HoldFor, cfg.WebhookDelivery.Timeout), nil
	}
	path := cfg.Store.Path
	if path == "" {
		if a.tmpDir, err = os.MkdirTemp("", "vera-gateway-store"); err != nil {
			return st, fmt.Errorf("store: %w", err)
		}
		path = filepath.Join(a.tmpDir, "vera.db")
		// Expected in dev mode (make run); in production it loses data.
		level := slog.LevelWarn
		if cfg.DevMode() {
			level = slog.LevelInfo
		}
		a.log.Log(context.Background(), level, "store.path is not set: inbox messages, webhook deliveries and the decision audit will not survive a restart")
	}
	if a.db, err = boltstore.Open(path); err != nil {
		return st, fmt.Errorf("store.path: %w", err)
	}
	if st.Webhook, err = webhook.NewBoltStore(a.db); err != nil {
		return st, fmt.Errorf("webhooks: %w", err)
	}
	if st.Audit, err = audit.NewBoltStore(a.db); err != nil {
		return st, fmt.Errorf("audit: %w", err)
	}
	if st.Inbox, err = inbox.NewBoltStore(a.db); err != nil {
		return st, fmt.Errorf("inbox: %w", err)
	}
	if st.Pairing, err = pairing.NewBoltStore(a.db); err != nil {
		return st, err
	}
	return st, nil
}

func (a *app) mount() {
	s, cl := a.srv, a.cluster
	// Routes on a session another node owns reach that node (cluster).
	hasSession := func(id string) bool { _, ok := a.hooks.Get(id); return ok }
	hasVoice := func(id string) bool { _, ok := a.rtc.Conn(id); return ok }
	for _, rt := range append(a.tools.Routes(), router.OneshotRoute(a.router, s.Config().Limits, a.log.With("pkg", "router")),
		cl.Owned(cluster.Session, a.hooks.Inbox().Route(), hasSession), a.audit.Route(), audit.SafetyRoute(cl.SafetyCounters(a.counters)),
		cl.Owned(cluster.Action, a.actions.Route(), nil), cl.Owned(cluster.Session, titles.Route(a.hooks.Get), hasSession)) {
		s.Mount(rt)
	}
	for _, rt := range cl.InternalRoutes() {
		s.Mount(rt)
	}
	// Browsers send the websocket's client token as a subprotocol or query
	// parameter, not as a header; the edge authenticates and rate-limits it
	// like any other request, then lifts the deadlines for the upgrade.
	s.Mount(cl.Chat(gateway.Route{Method: http.MethodGet, Path: "/v1/chat", Scope: gateway.ScopeSessionsWrite, AllowClientToken: true,
		Token: chat.TokenFrom, Upgrade: true, MaxBodyBytes: -1, CreatesSession: true, Handler: a.chat}))
	voice := func(method, path string, h http.HandlerFunc, creates bool) gateway.Route {
		return gateway.Route{Method: method, Path: path, Scope: gateway.ScopeSessionsWrite, AllowClientToken: true,
			CreatesSession: creates, MaxBodyBytes: -1, Handler: h}
	}
	s.Mount(voice(http.MethodPost, rtc.DefaultBasePath, cl.VoiceCreated(http.HandlerFunc(a.rtc.Create)).ServeHTTP, true))
	s.Mount(cl.Owned(cluster.Voice, voice(http.MethodPatch, rtc.DefaultBasePath+"/{id}", a.rtc.Update, false), hasVoice))
	// A hang-up releases resources: it is never refused for rate.
	hangup := voice(http.MethodDelete, rtc.DefaultBasePath+"/{id}", a.rtc.Delete, false)
	hangup.NoRateLimit = true
	s.Mount(cl.Owned(cluster.Voice, hangup, hasVoice))
	s.Mount(gateway.Route{Method: http.MethodGet, Path: "/", NoRateLimit: true, Handler: web.Handler()})
	s.Mount(gateway.Route{Method: http.MethodGet, Path: web.AssetPrefix, Prefix: true, NoRateLimit: true, Undocumented: true, Handler: web.Handler()})
}

// chatAuth is the principal the edge authenticated for the websocket
// (keys, client tokens, dev mode on loopback).
func (a *app) chatAuth(r *http.Request, _ string) (gateway.Principal, error) {
	p, ok := gateway.PrincipalFrom(r.Context())
	if !ok {
		return gateway.Principal{}, errors.New("chat: not authenticated by the edge")
	}
	if !p.Has(gateway.ScopeSessionsWrite) {
		return gateway.Principal{}, fmt.Errorf("%w: this credential lacks the %s scope", chat.ErrForbidden, gateway.ScopeSessionsWrite)
	}
	return p, nil
}

// drain gives live voice sessions until ctx's deadline to end by
// themselves (new ones are already refused), then closes voice
// connections, websockets and sessions. Websocket clients resume on
// another instance, so they are not waited for.
func (a *app) drain(ctx context.Context) {
	a.cluster.StartDrain(context.Background()) // draining in Redis too (nil-safe)
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

// close releases what newApp built (after drain, or after a failed start):
// the loops and naming calls first, the dispatcher before the database it
// writes to.
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
	a.hooks.Close() // nil-safe, as are the two below
	a.actions.Close()
	a.titles.Close()
	var errs []error
	if a.dispatcher != nil {
		errs = append(errs, a.dispatcher.Close(context.Background()))
	}
	errs = append(errs, a.cluster.Close(context.Background())) // after every store that uses its Redis
	if a.db != nil {
		errs = append(errs, a.db.Close())
	}
	if a.tmpDir != "" {
		errs = append(errs, os.RemoveAll(a.tmpDir))
	}
	if err := errors.Join(errs...); err != nil {
		a.log.Warn("close", "err", err)
	}
}

// listenPool is how many turns the listen slot recognises at once when its
// first model is the embedded recogniser (router.sphinx.pool), for voice
// admission; 0 for a remote one, which is not a bounded pool here.
func listenPool(rc router.Config) int {
	r := rc.Resolved()
	names := r.Slots[router.SlotListen]
	if len(names) == 0 {
		return 0
	}
	for _, m := range r.Models {
		if m.Name == names[0] && m.Provider == router.ProviderPocketsphinx {
			return r.Sphinx.Pool
		}
	}
	return 0
}
