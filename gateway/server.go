package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Options are the server's injected dependencies. Zero values get in-memory
// defaults and the wall clock.
type Options struct {
	Logger *slog.Logger
	// Clock is the clock for tokens, rate limits and idempotency expiry;
	// nil is the wall clock.
	Clock clock.Clock
	// Registry receives the server's metrics and is served at /metrics.
	Registry *prometheus.Registry
	// RateLimiter and Idempotency replace the in-memory stores.
	RateLimiter RateLimiter
	Idempotency IdempotencyStore
	// ValidateDevice checks a device profile id for client tokens; nil
	// accepts any non-empty id.
	ValidateDevice func(id string) error
}

// Route is one endpoint and the conventions it needs.
type Route struct {
	Method string
	Path   string
	// Scope the principal must hold; empty means the route is public
	// (health, metrics, the web client).
	Scope string
	// AllowClientToken admits client tokens as well as partner keys.
	AllowClientToken bool
	// Idempotent honours Idempotency-Key (POST routes).
	Idempotent bool
	// CreatesSession refuses the request with 503 while draining.
	CreatesSession bool
	// MaxBodyBytes overrides limits.body_bytes; -1 leaves the body unbounded
	// (websocket upgrades read no body).
	MaxBodyBytes int64
	// NoRateLimit exempts the route from the per-key limit (health probes,
	// static files).
	NoRateLimit bool
	// Prefix matches every path under Path (static assets).
	Prefix bool
	// Undocumented keeps a route out of Routes (and so out of the OpenAPI
	// coverage check): static assets only.
	Undocumented bool
	// Upgrade marks a websocket route: once authenticated, the body and
	// write deadlines are cleared (the connection keeps itself alive with
	// pings).
	Upgrade bool
	// Token finds a credential outside the Authorization header (a
	// websocket subprotocol or query parameter). Only client tokens are
	// accepted there: a partner key never belongs in a URL or a browser.
	Token func(r *http.Request) string
	// WriteTimeout overrides limits.write_timeout for a route that waits
	// longer on purpose.
	WriteTimeout time.Duration
	Handler      http.Handler
}

// Server is the gateway's HTTP edge.
type Server struct {
	cfg      Config
	log      *slog.Logger
	clock    clock.Clock
	router   *mux.Router
	registry *prometheus.Registry
	auth     *authenticator
	tokens   *TokenIssuer
	limiter  RateLimiter
	idem     IdempotencyStore
	device   func(string) error
	draining atomic.Bool
	// failed are the sources whose failed authentications this node saw
	// lately: only they ask the limiter before authenticating.
	failed  *failedSources
	routes  []Route
	metrics *httpMetrics
	// Connection bounds (listen.go): open connections per source, requests
	// in flight per source named by a trusted proxy, and the proxies.
	conns    *sourceCounts
	inflight *sourceCounts
	proxies  []netip.Prefix
}

// New builds a server from a validated config.
func New(cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gateway: config: %w", err)
	}
	s := &Server{cfg: cfg, log: opts.Logger, clock: clock.OrReal(opts.Clock), registry: opts.Registry,
		limiter: opts.RateLimiter, idem: opts.Idempotency, device: opts.ValidateDevice, failed: newFailedSources()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
		s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if s.limiter == nil {
		s.limiter = NewMemoryRateLimiter(s.clock)
	}
	if s.idem == nil {
		s.idem = NewMemoryIdempotencyStore(time.Duration(cfg.Idempotency.TTLSeconds)*time.Second, cfg.Idempotency.MaxEntries, s.clock)
	}
	if s.device == nil {
		s.device = func(string) error { return nil }
	}
	s.conns = newSourceCounts(cfg.Limits.MaxConnectionsPerSource)
	s.inflight = newSourceCounts(cfg.Limits.MaxConnectionsPerSource)
	for _, p := range cfg.Limits.TrustedProxies {
		pfx, _ := parseCIDR(p) // Validate checked it
		s.proxies = append(s.proxies, pfx)
	}
	s.tokens = NewTokenIssuer(cfg.Auth.TokenSecret, s.clock)
	s.auth = newAuthenticator(cfg.Auth, s.tokens)
	s.metrics = newHTTPMetrics(s.registry)
	s.router = mux.NewRouter()
	s.router.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, Errorf(NotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	s.router.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, &Error{Type: InvalidRequest, Message: fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path), HTTPStatus: http.StatusMethodNotAllowed})
	})
	s.mountBuiltins()
	return s, nil
}

