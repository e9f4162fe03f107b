package cluster

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/chat"
)

// InternalChatPath is where a node receives a chat connection relayed from
// the node a resuming client reached (signed like a forward).
const InternalChatPath = "/internal/v1/chat"

// relayReadLimit bounds one event frame from the owner.
const relayReadLimit = 1 << 20

// Chat mounts the websocket route: new chats are admitted only while the
// node is ready (Admit), and the route's handler also serves chats relayed
// from other nodes (InternalRoutes). Alone, rt is returned as it is.
func (c *Cluster) Chat(rt gateway.Route) gateway.Route {
	if c == nil {
		return rt
	}
	c.chat = rt.Handler
	rt.Handler = c.Admit(rt.Handler)
	return rt
}

// ResumeElsewhere is chat's Options.Elsewhere: a resume token this node
// does not know may name a session on another live node; then the client's
// connection is relayed there, where the session resumes under the same
// ownership rules, and the hello is sent on. An owner that cannot be
// reached is dead: its entries are dropped and the client gets not_found.
func (c *Cluster) ResumeElsewhere(ctx context.Context, p gateway.Principal, hello []byte, token string) chat.Relay {
	if c == nil {
		return nil
	}
	e, err := c.Lookup(ctx, Resume, ResumeDigest(token))
	if err != nil || e.Node == c.cfg.NodeID {
		return nil
	}
	req, _ := http.NewRequest(http.MethodGet, e.Addr+InternalChatPath, nil)
	sign(req, []byte(c.cfg.Secret), c.clock.Now(), http.MethodGet, "/v1/chat", nil, c.cfg.NodeID, e.Node, p)
	dctx, cancel := context.WithTimeout(ctx, forwardDialTimeout+forwardHeaderTimeout)
	defer cancel()
	remote, _, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(e.Addr, "http")+InternalChatPath, &websocket.DialOptions{
		HTTPClient: c.forwarder, HTTPHeader: req.Header, Subprotocols: []string{chat.Subprotocol}})
	if err != nil {
		c.log.Warn("cluster: chat owner unreachable: entry dropped", "node", e.Node, "err", err)
		c.met.forwards.WithLabelValues(string(Resume), "dead_node").Inc()
		c.drop(context.WithoutCancel(ctx), e)
		return nil
	}
	remote.SetReadLimit(relayReadLimit)
	if err := remote.Write(dctx, websocket.MessageText, hello); err != nil {
		_ = remote.CloseNow()
		return nil
	}
	c.met.forwards.WithLabelValues(string(Resume), "ok").Inc()
	return &relay{remote: remote}
}

// relay is one relayed chat connection.
type relay struct{ remote *websocket.Conn }

// Run implements chat.Relay: the owner's frames go to the client and the
// client's to the owner; the first side to close closes the other with
// its code (a replaced session's 4001 reaches the client as is). Every
// end is a normal one for the relay, so it returns nil.
func (r *relay) Run(ctx context.Context, client *websocket.Conn) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var fromOwner error
	wg.Go(func() {
		fromOwner = pipe(ctx, r.remote, client)
		cancel()
	})
	fromClient := pipe(ctx, client, r.remote)
	cancel()
	wg.Wait()
	closeLike(client, fromOwner)
	closeLike(r.remote, fromClient)
	return nil
}

// pipe copies frames from one socket to the other until a read or write
// fails.
func pipe(ctx context.Context, from, to *websocket.Conn) error {
	for {
		typ, data, err := from.Read(ctx)
		if err != nil {
			return err
		}
		if err := to.Write(ctx, typ, data); err != nil {
			return err
		}
	}
}

// closeLike closes ws with the close code the other side ended with, or
// going-away when it just vanished.
func closeLike(ws *websocket.Conn, err error) {
	code, reason := websocket.CloseStatus(err), ""
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		reason = ce.Reason
	}
	if code == -1 {
		code = websocket.StatusGoingAway
	}
	_ = ws.Close(code, reason)
}

// serveChat receives a relayed chat: the upgrade is verified like any
// forward (method GET, path /v1/chat, empty body), then the chat handler
// runs with the forwarded principal.
func (c *Cluster) serveChat(w http.ResponseWriter, r *http.Request) {
	p, err := verify(r, []byte(c.cfg.Secret), c.cfg.NodeID, c.clock.Now(), nil, c.replays)
	if err != nil || r.Header.Get(HeaderMethod) != http.MethodGet || r.Header.Get(HeaderPath) != "/v1/chat" || c.chat == nil {
		c.met.received.WithLabelValues("forged").Inc()
		gateway.WriteError(w, r, gateway.Errorf(gateway.AuthenticationError, "invalid cluster signature"))
		return
	}
	c.met.received.WithLabelValues("ok").Inc()
	in := r.Clone(gateway.WithPrincipal(r.Context(), p))
	in.URL.Path, in.RequestURI = "/v1/chat", "/v1/chat"
	c.chat.ServeHTTP(w, in)
}
