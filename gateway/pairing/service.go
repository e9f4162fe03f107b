package pairing

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Issuer mints client tokens; *gateway.TokenIssuer is one.
type Issuer interface {
	Issue(partner, endUser, device string, scopes []string, ttl time.Duration) (string, time.Time, error)
}

// Options are the service's collaborators.
type Options struct {
	// Tokens mints the client tokens a pairing hands out. Required.
	Tokens Issuer
	// TokenTTL is the life of those tokens (the gateway's
	// auth.token_ttl_seconds). Required.
	TokenTTL time.Duration
	// ValidateDevice checks a device profile id; nil accepts any.
	ValidateDevice func(id string) error
	// Clock is the clock; nil is the wall clock.
	Clock clock.Clock
	// RateLimiter keeps the per-address buckets of exchange and refresh
	// (a shared one makes them cluster-wide); nil keeps them in memory.
	RateLimiter gateway.RateLimiter
	// Codes keeps the pairing codes (RedisCodes makes a code exchangeable
	// on every node of a cluster); nil keeps them in memory.
	Codes      CodeStore
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Service issues codes and turns them into pairings.
type Service struct {
	cfg     Config
	store   Store
	opts    Options
	limiter gateway.RateLimiter
	metrics *metrics

	codes CodeStore

	mu        sync.Mutex // guards lastSweep and every store read-modify-write
	lastSweep time.Time
}

// New returns a Service keeping pairings in store.
func New(cfg Config, store Store, opts Options) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if store == nil || opts.Tokens == nil || opts.TokenTTL <= 0 {
		return nil, fmt.Errorf("%w: a store, a token issuer and a token TTL are required", ErrConfig)
	}
	opts.Clock = clock.OrReal(opts.Clock)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ValidateDevice == nil {
		opts.ValidateDevice = func(string) error { return nil }
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = gateway.NewMemoryRateLimiter(opts.Clock)
	}
	if opts.Codes == nil {
		opts.Codes = NewMemoryCodes()
	}
	return &Service{cfg: cfg, store: store, opts: opts, metrics: m, limiter: opts.RateLimiter, codes: opts.Codes}, nil
}

// Routes are the service's endpoints. Creating and ending a pairing take a
// partner key; exchange and refresh are public (the code or the refresh
// credential is the credential) and rate limited per client address.
func (s *Service) Routes() []gateway.Route {
	return []gateway.Route{
		{Method: http.MethodPost, Path: "/v1/pairings", Scope: gateway.ScopeSessionsWrite, Idempotent: true,
			Handler: http.HandlerFunc(s.handleCreate)},
		{Method: http.MethodPost, Path: "/v1/pairings/exchange", NoRateLimit: true, Handler: http.HandlerFunc(s.handleExchange)},
		{Method: http.MethodPost, Path: "/v1/pairings/refresh", NoRateLimit: true, Handler: http.HandlerFunc(s.handleRefresh)},
		{Method: http.MethodDelete, Path: "/v1/pairings/{id}", Scope: gateway.ScopeSessionsWrite,
			Handler: http.HandlerFunc(s.handleDelete)},
	}
}

type createRequest struct {
	EndUserID string `json:"end_user_id"`
	Device    string `json:"device"`
}

// CodeResponse is the answer to POST /v1/pairings.
type CodeResponse struct {
	PairingID  string `json:"pairing_id"`
	Code       string `json:"code"`
	ExpiresAt  string `json:"expires_at"`
	TTLSeconds int    `json:"ttl_seconds"`
	Device     string `json:"device"`
	EndUserID  string `json:"end_user_id"`
	// AppPath opens the glasses app with the code filled in (for a QR
	// code on the phone): prefix it with the gateway's base URL.
	AppPath string `json:"app_path"`
}

