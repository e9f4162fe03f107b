package rtc

import (
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// Admit, when set, is asked before any WebRTC work too: an error
	// refuses the offer with 503 and Retry-After, its text the message
	// (the voice layer refuses while its recogniser is saturated).
	Admit func() error
	// OnClosed, if set, is called once per started session after it ended,
	// with its end reason and final counters (for metrics). It runs on the
	// session's supervisor goroutine and must not block.
	OnClosed func(id string, reason error, st Stats)
	// Shares holds each partner and end user to its share of MaxSessions
	// (limits.per_partner.voice_sessions, limits.per_token.voice_sessions);
	// nil: only MaxSessions.
	Shares *gateway.Shares
}

// Handler is the WHIP-style signaling endpoint and the registry of live
// Conns. It owns every Conn it created; Close ends and joins them all. A
// Conn belongs to the partner and end user whose principal created it:
// PATCH and DELETE from another partner, or from a client token of another
// end user of the same partner, get 404, as for a session that does not
// exist (another person's objects do not exist for them, so never 403); the
// partner's key may act for any of its end users. A client token bound to
// a device opens voice sessions for that device only, and the data
// channel's hello cannot switch it.
type Handler struct {
	eng        *Engine
	newSession SessionFactory
	authorize  func(http.ResponseWriter, *http.Request) (gateway.Principal, bool)
	log        *slog.Logger
	base       string
	router     *mux.Router
	onClosed   func(string, error, Stats)
	maxLive    int
	admitHook  func() error
	retryAfter int
	shares     *gateway.Shares

	// mu guards conns, owner, release and closed.
	mu    sync.Mutex
	conns map[string]*Conn
	// owner owns each live Conn, by id.
	owner map[string]connOwner
	// release gives back each live Conn's share.
	release map[string]func()
	closed  bool
}

// connOwner is who created a Conn: the partner, and the end user of a
// client token ("" for the partner's key).
type connOwner struct{ partner, endUser string }

// owns reports whether p may act on a Conn of o: the same partner, and for
// a client token the same end user.
func (o connOwner) owns(p gateway.Principal) bool {
	if o.partner != p.PartnerID {
		return false
	}
	return p.Via != "token" || o.endUser == p.EndUserID
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
		maxLive: o.MaxSessions, admitHook: o.Admit, retryAfter: max(o.RetryAfterSeconds, 1), shares: o.Shares,
		conns: make(map[string]*Conn), owner: make(map[string]connOwner), release: make(map[string]func()),
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
// sessions are live or the Admit hook says no; it reports whether the offer
// may proceed.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) bool {
	if h.maxLive > 0 && h.Len() >= h.maxLive {
		gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: h.retryAfter,
			Message: "the gateway is at its voice session limit; retry later"})
		return false
	}
	if h.admitHook != nil {
		if err := h.admitHook(); err != nil {
			gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: h.retryAfter, Message: err.Error()})
			return false
		}
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
	device, ok := h.boundDevice(w, r, principal)
	if !ok {
		return
	}
	offer, ok := h.readOffer(w, r)
	if !ok {
		return
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		h.unavailable(w, r, "gateway is draining")
		return
	}
	release, serr := h.shares.Acquire(gateway.ShareVoiceSessions, principal.PartnerID, principal.EndUserID)
	if serr != nil {
		gateway.WriteError(w, r, serr)
		return
	}
	held := false
	defer func() {
		if !held {
			release()
		}
	}()
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
		h.unavailable(w, r, "session could not start")
		return
	}
	if principal.Device != "" {
		sess = &boundSession{Session: sess, conn: c, device: principal.Device}
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
		h.unavailable(w, r, "gateway is draining")
		return
	}
	h.conns[id] = c
	h.owner[id] = connOwner{partner: principal.PartnerID, endUser: principal.EndUserID}
	h.release[id], held = release, true
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

// readOffer reads and parses the SDP offer body within
// Config.MaxOfferBytes, or writes the refusal and reports false.
func (h *Handler) readOffer(w http.ResponseWriter, r *http.Request) (*Offer, bool) {
	if !contentTypeIs(r, "application/sdp") {
		writeError(w, r, http.StatusUnsupportedMediaType, gateway.InvalidRequest, "Content-Type must be application/sdp")
		return nil, false
	}
	maxB := h.eng.cfg.MaxOfferBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(maxB)+1))
	if err != nil {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, "could not read offer body")
		return nil, false
	}
	if len(body) > maxB {
		writeError(w, r, http.StatusRequestEntityTooLarge, gateway.InvalidRequest, ErrOfferTooLarge.Error()+": limit is "+strconv.Itoa(maxB)+" bytes")
		return nil, false
	}
	if msg := sdpShape(body); msg != "" {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, "offer: "+msg)
		return nil, false
	}
	offer, err := ParseOffer(body)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, err.Error())
		return nil, false
	}
	return offer, true
}

