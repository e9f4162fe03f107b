package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/veraneural/vera-gateway/gateway"
)

// InternalPath is where nodes receive forwarded calls. It is not part of
// the Partner API: a call without a valid cluster signature gets 401.
const InternalPath = "/internal/v1/forward"

// maxForwardBody bounds a forwarded body (the receiving node applied the
// route's own limit already).
const maxForwardBody = 1 << 20

// Forward timeouts: a dead node is found by its refused or unanswered
// dial within forwardDialTimeout; an owner that answers gets the route's
// own time (a hang-up waits for the call to end).
const (
	forwardDialTimeout   = time.Second
	forwardHeaderTimeout = 15 * time.Second
)

func newForwardClient() *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: forwardDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: forwardHeaderTimeout,
		ForceAttemptHTTP2:     false,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Owned makes rt reach the owner of the id in its path ({id}): a request
// for an id another node owns is forwarded there, signed, with the
// caller's verified principal; the owner runs rt's handler under the same
// rules as a direct call. local reports whether this node holds the id
// (saving the directory read); nil asks the directory. Alone (nil
// Cluster), rt is returned as it is.
func (c *Cluster) Owned(k Kind, rt gateway.Route, local func(id string) bool) gateway.Route {
	if c == nil {
		return rt
	}
	inner := rt.Handler
	c.inner.Handle(rt.Path, inner).Methods(rt.Method)
	rt.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := mux.Vars(r)["id"]
		if id == "" || (local != nil && local(id)) {
			inner.ServeHTTP(w, r)
			return
		}
		e, err := c.Lookup(r.Context(), k, id)
		switch {
		case errors.Is(err, ErrNoEntry), err == nil && e.Node == c.cfg.NodeID:
			inner.ServeHTTP(w, r) // answers 404 for an id nobody has
		case err != nil:
			gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: 1,
				Message: "the session directory is unavailable; retry"})
		default:
			c.forward(w, r, k, e)
		}
	})
	return rt
}

// forward sends r to the owner in e and relays its answer. A node that
// cannot be reached is dead: its entry is dropped and the caller gets the
// same 404 as for an id that never existed, not a hang.
func (c *Cluster) forward(w http.ResponseWriter, r *http.Request, k Kind, e Entry) {
	p, _ := gateway.PrincipalFrom(r.Context())
	body, err := io.ReadAll(r.Body)
	if err != nil {
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "could not read the request body"))
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, e.Addr+InternalPath, bytes.NewReader(body))
	if err != nil {
		c.met.forwards.WithLabelValues(string(k), "error").Inc()
		gateway.WriteError(w, r, gateway.Errorf(gateway.InternalError, "bad owner address"))
		return
	}
	for _, h := range []string{"Content-Type", "If-Match", "Accept"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set("X-Request-Id", gateway.RequestID(r.Context()))
	sign(req, []byte(c.cfg.Secret), c.clock.Now(), r.Method, r.URL.RequestURI(), body, c.cfg.NodeID, e.Node, p)
	resp, err := c.forwarder.Do(req)
	if err != nil {
		if r.Context().Err() != nil {
			return // the caller went away
		}
		c.log.Warn("cluster: owner unreachable: entry dropped", "kind", k, "node", e.Node, "err", err)
		c.met.forwards.WithLabelValues(string(k), "dead_node").Inc()
		c.drop(context.WithoutCancel(r.Context()), e)
		gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no such %s (its node is gone)", noun(k)))
		return
	}
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", "Etag", "Location", "Retry-After", "Link", "Idempotent-Replayed"} {
		if v := resp.Header.Values(h); len(v) > 0 {
			w.Header()[h] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
	c.met.forwards.WithLabelValues(string(k), "ok").Inc()
}

func noun(k Kind) string {
	switch k {
	case Voice:
		return "voice session"
	case Action:
		return "approved action"
	}
	return "session"
}

// InternalRoutes receive forwarded calls and relayed chats. A forward's
// signature is verified first (401 otherwise: forged, stale, replayed or
// addressed to another node); then the original route's handler runs with
// the forwarded principal. Rate limits and idempotency were applied where
// the call arrived, so not again here. Alone, there are none.
func (c *Cluster) InternalRoutes() []gateway.Route {
	if c == nil {
		return nil
	}
	return []gateway.Route{
		{Method: http.MethodPost, Path: InternalPath, NoRateLimit: true, Undocumented: true,
			MaxBodyBytes: maxForwardBody, Handler: http.HandlerFunc(c.serveForward)},
		{Method: http.MethodGet, Path: InternalChatPath, NoRateLimit: true, Undocumented: true, Upgrade: true,
			MaxBodyBytes: -1, Handler: http.HandlerFunc(c.serveChat)},
	}
}

func (c *Cluster) serveForward(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		gateway.WriteError(w, r, &gateway.Error{Type: gateway.InvalidRequest, HTTPStatus: http.StatusRequestEntityTooLarge, Message: "forwarded body too large"})
		return
	}
	p, err := verify(r, []byte(c.cfg.Secret), c.cfg.NodeID, c.clock.Now(), body, c.replays)
	if err != nil {
		outcome := "forged"
		if errors.Is(err, ErrStale) {
			outcome = "stale"
		} else if errors.Is(err, ErrReplayed) {
			outcome = "replayed"
		}
		c.met.received.WithLabelValues(outcome).Inc()
		c.log.Warn("cluster: refused a forwarded call", "from", r.Header.Get(HeaderFrom), "remote", r.RemoteAddr, "err", err)
		gateway.WriteError(w, r, gateway.Errorf(gateway.AuthenticationError, "invalid cluster signature"))
		return
	}
	c.met.received.WithLabelValues("ok").Inc()
	in := r.Clone(gateway.WithPrincipal(r.Context(), p))
	in.Method = r.Header.Get(HeaderMethod)
	if u, err := in.URL.Parse(r.Header.Get(HeaderPath)); err == nil {
		in.URL, in.RequestURI = u, u.RequestURI()
	}
	in.Body = io.NopCloser(bytes.NewReader(body))
	in.ContentLength = int64(len(body))
	for _, h := range []string{HeaderSignature, HeaderFrom, HeaderTo, HeaderMethod, HeaderPath, HeaderPrincipal, HeaderNonce} {
		in.Header.Del(h)
	}
	c.inner.ServeHTTP(w, in)
}