// handleCreate is POST /v1/pairings: a one-time code for one end user's
// device. A new code replaces that end user's unused code for the device.
func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) {
	p, _ := gateway.PrincipalFrom(r.Context())
	if p.Via == "token" {
		gateway.WriteError(w, r, gateway.Errorf(gateway.PermissionError, "client tokens cannot create pairings: use a partner key"))
		return
	}
	var req createRequest
	if err := gateway.DecodeJSON(r, &req); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	if err := gateway.ValidateEndUserID(req.EndUserID); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	if strings.TrimSpace(req.Device) == "" {
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "device is required (a device profile id)"))
		return
	}
	if err := s.opts.ValidateDevice(req.Device); err != nil {
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "device: %v", err))
		return
	}
	now := s.opts.Clock.Now()
	ttl := time.Duration(s.cfg.CodeTTLSeconds) * time.Second
	s.sweep(now)
	text, c := newCode(), Code{PairingID: newPairingID(), Partner: p.PartnerID, EndUser: req.EndUserID,
		Device: req.Device, Expires: now.Add(ttl), Retain: now.Add(2 * ttl)}
	if err := s.codes.Issue(digest(text), c, now, s.cfg.MaxCodes); err != nil {
		if errors.Is(err, ErrTooManyCodes) {
			gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: 60,
				Message: "too many pairing codes are waiting to be used; retry later"})
			return
		}
		s.codeStoreFailed(w, r, err)
		return
	}
	s.metrics.codes.Inc()
	w.Header().Set("Cache-Control", "no-store")
	gateway.WriteJSON(w, http.StatusCreated, CodeResponse{PairingID: c.PairingID, Code: displayCode(text),
		ExpiresAt: c.Expires.UTC().Format(time.RFC3339), TTLSeconds: s.cfg.CodeTTLSeconds, Device: req.Device,
		EndUserID: req.EndUserID, AppPath: "/glasses#pair=" + text})
}

type exchangeRequest struct {
	Code   string `json:"code"`
	Device string `json:"device"`
}

type refreshRequest struct {
	RefreshToken string `json:"refresh_token"`
	Device       string `json:"device"`
}

// Credentials are what a device gets from an exchange or a refresh.
type Credentials struct {
	PairingID        string `json:"pairing_id"`
	Token            string `json:"token"`
	TokenExpiresAt   string `json:"token_expires_at"`
	RefreshToken     string `json:"refresh_token"`
	RefreshExpiresAt string `json:"refresh_expires_at"`
	Device           string `json:"device"`
}

// handleExchange is POST /v1/pairings/exchange: a code, once, for a client
// token and a refresh credential.
func (s *Service) handleExchange(w http.ResponseWriter, r *http.Request) {
	if !s.allow(w, r, "exchange", s.cfg.ExchangesPerMinute, s.metrics.exchanges) {
		return
	}
	var req exchangeRequest
	if err := gateway.DecodeJSON(r, &req); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	norm, err := normalizeCode(req.Code)
	if err != nil {
		s.metrics.exchanges.WithLabelValues("malformed").Inc()
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "code: a pairing code is 8 letters and digits, like 7KQM-2XWP"))
		return
	}
	now := s.opts.Clock.Now()
	s.sweep(now)
	// One atomic claim: of two exchanges of one code, on any nodes, one
	// wins. A code presented by another kind of device has leaked: the
	// claim burns it.
	c, claim, err := s.codes.Claim(digest(norm), req.Device, now)
	if err != nil {
		s.codeStoreFailed(w, r, err)
		return
	}
	var refusal *gateway.Error
	switch claim {
	case ClaimUnknown:
		refusal = outcome(s.metrics.exchanges, "unknown", gateway.AuthenticationError, "unknown pairing code: check it, or ask for a new one in the VERA app")
	case ClaimUsed:
		refusal = outcome(s.metrics.exchanges, "used", gateway.AuthenticationError, "this pairing code was already used: ask for a new one in the VERA app")
	case ClaimExpired:
		refusal = outcome(s.metrics.exchanges, "expired", gateway.AuthenticationError, "this pairing code expired: ask for a new one in the VERA app")
	case ClaimWrongDevice:
		refusal = outcome(s.metrics.exchanges, "wrong_device", gateway.PermissionError, "this pairing code is for another device; it can no longer be used")
	}
	if refusal != nil {
		gateway.WriteError(w, r, refusal)
		return
	}
	secret := randomHex(32)
	pr := Pairing{ID: c.PairingID, Partner: c.Partner, EndUser: c.EndUser, Device: c.Device, Secret: digest(secret),
		Created: now, Refreshed: now}
	s.mu.Lock()
	err = s.admitLocked(pr)
	s.mu.Unlock()
	if err != nil {
		s.opts.Logger.Error("pairing: store", "err", err)
		gateway.WriteError(w, r, err)
		return
	}
	s.metrics.exchanges.WithLabelValues("ok").Inc()
	s.writeCredentials(w, r, pr, secret, http.StatusCreated)
}

// admitLocked stores a new pairing, ending the end user's least recently
// refreshed ones beyond Config.MaxPerEndUser.
func (s *Service) admitLocked(pr Pairing) error {
	list, err := s.store.ByEndUser(pr.Partner, pr.EndUser)
	if err != nil {
		return err
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Refreshed.Before(list[j].Refreshed) })
	for len(list) >= s.cfg.MaxPerEndUser {
		if err := s.store.Delete(list[0].ID); err != nil {
			return err
		}
		list = list[1:]
	}
	return s.store.Put(pr)
}

