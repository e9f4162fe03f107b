package rtc

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // HMAC-SHA1 is what the TURN REST API and coturn's use-auth-secret specify.
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// TURNCredential returns the TURN REST API credential that coturn's
// use-auth-secret (static-auth-secret) accepts until expiry: username
// "<expiry unix seconds>:<user>" and password base64(HMAC-SHA1(secret,
// username)). user must not contain ':' (coturn's separator).
func TURNCredential(secret string, expiry time.Time, user string) (username, password string) {
	username = strconv.FormatInt(expiry.Unix(), 10) + ":" + user
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(username))
	return username, base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// turnUserTag separates the opaque-user derivation from any other use of
// the secret.
const turnUserTag = "vera-gateway turn user\x00"

// turnMinter mints one TURN entry per session.
type turnMinter struct {
	urls   []string
	secret string
	ttl    time.Duration
}

func newTURNMinter(c TURNConfig) *turnMinter {
	return &turnMinter{urls: slices.Clone(c.URLs), secret: c.Secret, ttl: time.Duration(c.TTLSeconds) * time.Second}
}

// opaqueUser names a session to the TURN server without identifying
// anyone: 96 bits of HMAC-SHA256(secret, tag+session id). It is neither the
// session id (the session URL is a capability) nor anything about the end
// user; whoever holds the secret can recompute it from a session id to
// match TURN server logs with gateway logs.
func (m *turnMinter) opaqueUser(sessionID string) string {
	h := hmac.New(sha256.New, []byte(m.secret))
	h.Write([]byte(turnUserTag))
	h.Write([]byte(sessionID))
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// mint returns the TURN entry for sessionID, valid for ttl from now.
func (m *turnMinter) mint(sessionID string, now time.Time) ICEServer {
	user, pass := TURNCredential(m.secret, now.Add(m.ttl), m.opaqueUser(sessionID))
	return ICEServer{URLs: slices.Clone(m.urls), Username: user, Credential: pass}
}

// ICEServers lists the STUN/TURN servers a client of sessionID is offered:
// the static rtc.ice_servers first, then, with rtc.turn, one entry with a
// credential minted now (by the Engine's clock) for this session. These are
// what the answer's Link headers carry, and what any JSON listing ICE
// servers must carry; the TURN secret itself is never in them.
func (e *Engine) ICEServers(sessionID string) []ICEServer {
	out := make([]ICEServer, 0, len(e.cfg.ICEServers)+1)
	for _, s := range e.cfg.ICEServers {
		out = append(out, ICEServer{URLs: slices.Clone(s.URLs), Username: s.Username, Credential: s.Credential})
	}
	if e.turn != nil {
		out = append(out, e.turn.mint(sessionID, e.now()))
	}
	return out
}

// iceLinks adds to hdr the Link headers (RFC 9725 §4.6) of the ICE servers
// for sessionID, with a TURN credential minted now. An ICE restart's 200
// carries them as the answer's 201 does: a client restarts ICE when its
// path failed, often long after the answer, and may need the relay (a
// network that blocks UDP, or a credential near its expiry), so it gets a
// fresh credential with the restart rather than the answer's.
func (h *Handler) iceLinks(hdr http.Header, sessionID string) {
	for _, l := range linkHeaders(h.eng.ICEServers(sessionID)) {
		hdr.Add("Link", l)
	}
}