// Bounds on the work an SDP body can ask for, counted on the raw lines
// before it is parsed: candidates each cost a connectivity check, and a
// long tail of lines costs the parser and the ICE agent.
const (
	MaxSDPLines      = 400
	MaxSDPCandidates = 50
	MaxSDPMedia      = 8
)

// sdpShape counts a body's lines, candidates and media sections; it names
// the first bound crossed ("" when within all).
func sdpShape(body []byte) string {
	lines, cands, media := 0, 0, 0
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		lines++
		switch {
		case bytes.HasPrefix(line, []byte("a=candidate:")), bytes.HasPrefix(line, []byte("a=candidate ")):
			cands++
		case bytes.HasPrefix(line, []byte("m=")):
			media++
		}
		switch {
		case lines > MaxSDPLines:
			return "more than " + strconv.Itoa(MaxSDPLines) + " lines"
		case cands > MaxSDPCandidates:
			return "more than " + strconv.Itoa(MaxSDPCandidates) + " ICE candidates"
		case media > MaxSDPMedia:
			return "more than " + strconv.Itoa(MaxSDPMedia) + " media sections"
		}
	}
	return ""
}

func (h *Handler) forget(c *Conn, reason error) {
	h.mu.Lock()
	var release func()
	if h.conns[c.id] == c {
		release = h.release[c.id]
		delete(h.conns, c.id)
		delete(h.owner, c.id)
		delete(h.release, c.id)
	}
	h.mu.Unlock()
	if release != nil {
		release()
	}
	if h.onClosed != nil {
		h.onClosed(c.id, reason, c.Stats())
	}
}

// lookup finds the live Conn a PATCH or DELETE names, if p owns it.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, p gateway.Principal) (*Conn, bool) {
	id := mux.Vars(r)["id"]
	if id == "" {
		id = r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	}
	h.mu.Lock()
	c, ok := h.conns[id]
	ok = ok && h.owner[id].owns(p)
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
	if msg := sdpShape(body); msg != "" {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, "fragment: "+msg)
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
	h.iceLinks(w.Header(), c.id) // an ICE restart gets a fresh TURN credential
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
		gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, Message: "hang-up still in progress", RetryAfter: 1})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// unavailable answers 503 with the handler's Retry-After.
func (h *Handler) unavailable(w http.ResponseWriter, r *http.Request, msg string) {
	gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, Message: msg, RetryAfter: h.retryAfter})
}

// boundDevice is the device a new voice session is for: ?device=, which a
// client token bound to a device must match (and defaults to); it writes
// the refusal and reports false otherwise.
func (h *Handler) boundDevice(w http.ResponseWriter, r *http.Request, p gateway.Principal) (string, bool) {
	device := r.URL.Query().Get("device")
	if device != "" && !deviceRe.MatchString(device) {
		writeError(w, r, http.StatusBadRequest, gateway.InvalidRequest, "device: must be 1-64 characters of A-Z a-z 0-9 . _ : -")
		return "", false
	}
	if p.Device == "" {
		return device, true
	}
	if device != "" && device != p.Device {
		writeError(w, r, http.StatusForbidden, gateway.PermissionError, "the client token is bound to device "+p.Device)
		return "", false
	}
	return p.Device, true
}

// boundSession holds a voice session to its token's device: a data-channel
// hello that names another device (a switch, or a resume onto another
// profile) is answered with a permission_error event and never reaches the
// session.
type boundSession struct {
	Session
	conn   *Conn
	device string
}

func (b *boundSession) OnEvent(data []byte) {
	if bytes.Contains(data, []byte(`"hello"`)) {
		var h struct {
			Type   string `json:"type"`
			Device string `json:"device"`
		}
		if json.Unmarshal(data, &h) == nil && h.Type == "hello" && h.Device != "" && h.Device != b.device {
			msg, _ := json.Marshal(map[string]any{"type": "error", "seq": 0, "session_id": "", "at": time.Now().UnixMilli(),
				"error": map[string]string{"type": string(gateway.PermissionError), "message": "the client token is bound to device " + b.device, "event_type": "hello"}})
			_ = b.conn.SendEvent(msg)
			return
		}
	}
	b.Session.OnEvent(data)
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