// handleRefresh is POST /v1/pairings/refresh: a refresh credential for a
// fresh client token and the next refresh credential.
func (s *Service) handleRefresh(w http.ResponseWriter, r *http.Request) {
	if !s.allow(w, r, "refresh", s.cfg.RefreshesPerMinute, s.metrics.refreshes) {
		return
	}
	var req refreshRequest
	if err := gateway.DecodeJSON(r, &req); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	id, secret, ok := parseRefresh(req.RefreshToken)
	if !ok {
		s.metrics.refreshes.WithLabelValues("malformed").Inc()
		gateway.WriteError(w, r, gateway.Errorf(gateway.AuthenticationError, "refresh_token is not a refresh credential"))
		return
	}
	now := s.opts.Clock.Now()
	s.mu.Lock()
	pr, next, refusal, err := s.rotateLocked(id, secret, req.Device, now)
	s.mu.Unlock()
	if err != nil {
		s.opts.Logger.Error("pairing: store", "err", err)
		gateway.WriteError(w, r, err)
		return
	}
	if refusal != nil {
		gateway.WriteError(w, r, refusal)
		return
	}
	s.metrics.refreshes.WithLabelValues("ok").Inc()
	s.writeCredentials(w, r, pr, next, http.StatusOK)
}

// rotateLocked checks a refresh credential and rotates it. A credential
// older than the previous one, or one presented by another device, ends
// the pairing.
func (s *Service) rotateLocked(id, secret, device string, now time.Time) (Pairing, string, *gateway.Error, error) {
	pr, found, err := s.store.Get(id)
	if err != nil {
		return Pairing{}, "", nil, err
	}
	d := digest(secret)
	current := found && subtle.ConstantTimeCompare(d[:], pr.Secret[:]) == 1
	previous := found && subtle.ConstantTimeCompare(d[:], pr.Prev[:]) == 1 && now.Before(pr.PrevUntil)
	idle := time.Duration(s.cfg.RefreshIdleDays) * 24 * time.Hour
	switch {
	case !found:
		return pr, "", outcome(s.metrics.refreshes, "unknown", gateway.AuthenticationError, "this device is no longer paired: pair it again from the VERA app"), nil
	case !current && !previous && retired(pr, d):
		// A credential we rotated out came back: someone holds a copy.
		return pr, "", outcome(s.metrics.refreshes, "reused", gateway.AuthenticationError, "this refresh credential was replaced; the pairing has ended: pair again from the VERA app"), s.store.Delete(id)
	case !current && !previous:
		// Never issued: a guess. It fails without ending the pairing, so
		// knowing a pairing id is not enough to unpair someone.
		return pr, "", outcome(s.metrics.refreshes, "unknown", gateway.AuthenticationError, "this device is no longer paired: pair it again from the VERA app"), nil
	case device != pr.Device:
		return pr, "", outcome(s.metrics.refreshes, "wrong_device", gateway.PermissionError, "this pairing is for another device; it has ended"), s.store.Delete(id)
	case !now.Before(pr.Refreshed.Add(idle)):
		return pr, "", outcome(s.metrics.refreshes, "expired", gateway.AuthenticationError, "this pairing expired after a long time unused: pair again from the VERA app"), s.store.Delete(id)
	}
	next := randomHex(32)
	if current {
		// The previous credential retires; the current one becomes the
		// grace copy until the next one is used.
		if pr.Prev != ([32]byte{}) {
			pr.Retired = append(pr.Retired, pr.Prev)
			if len(pr.Retired) > maxRetired {
				pr.Retired = pr.Retired[len(pr.Retired)-maxRetired:]
			}
		}
		pr.Prev, pr.PrevUntil = pr.Secret, now.Add(time.Duration(s.cfg.RotationGraceSeconds)*time.Second)
	}
	// previous: the device lost our last answer; the grace copy stays.
	pr.Secret, pr.Refreshed = digest(next), now
	return pr, next, nil, s.store.Put(pr)
}

// maxRetired bounds the retired digests a pairing remembers.
const maxRetired = 8

func retired(pr Pairing, d [32]byte) bool {
	hit := 0
	for _, r := range pr.Retired {
		hit |= subtle.ConstantTimeCompare(d[:], r[:])
	}
	// The grace copy past its grace is retired as well.
	hit |= subtle.ConstantTimeCompare(d[:], pr.Prev[:])
	return hit == 1
}