// Config returns the server's configuration.
func (s *Server) Config() Config { return s.cfg }

// Registry returns the metrics registry served at /metrics.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Tokens returns the client-token issuer.
func (s *Server) Tokens() *TokenIssuer { return s.tokens }

// Handler returns the root handler: request ids and the version header
// around the router, so even 404s carry both; the request's source (and
// the in-flight cap of sources behind a trusted proxy); in dev mode, the
// loopback Host and cross-site request checks.
func (s *Server) Handler() http.Handler {
	return withRequestID(s.withSource(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("VERA-Version", s.cfg.APIVersion)
		if s.cfg.DevMode() {
			if err := devModeRefusal(r); err != nil {
				WriteError(w, r, err)
				return
			}
		}
		s.router.ServeHTTP(w, r)
	})))
}

// Authenticate resolves a principal for sub-packages that take credentials
// outside the Authorization header (websocket subprotocols). It applies the
// same rules as mounted routes with AllowClientToken.
func (s *Server) Authenticate(r *http.Request, token string) (Principal, *Error) {
	return s.auth.Authenticate(r, true, token)
}

// Mount adds a route with the conventions it asks for.
func (s *Server) Mount(rt Route) {
	s.routes = append(s.routes, rt)
	if rt.Prefix {
		s.router.PathPrefix(rt.Path).Handler(s.wrap(rt)).Methods(rt.Method)
		return
	}
	s.router.Handle(rt.Path, s.wrap(rt)).Methods(rt.Method)
}

// Routes lists mounted routes as "METHOD PATH", sorted, for the OpenAPI
// coverage test.
func (s *Server) Routes() []string {
	var out []string
	for _, rt := range s.routes {
		if !rt.Undocumented {
			out = append(out, rt.Method+" "+rt.Path)
		}
	}
	sort.Strings(out)
	return out
}

// StartDrain makes /readyz fail and refuses new sessions with 503. Live
// sessions are the owners' to end within the grace.
func (s *Server) StartDrain() { s.draining.Store(true) }

// Draining reports whether StartDrain was called.
func (s *Server) Draining() bool { return s.draining.Load() }

func (s *Server) mountBuiltins() {
	s.Mount(Route{Method: http.MethodGet, Path: "/healthz", NoRateLimit: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})})
	s.Mount(Route{Method: http.MethodGet, Path: "/readyz", NoRateLimit: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Draining() {
			WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
			return
		}
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})})
	s.Mount(Route{Method: http.MethodGet, Path: "/metrics", NoRateLimit: true,
		Handler: promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry})})
	s.Mount(Route{Method: http.MethodPost, Path: "/v1/client_tokens", Scope: ScopeSessionsWrite, Idempotent: true,
		Handler: http.HandlerFunc(s.handleClientToken)})
}

// wrap applies, in order: panic recovery, metrics, the request's
// deadlines, drain refusal, the auth-failure throttle, auth and scope, rate
// limit, body limit, idempotency.
func (s *Server) wrap(rt Route) http.Handler {
	h := rt.Handler
	if rt.Idempotent {
		h = s.withIdempotency(h)
	}
	limit := rt.MaxBodyBytes
	if limit == 0 {
		limit = s.cfg.Limits.BodyBytes
	}
	return s.metrics.instrument(rt.Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "route", rt.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				WriteError(w, r, Errorf(InternalError, "internal error"))
			}
		}()
		r = s.deadlines(w, r, rt)
		if rt.CreatesSession && s.Draining() {
			WriteError(w, r, &Error{Type: Unavailable, Message: "gateway is draining: reconnect to another instance", RetryAfter: 5})
			return
		}
		if rt.Scope != "" {
			p, ok := s.authorize(w, r, rt)
			if !ok {
				return
			}
			r = r.WithContext(WithPrincipal(r.Context(), p))
			if !rt.NoRateLimit && !s.allow(w, r, p) {
				return
			}
		}
		if rt.Upgrade {
			clearDeadlines(w)
		}
		if limit > 0 {
			if r.ContentLength > limit {
				w.Header().Set("Connection", "close")
				WriteError(w, r, tooLarge(limit))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		h.ServeHTTP(w, r)
	}))
}

