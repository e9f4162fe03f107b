package rtc

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/veraneural/vera-gateway/gateway"
)

// DefaultBasePath is where the voice session resource lives.
const DefaultBasePath = "/v1/voice/sessions"

// HandlerOptions wires the signaling handler into the gateway.
type HandlerOptions struct {
	// Engine is required.
	Engine *Engine
	// NewSession creates the conversation session for each connection.
	// Nil accepts media and events and drops them (transport-only).
	NewSession SessionFactory
	// Authorize runs first on every request. It returns the principal, or
	// ok=false after writing its own error response (401/403/429...).
	// Nil allows everything with the zero principal (dev mode). Session
	// URLs are unguessable (128-bit ids) and act as the capability for
	// PATCH and DELETE.
	Authorize func(w http.ResponseWriter, r *http.Request) (p gateway.Principal, ok bool)
	// Logger; nil discards.
	Logger *slog.Logger
	// BasePath for Location headers; "" means DefaultBasePath.
	BasePath string
	// MaxSessions, when positive, is admission: past that many live
	// sessions a new offer gets 503 with Retry-After (RetryAfterSeconds,
	// at least 1) before any WebRTC work, so live sessions keep their CPU.
	MaxSessions       int
	RetryAfterSeconds int
	// OnClosed, if set, is called once per started session after it ended,
	// with its end reason and final counters (for metrics). It runs on the
	// session's supervisor goroutine and must not block.
	OnClosed func(id string, reason error, st Stats)
}

// Handler is the WHIP-style signaling endpoint and the registry of live
// Conns. It owns every Conn it created; Close ends and joins them all. A
// Conn belongs to the partner whose principal created it: PATCH and DELETE
// from another partner get 404, as for a session that does not exist
// (another partner's objects do not exist for it, so never 403).
type Handler struct {
	eng        *Engine
	newSession SessionFactory
	authorize  func(http.ResponseWriter, *http.Request) (gateway.Principal, bool)
	log        *slog.Logger
	base       string
	router     *mux.Router
	onClosed   func(string, error, Stats)
	maxLive    int
	retryAfter int

	// mu guards conns, partner and closed.
	mu    sync.Mutex
	conns map[string]*Conn
	// partner owns each live Conn, by id.
	partner map[string]string
	closed  bool
}

var deviceRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// NewHandler builds the handler. It serves POST on BasePath and PATCH/DELETE
// on BasePath/{id}, standalone through ServeHTTP or mounted with Register.
func NewHandler(o HandlerOptions) (*Handler, error) {
	if o.Engine == nil {
		return nil, errors.New("rtc: handler: Engine is required")
	}
	h := &Handler{
		eng: o.Engine, newSession: o.NewSession, authorize: o.Authorize,
		log: o.Logger, base: strings.TrimRight(o.BasePath, "/"), onClosed: o.OnClosed,
		maxLive: o.MaxSessions, retryAfter: max(o.RetryAfterSeconds, 1),
		conns: make(map[string]*Conn), partner: make(map[string]string),
	}
	if h.log == nil {
		h.log = discardLogger()
	}
	if h.base == "" {
		h.base = DefaultBasePath
	}
	if h.newSession == nil {
		h.newSession = func(context.Context, SessionInfo, *Conn) (Session, error) { return discardSession{}, nil }
	}
	h.router = mux.NewRouter()
	h.Register(h.router)
	return h, nil
}

// Register mounts the three routes on r (paths from BasePath).
func (h *Handler) Register(r *mux.Router) {
	r.HandleFunc(h.base, h.Create).Methods(http.MethodPost)
	r.HandleFunc(h.base+"/{id}", h.Update).Methods(http.MethodPatch)
	r.HandleFunc(h.base+"/{id}", h.Delete).Methods(http.MethodDelete)
}

// ServeHTTP serves the routes on the handler's own router.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.router.ServeHTTP(w, r) }

// Conn returns a live session's connection.
func (h *Handler) Conn(id string) (*Conn, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.conns[id]
	return c, ok
}

