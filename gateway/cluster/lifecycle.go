package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// retryAfterSeconds is what a refused new session is told.
const retryAfterSeconds = 5

// Admit refuses a new session (voice offer, chat websocket) with 503 and
// Retry-After while the node cannot reach Redis or is draining: the
// session could not be found by the other nodes, nor its limits kept.
// Alone, h is returned as it is.
func (c *Cluster) Admit(h http.Handler) http.Handler {
	if c == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.Ready(); err != nil {
			msg := "this node cannot reach the cluster's Redis; retry (the load balancer moves you to another node)"
			if err == errDraining {
				msg = "this node is draining: reconnect to another node"
			}
			gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: retryAfterSeconds, Message: msg})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Readyz answers GET /readyz with 503 while the node cannot reach Redis,
// before next (the gateway, which answers 503 while draining). Load
// balancers probe it. Alone, next is returned as it is.
func (c *Cluster) Readyz(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && r.Method == http.MethodGet {
			if err := c.Ready(); err == errRedisLost {
				gateway.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "redis_unavailable", "node": c.cfg.NodeID})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Opened registers a session this node opened or resumed (session
// manager's OnOpened): its id and its resume token's digest.
func (c *Cluster) Opened(s *session.Session) {
	if c == nil {
		return
	}
	o := s.Owner()
	_ = c.registerAll(context.Background(), c.entry(Session, s.ID(), o.PartnerID, o.EndUserID),
		c.entry(Resume, ResumeDigest(s.ResumeToken()), o.PartnerID, o.EndUserID))
}

// Closed removes a closed session's entries (session manager's OnClosed).
func (c *Cluster) Closed(s *session.Session) {
	if c == nil {
		return
	}
	keys := []string{entryKey(Session, s.ID()), entryKey(Resume, ResumeDigest(s.ResumeToken()))}
	c.mu.Lock()
	for _, k := range keys {
		delete(c.local, k)
	}
	c.met.entries.WithLabelValues(string(Session)).Set(float64(c.countLocked(Session)))
	c.mu.Unlock()
	c.forgetLater(keys...)
}

// ResumeDigest names a resume token in the directory: the token itself is
// a secret and never leaves the node that issued it.
func ResumeDigest(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:16])
}

// VoiceCreated wraps the WHIP offer handler: a created call is registered
// before its answer leaves (so a PATCH through any node finds it), and
// its Location names this node's public_url, where the client's PATCH and
// DELETE go. It also admits (see Admit). Alone, h is returned as it is.
func (c *Cluster) VoiceCreated(h http.Handler) http.Handler {
	if c == nil {
		return h
	}
	return c.Admit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := gateway.PrincipalFrom(r.Context())
		h.ServeHTTP(&locationWriter{ResponseWriter: w, c: c, ctx: r.Context(), p: p}, r)
	}))
}

// VoiceClosed removes an ended call's entry (rtc's OnClosed).
func (c *Cluster) VoiceClosed(id string) {
	if c == nil {
		return
	}
	c.Forget(context.Background(), Voice, id)
}

// ActionApproved records which node holds an approved action, for its
// result report.
func (c *Cluster) ActionApproved(partner, actionID string) {
	if c == nil {
		return
	}
	_ = c.Register(context.Background(), Action, actionID, partner, "")
}

// locationWriter registers the call and rewrites Location on a 201.
type locationWriter struct {
	http.ResponseWriter
	c     *Cluster
	ctx   context.Context
	p     gateway.Principal
	wrote bool
}

func (lw *locationWriter) WriteHeader(code int) {
	if !lw.wrote {
		lw.wrote = true
		if loc := lw.Header().Get("Location"); code == http.StatusCreated && strings.HasPrefix(loc, "/") {
			id := loc[strings.LastIndexByte(loc, '/')+1:]
			_ = lw.c.Register(lw.ctx, Voice, id, lw.p.PartnerID, lw.p.EndUserID)
			lw.Header().Set("Location", lw.c.cfg.Public()+loc)
		}
	}
	lw.ResponseWriter.WriteHeader(code)
}

func (lw *locationWriter) Write(b []byte) (int, error) {
	if !lw.wrote {
		lw.WriteHeader(http.StatusOK)
	}
	return lw.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (lw *locationWriter) Unwrap() http.ResponseWriter { return lw.ResponseWriter }
