package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// Subprotocol is the websocket subprotocol of the event protocol. Browsers
// send the client token as a second subprotocol after it.
const Subprotocol = "vera.v1"

// Authenticate checks a client token ("" when none was sent) for a request
// and returns who the connection acts for. A principal that carries scopes
// must hold sessions:write; Device, when set, binds the token to one
// device profile.
// Return an error wrapping ErrForbidden for a valid token without the
// right, any other error for a missing or bad token. Dev mode passes a func
// that accepts loopback clients without a token.
type Authenticate func(r *http.Request, token string) (gateway.Principal, error)

// Sentinel errors.
var (
	// ErrForbidden: the token is valid but not allowed here (403).
	ErrForbidden = errors.New("chat: forbidden")
	// ErrMissingDeps: New was given no manager or no Authenticate.
	ErrMissingDeps = errors.New("chat: session manager and authenticate are required")
)

// Close codes the server uses besides the standard ones.
const (
	// StatusReplaced: a newer connection resumed the session.
	StatusReplaced websocket.StatusCode = 4001
)

// Close reasons (constant, so clients and logs can match them).
const (
	ReasonSlowConsumer = "slow consumer: outbound queue overflowed"
	ReasonWriteTimeout = "slow consumer: write timed out"
	ReasonNoHello      = "no hello in time"
	ReasonKeepAlive    = "keep-alive timeout"
	ReasonReplaced     = "replaced by a newer connection"
	ReasonShutdown     = "server shutting down"
	ReasonClosed       = "session closed"
)

// CloseInfo describes a close the server initiates.
type CloseInfo struct {
	SessionID string
	Code      websocket.StatusCode
	Reason    string
}

// Options are optional collaborators.
type Options struct {
	Logger *slog.Logger
	// Clock is the rate limiter's and event timestamps' clock; nil is the
	// wall clock. (The hello timeout and keep-alive pings pace the socket
	// on the wall clock.)
	Clock clock.Clock
	// OnClose observes every close the server initiates, before the close
	// handshake (metrics, tests).
	OnClose func(CloseInfo)
	// Shares holds each partner and end user to its share of
	// MaxConnections (limits.per_partner.chats, limits.per_token.chats);
	// nil: only the global cap.
	Shares *gateway.Shares
	// Elsewhere, when set, is asked about a resume hello that no session
	// here has: it returns a Relay to the session's owner on another node
	// (the cluster), or nil, and the client gets not_found as before.
	Elsewhere func(ctx context.Context, p gateway.Principal, hello []byte, resumeToken string) Relay
}

// Relay carries a resumed connection to the node that owns its session.
type Relay interface {
	// Run moves frames both ways between client and the owner until either
	// side closes or ctx ends, then closes both.
	Run(ctx context.Context, client *websocket.Conn) error
}

// Handler serves GET /v1/chat.
type Handler struct {
	cfg  Config
	mgr  *session.Manager
	auth Authenticate
	opts Options
	log  *slog.Logger

	wg sync.WaitGroup // live connections

	// mu guards the fields below.
	mu     sync.Mutex
	closed bool
	conns  map[*conn]context.CancelFunc
}

// New returns a Handler; mount it at GET /v1/chat.
func New(cfg Config, mgr *session.Manager, auth Authenticate, opts Options) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if mgr == nil || auth == nil {
		return nil, ErrMissingDeps
	}
	opts.Clock = clock.OrReal(opts.Clock)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Handler{cfg: cfg, mgr: mgr, auth: auth, opts: opts, log: log, conns: map[*conn]context.CancelFunc{}}, nil
}

// Close ends every connection (1001) and waits for their goroutines. The
// sessions stay in the manager (it is closed separately).
func (h *Handler) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	for _, cancel := range h.conns {
		cancel()
	}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("chat: close: %w", ctx.Err())
	}
}

// TokenFrom extracts the client token: the subprotocol after "vera.v1",
// else the token query parameter.
func TokenFrom(r *http.Request) string {
	var protos []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				protos = append(protos, p)
			}
		}
	}
	if i := slices.Index(protos, Subprotocol); i >= 0 && i+1 < len(protos) {
		return protos[i+1]
	}
	return r.URL.Query().Get("token")
}

// ServeHTTP authenticates, upgrades and runs one connection.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeHTTPError(w, r, http.StatusMethodNotAllowed, gateway.InvalidRequest, "GET /v1/chat upgrades to a websocket")
		return
	}
	p, err := h.auth(r, TokenFrom(r))
	if err != nil {
		if errors.Is(err, ErrForbidden) {
			writeHTTPError(w, r, http.StatusForbidden, gateway.PermissionError, "this token may not open a chat")
			return
		}
		writeHTTPError(w, r, http.StatusUnauthorized, gateway.AuthenticationError, "a valid client token is required (subprotocol after vera.v1, or ?token=)")
		return
	}
	if len(p.Scopes) > 0 && !p.Has(gateway.ScopeSessionsWrite) {
		writeHTTPError(w, r, http.StatusForbidden, gateway.PermissionError, "the token lacks the sessions:write scope")
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &conn{h: h, p: p, failed: make(chan struct{})}
	h.mu.Lock()
	if h.closed || len(h.conns) >= h.cfg.MaxConnections {
		h.mu.Unlock()
		gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, Message: "no capacity for another chat connection", RetryAfter: 5})
		return
	}
	release, serr := h.opts.Shares.Acquire(gateway.ShareChats, p.PartnerID, p.EndUserID)
	if serr != nil {
		h.mu.Unlock()
		gateway.WriteError(w, r, serr)
		return
	}
	defer release()
	h.conns[c] = cancel
	h.wg.Add(1)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.conns, c)
		h.mu.Unlock()
		h.wg.Done()
	}()

	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:   []string{Subprotocol},
		OriginPatterns: h.cfg.AllowedOrigins,
	})
	if err != nil {
		// Accept has answered (403 for a refused origin, 400 otherwise).
		h.log.Info("chat: upgrade refused", "err", err)
		return
	}
	ws.SetReadLimit(h.cfg.ReadLimitBytes)
	c.ws = ws
	c.limit = newLimiter(h.cfg, h.opts.Clock)
	c.run(ctx)
}

// writeHTTPError answers a request that is not upgraded with the Partner
// API envelope (gateway.WriteError).
func writeHTTPError(w http.ResponseWriter, r *http.Request, status int, t gateway.ErrorType, msg string) {
	gateway.WriteError(w, r, &gateway.Error{Type: t, Message: msg, HTTPStatus: status})
}