// writeCredentials mints the client token and writes both credentials.
func (s *Service) writeCredentials(w http.ResponseWriter, r *http.Request, pr Pairing, secret string, status int) {
	tok, exp, err := s.opts.Tokens.Issue(pr.Partner, pr.EndUser, pr.Device, []string{gateway.ScopeSessionsWrite}, s.opts.TokenTTL)
	if err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	idle := time.Duration(s.cfg.RefreshIdleDays) * 24 * time.Hour
	w.Header().Set("Cache-Control", "no-store")
	gateway.WriteJSON(w, status, Credentials{PairingID: pr.ID, Token: tok, TokenExpiresAt: exp.UTC().Format(time.RFC3339),
		RefreshToken: formatRefresh(pr.ID, secret), RefreshExpiresAt: pr.Refreshed.Add(idle).UTC().Format(time.RFC3339),
		Device: pr.Device})
}

// handleDelete is DELETE /v1/pairings/{id}: the partner ends a pairing (or
// withdraws its unused code). Another partner's pairing is 404.
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) {
	p, _ := gateway.PrincipalFrom(r.Context())
	if p.Via == "token" {
		gateway.WriteError(w, r, gateway.Errorf(gateway.PermissionError, "client tokens cannot end pairings: use a partner key"))
		return
	}
	id := mux.Vars(r)["id"]
	found, err := s.codes.Withdraw(p.PartnerID, id)
	if err != nil {
		s.codeStoreFailed(w, r, err)
		return
	}
	s.mu.Lock()
	pr, ok, err := s.store.Get(id)
	if err == nil && ok && pr.Partner == p.PartnerID {
		found = true
		err = s.store.Delete(id)
	}
	s.mu.Unlock()
	switch {
	case err != nil:
		s.opts.Logger.Error("pairing: store", "err", err)
		gateway.WriteError(w, r, err)
	case !found:
		gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no pairing %q", id))
	default:
		s.metrics.revoked.Inc()
		w.WriteHeader(http.StatusNoContent)
	}
}

// allow takes one attempt from the client address's bucket of a public
// route. A limiter that cannot decide lets the request through, as the
// gateway's own limit does.
func (s *Service) allow(w http.ResponseWriter, r *http.Request, route string, perMinute int, c *prometheus.CounterVec) bool {
	src := gateway.SourceAddr(r.Context())
	addr := src.String()
	if !src.IsValid() {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		addr = host
	}
	d, err := s.limiter.Take(r.Context(), gateway.Bucket{Key: "pairing." + route + "\x00" + addr, PerMinute: perMinute})
	if err != nil {
		s.opts.Logger.Warn("pairing: rate limiter", "err", err)
		return true
	}
	if !d.OK {
		c.WithLabelValues("rate_limited").Inc()
		secs := int(d.RetryAfter/time.Second) + 1
		gateway.WriteError(w, r, &gateway.Error{Type: gateway.RateLimited, RetryAfter: secs,
			Message: fmt.Sprintf("too many attempts from this address; wait %d s", secs)})
		return false
	}
	return true
}

// sweepInterval is how often requests sweep expired codes and pairings.
const sweepInterval = time.Minute

// codeStoreFailed answers a code store that could not be reached (the
// cluster's Redis): 503 with Retry-After, the code untouched.
func (s *Service) codeStoreFailed(w http.ResponseWriter, r *http.Request, err error) {
	s.opts.Logger.Error("pairing: code store", "err", err)
	gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: 5,
		Message: "pairing codes cannot be reached right now; retry"})
}

// sweep drops pairings idle too long, at most once per sweepInterval (the
// code store sweeps its own).
func (s *Service) sweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) < sweepInterval {
		return
	}
	s.lastSweep = now
	idle := time.Duration(s.cfg.RefreshIdleDays) * 24 * time.Hour
	if _, err := s.store.Sweep(now.Add(-idle)); err != nil {
		s.opts.Logger.Warn("pairing: sweep", "err", err)
	}
}

func outcome(c *prometheus.CounterVec, label string, t gateway.ErrorType, msg string) *gateway.Error {
	c.WithLabelValues(label).Inc()
	return gateway.Errorf(t, "%s", msg)
}

type metrics struct {
	codes, revoked       prometheus.Counter
	exchanges, refreshes *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		codes: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "pairing", Name: "codes_issued_total",
			Help: "Pairing codes issued."}),
		revoked: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "pairing", Name: "revoked_total",
			Help: "Pairings ended by their partner."}),
		exchanges: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "pairing", Name: "exchanges_total",
			Help: "Code exchanges by outcome (ok, unknown, used, expired, wrong_device, malformed, rate_limited)."}, []string{"outcome"}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "pairing", Name: "refreshes_total",
			Help: "Refreshes by outcome (ok, unknown, reused, wrong_device, expired, malformed, rate_limited)."}, []string{"outcome"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.codes, m.revoked, m.exchanges, m.refreshes} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("pairing: metrics: %w", errors.Join(err))
		}
	}
	return m, nil
}
