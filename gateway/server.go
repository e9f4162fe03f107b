package gateway

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
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
	routes   []Route
	metrics  *httpMetrics
}

// New builds a server from a validated config.
func New(cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gateway: config: %w", err)
	}
	s := &Server{cfg: cfg, log: opts.Logger, clock: clock.OrReal(opts.Clock), registry: opts.Registry,
		limiter: opts.RateLimiter, idem: opts.Idempotency, device: opts.ValidateDevice}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
		s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if s.limiter == nil {
		s.limiter = NewMemoryRateLimiter(cfg.Limits.RequestsPerMinute, s.clock)
	}
	if s.idem == nil {
		s.idem = NewMemoryIdempotencyStore(time.Duration(cfg.Idempotency.TTLSeconds)*time.Second, cfg.Idempotency.MaxEntries, s.clock)
	}
	if s.device == nil {
		s.device = func(string) error { return nil }
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
// around the router, so even 404s carry both.
func (s *Server) Handler() http.Handler {
	return withRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("VERA-Version", s.cfg.APIVersion)
		s.router.ServeHTTP(w, r)
	}))
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

// wrap applies, in order: panic recovery, metrics, drain refusal, auth and
// scope, rate limit, body limit, idempotency.
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
		if rt.CreatesSession && s.Draining() {
			WriteError(w, r, &Error{Type: Unavailable, Message: "gateway is draining: reconnect to another instance", RetryAfter: 5})
			return
		}
		if rt.Scope != "" {
			p, err := s.auth.Authenticate(r, rt.AllowClientToken, "")
			if err != nil {
				WriteError(w, r, err)
				return
			}
			if !p.Has(rt.Scope) {
				WriteError(w, r, Errorf(PermissionError, "this key lacks the %s scope", rt.Scope))
				return
			}
			r = r.WithContext(WithPrincipal(r.Context(), p))
			if key, limited := rateKey(p); limited && !rt.NoRateLimit {
				if ok, wait := s.limiter.Allow(key); !ok {
					WriteError(w, r, &Error{Type: RateLimited, Message: fmt.Sprintf("more than %d requests per minute for this key", s.cfg.Limits.RequestsPerMinute), RetryAfter: retryAfterSeconds(wait)})
					return
				}
			}
		}
		if limit > 0 {
			if r.ContentLength > limit {
				WriteError(w, r, tooLarge(limit))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		h.ServeHTTP(w, r)
	}))
}

// rateKey is the bucket a request counts against: a partner key's own
// bucket (the Partner API's per-key limit), or one per end user for client
// tokens, so that a partner's devices do not share the partner's server
// budget. Dev mode (loopback only, no keys) is not limited: it is where the
// load tool and local clients run.
func rateKey(p Principal) (string, bool) {
	switch p.Via {
	case "key":
		return "key\x00" + p.PartnerID, true
	case "token":
		return "token\x00" + p.PartnerID + "\x00" + p.EndUserID, true
	default:
		return "", false
	}
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
		scoped := p.PartnerID + "\x00" + r.Method + "\x00" + r.URL.Path + "\x00" + key
		stored, err := s.idem.Begin(scoped, sha256.Sum256(body))
		switch {
		case err == ErrIdempotencyMismatch:
			WriteError(w, r, Errorf(Conflict, "Idempotency-Key %q was already used with a different request body", key))
			return
		case err == ErrIdempotencyInFlight:
			WriteError(w, r, &Error{Type: Conflict, Message: "a request with this Idempotency-Key is still in progress", RetryAfter: 1})
			return
		case err != nil:
			WriteError(w, r, err)
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
				s.idem.Release(scoped)
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
			s.idem.Complete(scoped, StoredResponse{Status: rec.status, Header: h, Body: rec.buf.Bytes()})
			completed = true
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