// Len is the number of live sessions.
func (h *Handler) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Close refuses new sessions (503), closes every Conn and waits for all of
// them or ctx.
func (h *Handler) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	conns := make([]*Conn, 0, len(h.conns))
	for _, c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.stop(ErrClosed)
	}
	var errs []error
	for _, c := range conns {
		if err := c.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (h *Handler) auth(w http.ResponseWriter, r *http.Request) (gateway.Principal, bool) {
	if h.authorize == nil {
		return gateway.Principal{}, true
	}
	return h.authorize(w, r)
}

func newID() string {
	var b [16]byte
	_, _ = cryptorand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// admit refuses a new offer with 503 and Retry-After once MaxSessions
// sessions are live; it reports whether the offer may proceed.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) bool {
	if h.maxLive > 0 && h.Len() >= h.maxLive {
		gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: h.retryAfter,
			Message: "the gateway is at its voice session limit; retry later"})
		return false
	}
	return true
}

// Create handles POST: offer in, 201 + answer out.
func (h *Handler) Create(w http.ResponseWriter, r *http.Request) {
	principal, ok := h.auth(w, r)
	if !ok {
		return
	}
	if !h.admit(w, r) {
		return
	}
	if !contentTypeIs(r, "application/sdp") {
		writeError(w, r, http.StatusUnsupportedMediaType, gateway.InvalidRequest, "Content-Type must be application/sdp")
		return
	}
	device := r.URL.Query().Get("device")
	if device != "" && !deviceRe.MatchString(device) {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, "device: must be 1-64 characters of A-Z a-z 0-9 . _ : -")
		return
	}
	maxB := h.eng.cfg.MaxOfferBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(maxB)+1))
	if err != nil {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, "could not read offer body")
		return
	}
	if len(body) > maxB {
		writeError(w, r, http.StatusRequestEntityTooLarge, gateway.InvalidRequest, ErrOfferTooLarge.Error()+": limit is "+strconv.Itoa(maxB)+" bytes")
		return
	}
	offer, err := ParseOffer(body)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, err.Error())
		return
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		writeError(w, r, http.StatusServiceUnavailable, gateway.Unavailable, "gateway is draining")
		return
	}
	id := newID()
	c, err := newConn(h.eng, id, device, h.log)
	if err != nil {
		h.log.Error("rtc: new connection", "err", err)
		writeError(w, r, http.StatusInternalServerError, gateway.InternalError, "could not create connection")
		return
	}
	info := SessionInfo{ID: id, Device: device, Principal: principal, Offer: offer, RemoteAddr: r.RemoteAddr}
	sess, err := h.newSession(r.Context(), info, c)
	if err != nil {
		c.abort()
		var rej *gateway.Error
		if errors.As(err, &rej) {
			gateway.WriteError(w, r, rej)
			return
		}
		h.log.Error("rtc: session factory", "err", err)
		writeError(w, r, http.StatusServiceUnavailable, gateway.Unavailable, "session could not start")
		return
	}
	if err := c.wire(sess); err != nil {
		c.abort()
		writeError(w, r, http.StatusInternalServerError, gateway.InternalError, "could not set up media")
		return
	}
	answer, err := c.answer(r.Context(), offer.SDP)
	if err != nil {
		c.abort()
		var oe *OfferError
		if errors.As(err, &oe) {
			writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, err.Error())
			return
		}
		h.log.Error("rtc: answer", "err", err)
		writeError(w, r, http.StatusInternalServerError, gateway.InternalError, "could not create answer")
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		c.abort()
		writeError(w, r, http.StatusServiceUnavailable, gateway.Unavailable, "gateway is draining")
		return
	}
	h.conns[id] = c
	h.partner[id] = principal.PartnerID
	h.mu.Unlock()
	c.start(h.forget)
	h.log.Info("rtc: session created", "session", id, "device", device)

	hdr := w.Header()
	for _, l := range linkHeaders(h.eng.ICEServers(id)) {
		hdr.Add("Link", l)
	}
	hdr.Set("Content-Type", "application/sdp")
	hdr.Set("Location", h.base+"/"+id)
	hdr.Set("ETag", c.ETag())
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, answer)
}