// authorize runs the auth-failure throttle, then authentication and the
// scope check. A refused request with a body is answered without reading
// it, and its connection is closed.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, rt Route) (Principal, bool) {
	refuse := func(err *Error) (Principal, bool) {
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
		}
		WriteError(w, r, err)
		return Principal{}, false
	}
	src, now := SourceAddr(r.Context()), s.clock.Now()
	fails := Bucket{Key: "authfail\x00" + src.String(), PerMinute: s.cfg.Limits.AuthFailuresPerMinute}
	throttled := func(wait time.Duration) (Principal, bool) {
		s.failed.mark(src, now)
		return refuse(&Error{Type: RateLimited, RetryAfter: retryAfterSeconds(wait),
			Message: fmt.Sprintf("more than %d failed authentications per minute from this address", s.cfg.Limits.AuthFailuresPerMinute)})
	}
	// Only a source that failed here lately is asked about first (see
	// failedSources): the common request costs the limiter nothing.
	if s.failed.suspect(src, now) {
		if wait, err := s.limiter.Wait(r.Context(), fails); err == nil && wait > 0 {
			return throttled(wait)
		}
	}
	token := ""
	if rt.Token != nil {
		token = rt.Token(r)
	}
	p, err := s.auth.Authenticate(r, rt.AllowClientToken, token)
	if err != nil {
		s.failed.mark(src, now)
		if d, terr := s.limiter.Take(r.Context(), fails); terr == nil && !d.OK {
			return throttled(d.RetryAfter) // charged on another node: throttled already
		}
		return refuse(err)
	}
	if !p.Has(rt.Scope) {
		return refuse(Errorf(PermissionError, "this key lacks the %s scope", rt.Scope))
	}
	return p, true
}

// deadlines bounds the request's body read (limits.body_timeout) and its
// response (limits.write_timeout or the route's). The read deadline is set
// only while a body remains and cleared once it is read, so that a handler
// that then waits (on a model) is not cancelled by its expiry.
func (s *Server) deadlines(w http.ResponseWriter, r *http.Request, rt Route) *http.Request {
	rc := http.NewResponseController(w)
	wt := s.cfg.Limits.WriteTimeout
	if rt.WriteTimeout > 0 {
		wt = rt.WriteTimeout
	}
	now := time.Now()
	_ = rc.SetWriteDeadline(now.Add(wt))
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		if rc.SetReadDeadline(now.Add(s.cfg.Limits.BodyTimeout)) == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
	}
	return r
}

// deadlineBody clears the read deadline when its body is done.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// clearDeadlines lifts the request's deadlines from an upgraded connection.
func clearDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// rateBuckets are the buckets a request of p takes from: every request
// made with a partner key or any of its client tokens counts against the
// key's limits.requests_per_minute; a client token's request also against
// its end user's own limits.per_end_user_rpm, so one device cannot spend
// its partner's budget. Dev mode (loopback only, no keys) is not limited:
// it is where the load tool and local clients run.
func (s *Server) rateBuckets(p Principal) []Bucket {
	partner := Bucket{Key: "partner\x00" + p.PartnerID, PerMinute: s.cfg.Limits.RequestsPerMinute}
	switch p.Via {
	case "key":
		return []Bucket{partner}
	case "token":
		return []Bucket{partner, {Key: "user\x00" + p.PartnerID + "\x00" + p.EndUserID, PerMinute: s.cfg.Limits.PerEndUserRPM}}
	default:
		return nil
	}
}

// allow takes p's request from its buckets, or writes 429 with the exact
// Retry-After and reports false. A limiter that cannot decide (the
// cluster's Redis is down) refuses with 503 and Retry-After: a partner's
// limit is not lifted by an outage. Routes that must never be refused
// (hang-ups, health) are NoRateLimit and never ask.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, p Principal) bool {
	bs := s.rateBuckets(p)
	if len(bs) == 0 {
		return true
	}
	d, err := s.limiter.Take(r.Context(), bs...)
	if err != nil {
		s.log.Warn("rate limiter unavailable; request refused", "err", err)
		WriteError(w, r, &Error{Type: Unavailable, RetryAfter: 1, Message: "rate limits cannot be checked right now; retry"})
		return false
	}
	if d.OK {
		return true
	}
	msg := fmt.Sprintf("more than %d requests per minute for this partner key and its client tokens", s.cfg.Limits.RequestsPerMinute)
	if d.Refused == 1 {
		msg = fmt.Sprintf("more than %d requests per minute for this end user", s.cfg.Limits.PerEndUserRPM)
	}
	WriteError(w, r, &Error{Type: RateLimited, Message: msg, RetryAfter: retryAfterSeconds(d.RetryAfter)})
	return false
}