func (h *Handler) forget(c *Conn, reason error) {
	h.mu.Lock()
	if h.conns[c.id] == c {
		delete(h.conns, c.id)
		delete(h.partner, c.id)
	}
	h.mu.Unlock()
	if h.onClosed != nil {
		h.onClosed(c.id, reason, c.Stats())
	}
}

// lookup finds the live Conn a PATCH or DELETE names, if p's partner owns it.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, p gateway.Principal) (*Conn, bool) {
	id := mux.Vars(r)["id"]
	if id == "" {
		id = r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	}
	h.mu.Lock()
	c, ok := h.conns[id]
	ok = ok && h.partner[id] == p.PartnerID
	h.mu.Unlock()
	if !ok {
		writeError(w, r, http.StatusNotFound, gateway.NotFound, "no such voice session")
	}
	return c, ok
}

// Update handles PATCH: trickle candidates (204) or ICE restart (200 with
// the server's new fragment). A present If-Match must equal the ETag.
func (h *Handler) Update(w http.ResponseWriter, r *http.Request) {
	p, ok := h.auth(w, r)
	if !ok {
		return
	}
	c, ok := h.lookup(w, r, p)
	if !ok {
		return
	}
	if !contentTypeIs(r, "application/trickle-ice-sdpfrag") {
		writeError(w, r, http.StatusUnsupportedMediaType, gateway.InvalidRequest, "Content-Type must be application/trickle-ice-sdpfrag")
		return
	}
	if m := r.Header.Get("If-Match"); m != "" && m != "*" && m != c.ETag() {
		writeError(w, r, http.StatusPreconditionFailed, gateway.InvalidRequest, "If-Match does not match the current ICE session ETag")
		return
	}
	maxB := h.eng.cfg.MaxPatchBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(maxB)+1))
	if err != nil || len(body) > maxB {
		writeError(w, r, http.StatusRequestEntityTooLarge, gateway.InvalidRequest, "fragment too large: limit is "+strconv.Itoa(maxB)+" bytes")
		return
	}
	f, err := ParseFragment(body)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, err.Error())
		return
	}
	out, err := c.trickle(r.Context(), f)
	if err != nil {
		var oe *OfferError
		if errors.Is(err, ErrBadFragment) || errors.As(err, &oe) {
			writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, err.Error())
			return
		}
		h.log.Error("rtc: patch", "session", c.id, "err", err)
		writeError(w, r, http.StatusInternalServerError, gateway.InternalError, "could not apply fragment")
		return
	}
	w.Header().Set("ETag", c.ETag())
	if out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/trickle-ice-sdpfrag")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.Marshal())
}

// Delete handles DELETE: hang up and wait for the session to end.
func (h *Handler) Delete(w http.ResponseWriter, r *http.Request) {
	p, ok := h.auth(w, r)
	if !ok {
		return
	}
	c, ok := h.lookup(w, r, p)
	if !ok {
		return
	}
	c.stop(ErrHangup)
	if err := c.Close(r.Context()); err != nil {
		writeError(w, r, http.StatusServiceUnavailable, gateway.Unavailable, "hang-up still in progress")
		return
	}
	w.WriteHeader(http.StatusOK)
}

func contentTypeIs(r *http.Request, want string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && strings.EqualFold(mt, want)
}

// linkHeaders renders ICE servers as WHIP Link headers (RFC 9725 §4.6), one
// per URL, each with its server's credential.
func linkHeaders(servers []ICEServer) []string {
	var out []string
	for _, s := range servers {
		for _, u := range s.URLs {
			l := "<" + u + `>; rel="ice-server"`
			if s.Username != "" {
				l += `; username="` + s.Username + `"; credential="` + s.Credential + `"; credential-type="password"`
			}
			out = append(out, l)
		}
	}
	return out
}

// writeError writes the Partner API envelope (gateway.WriteError) with
// the status the signaling step calls for.
func writeError(w http.ResponseWriter, r *http.Request, status int, t gateway.ErrorType, msg string) {
	gateway.WriteError(w, r, &gateway.Error{Type: t, Message: msg, HTTPStatus: status})
}

type discardSession struct{}

func (discardSession) OnRTP(Packet)   {}
func (discardSession) OnEvent([]byte) {}
func (discardSession) Closed(error)   {}