// maxIdempotencyKeyLen bounds the Idempotency-Key header.
const maxIdempotencyKeyLen = 255

// withIdempotency replays the stored response of a repeated Idempotency-Key
// with the same body, refuses it with 409 for a different body, and stores
// every response below 500 (5xx releases the key so the retry runs again).
func (s *Server) withIdempotency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if key == "" {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > maxIdempotencyKeyLen {
			WriteError(w, r, Errorf(InvalidRequest, "Idempotency-Key must be at most %d characters", maxIdempotencyKeyLen))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			WriteError(w, r, jsonError(err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p, _ := PrincipalFrom(r.Context())
		ik := IdempotencyKey{Partner: p.PartnerID, Scope: r.Method + " " + r.URL.Path, Key: key}
		ctx := r.Context()
		stored, err := s.idem.Begin(ctx, ik, sha256.Sum256(body))
		switch {
		case err == ErrIdempotencyMismatch:
			WriteError(w, r, Errorf(Conflict, "Idempotency-Key %q was already used with a different request body", key))
			return
		case err == ErrIdempotencyInFlight:
			WriteError(w, r, &Error{Type: Conflict, Message: "a request with this Idempotency-Key is still in progress", RetryAfter: 1})
			return
		case err != nil:
			s.log.Warn("idempotency store unavailable", "err", err)
			WriteError(w, r, &Error{Type: Unavailable, Message: "the idempotency store is unavailable; retry with the same Idempotency-Key", RetryAfter: 1})
			return
		case stored != nil:
			for k, v := range stored.Header {
				w.Header()[k] = v
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(stored.Status)
			_, _ = w.Write(stored.Body)
			return
		}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK, max: s.cfg.Idempotency.MaxResponseBytes}
		completed := false
		defer func() {
			if !completed {
				_ = s.idem.Release(context.WithoutCancel(ctx), ik)
			}
		}()
		next.ServeHTTP(rec, r)
		if rec.status < 500 && !rec.overflow {
			h := http.Header{}
			for _, k := range []string{"Content-Type", "Location", "Etag"} {
				if v := w.Header().Values(k); len(v) > 0 {
					h[k] = v
				}
			}
			completed = s.idem.Complete(context.WithoutCancel(ctx), ik, StoredResponse{Status: rec.status, Header: h, Body: rec.buf.Bytes()}) == nil
		}
	})
}

// recorder copies a response while it is written, up to max bytes.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	buf         bytes.Buffer
	max         int
	overflow    bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if r.buf.Len()+len(b) > r.max {
		r.overflow = true
	} else {
		r.buf.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

type clientTokenRequest struct {
	EndUserID  string `json:"end_user_id"`
	Device     string `json:"device"`
	TTLSeconds int    `json:"ttl_seconds"`
}

type clientTokenResponse struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expires_at"`
	Device    string `json:"device"`
}

// handleClientToken turns a partner key into a short-lived token for one end
// user's device, so keys never reach apps or browsers.
func (s *Server) handleClientToken(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	if p.Via == "token" {
		WriteError(w, r, Errorf(PermissionError, "client tokens cannot mint client tokens"))
		return
	}
	var req clientTokenRequest
	if err := DecodeJSON(r, &req); err != nil {
		WriteError(w, r, err)
		return
	}
	if err := ValidateEndUserID(req.EndUserID); err != nil {
		WriteError(w, r, err)
		return
	}
	if strings.TrimSpace(req.Device) == "" {
		WriteError(w, r, Errorf(InvalidRequest, "device is required (a device profile id)"))
		return
	}
	if err := s.device(req.Device); err != nil {
		WriteError(w, r, Errorf(InvalidRequest, "device: %v", err))
		return
	}
	ttl := req.TTLSeconds
	switch {
	case ttl == 0:
		ttl = s.cfg.Auth.TokenTTLSeconds
	case ttl < 1 || ttl > s.cfg.Auth.TokenMaxTTL:
		WriteError(w, r, Errorf(InvalidRequest, "ttl_seconds must be between 1 and %d", s.cfg.Auth.TokenMaxTTL))
		return
	}
	tok, exp, err := s.tokens.Issue(p.PartnerID, req.EndUserID, req.Device, []string{ScopeSessionsWrite}, time.Duration(ttl)*time.Second)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusCreated, clientTokenResponse{Token: tok, ExpiresAt: exp.UTC().Format(time.RFC3339), Device: req.Device})
}

// DebugHandler serves pprof; cmd mounts it only on the loopback debug
// listener.
func DebugHandler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}
