package chat

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// conn is one websocket connection.
type conn struct {
	h     *Handler
	p     gateway.Principal
	ws    *websocket.Conn
	limit *limiter

	sessionID string // set once after hello, before the loops start
	relay     Relay  // set by readHello when another node owns the session

	closeOnce sync.Once
	// once guards the close decision below; failed is closed by fail.
	once     sync.Once
	failed   chan struct{}
	code     websocket.StatusCode
	reason   string
	abruptly bool // the peer is gone or the socket is broken: no handshake
}

// fail records the first reason to close the connection.
func (c *conn) fail(code websocket.StatusCode, reason string, abruptly bool) {
	c.once.Do(func() {
		c.code, c.reason, c.abruptly = code, reason, abruptly
		close(c.failed)
	})
}

// run serves the connection until it closes. ctx only signals shutdown:
// coder/websocket drops a connection whose Read or Write context ends, so
// socket calls use loopCtx, which ends only after the close handshake.
func (c *conn) run(ctx context.Context) {
	loopCtx, stopLoops := context.WithCancel(context.Background())
	defer stopLoops()
	sess, st := c.awaitHello(ctx, loopCtx)
	if st == nil {
		if c.relay != nil {
			if err := c.relay.Run(ctx, c.ws); err != nil {
				c.h.log.Info("chat: relay to the owner ended", "err", err)
			}
		}
		return
	}
	c.sessionID = sess.ID()
	defer st.Detach()

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); c.writeLoop(loopCtx, st) }()
	go func() { defer wg.Done(); c.readLoop(loopCtx, sess) }()
	go func() { defer wg.Done(); c.pingLoop(loopCtx) }()

	select {
	case <-st.Done():
		switch err := st.Err(); {
		case errors.Is(err, session.ErrSlowConsumer):
			c.fail(websocket.StatusPolicyViolation, ReasonSlowConsumer, false)
		case errors.Is(err, session.ErrReplaced):
			c.fail(StatusReplaced, ReasonReplaced, false)
		default:
			c.fail(websocket.StatusGoingAway, ReasonClosed, false)
		}
	case <-ctx.Done():
		c.fail(websocket.StatusGoingAway, ReasonShutdown, false)
	case <-c.failed:
	}
	c.close()
	stopLoops()
	wg.Wait()
}

// close performs the recorded close: a close handshake with code and
// reason (the writer may still hold the socket; Close waits for it), or an
// immediate close when the peer is gone.
func (c *conn) close() {
	c.closeOnce.Do(c.doClose)
}

func (c *conn) doClose() {
	if c.code != websocket.StatusNormalClosure || c.reason != "" {
		c.h.log.Info("chat: closing", "session", c.sessionID, "code", int(c.code), "reason", c.reason)
		if c.h.opts.OnClose != nil {
			c.h.opts.OnClose(CloseInfo{SessionID: c.sessionID, Code: c.code, Reason: c.reason})
		}
	}
	if c.abruptly {
		_ = c.ws.CloseNow()
		return
	}
	_ = c.ws.Close(c.code, c.reason)
}

// awaitHello reads until a hello opens or resumes a session. Errors before
// that are written directly with seq 0. A watcher closes the connection
// when no hello succeeds within Config.HelloTimeout or on shutdown.
func (c *conn) awaitHello(shutdown, ctx context.Context) (*session.Session, *session.Stream) {
	opened := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTimer(c.h.cfg.HelloTimeout)
		defer t.Stop()
		select {
		case <-opened:
			return
		case <-t.C:
			c.fail(websocket.StatusPolicyViolation, ReasonNoHello, false)
		case <-shutdown.Done():
			c.fail(websocket.StatusGoingAway, ReasonShutdown, false)
		}
		c.close()
	}()
	sess, st := c.readHello(ctx)
	close(opened)
	<-watched
	select {
	case <-c.failed: // the watcher closed the connection meanwhile
		if st != nil {
			st.Detach()
		}
		return nil, nil
	default:
	}
	return sess, st
}

func (c *conn) readHello(ctx context.Context) (*session.Session, *session.Stream) {
	for {
		typ, data, err := c.ws.Read(ctx)
		if err != nil {
			c.fail(websocket.StatusNormalClosure, "", true)
			c.close()
			return nil, nil
		}
		ev, perr := c.parse(typ, data)
		if perr != nil {
			c.writeDirect(ctx, *perr)
			continue
		}
		if ev == nil {
			continue
		}
		hello, ok := ev.(*event.Hello)
		if !ok {
			c.writeDirect(ctx, errPayload(event.ErrInvalidRequest, "the first event must be hello", string(ev.EventType())))
			continue
		}
		if c.p.Device != "" && hello.Device != c.p.Device {
			c.writeDirect(ctx, errPayload(event.ErrPermission, "the token is bound to device "+c.p.Device, string(event.TypeHello)))
			continue
		}
		sess, st, err := c.h.mgr.Open(session.Owner{PartnerID: c.p.PartnerID, EndUserID: c.p.EndUserID}, hello)
		if errors.Is(err, session.ErrResumeUnknown) && c.h.opts.Elsewhere != nil {
			if c.relay = c.h.opts.Elsewhere(ctx, c.p, data, hello.ResumeToken); c.relay != nil {
				return nil, nil
			}
		}
		if err != nil {
			c.writeDirect(ctx, openError(err))
			continue
		}
		return sess, st
	}
}

func openError(err error) event.Error {
	t := event.ErrInvalidRequest
	var ge *gateway.Error
	switch {
	case errors.As(err, &ge):
		return errPayload(ge.Type, ge.Message, string(event.TypeHello))
	case errors.Is(err, session.ErrResumeUnknown):
		t = event.ErrNotFound
	case errors.Is(err, session.ErrResumeTooOld):
		t = event.ErrConflict
	case errors.Is(err, session.ErrTooManySessions), errors.Is(err, session.ErrManagerClosed):
		t = "unavailable"
	}
	return errPayload(t, err.Error(), string(event.TypeHello))
}

func errPayload(t event.ErrorType, msg, evType string) event.Error {
	return event.Error{Error: event.ErrorBody{Type: t, Message: msg, EventType: evType}}
}

// parse rate-limits and decodes one frame; the error is the payload of the
// error event to answer with (nil when there is nothing to say).
func (c *conn) parse(typ websocket.MessageType, data []byte) (event.Client, *event.Error) {
	if notify, ok := c.limit.allow(); !ok {
		if !notify {
			return nil, nil
		}
		p := errPayload(event.ErrRateLimited, "too many events; slow down", "")
		return nil, &p
	}
	if typ != websocket.MessageText {
		p := errPayload(event.ErrInvalidRequest, "binary frames are not accepted; send JSON text", "")
		return nil, &p
	}
	ev, err := event.Decode(data)
	if err != nil {
		var de *event.DecodeError
		if errors.As(err, &de) {
			p := de.Payload()
			return nil, &p
		}
		p := errPayload(event.ErrInvalidRequest, err.Error(), "")
		return nil, &p
	}
	return ev, nil
}

func (c *conn) writeDirect(ctx context.Context, p event.Error) {
	if p.Error.Type == "" {
		return
	}
	b, err := event.Encode(event.Envelope{Type: event.TypeError, At: c.h.opts.Clock.Now().UnixMilli()}, p)
	if err != nil {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, c.h.cfg.WriteTimeout)
	defer cancel()
	_ = c.ws.Write(wctx, websocket.MessageText, b)
}

func (c *conn) readLoop(ctx context.Context, sess *session.Session) {
	for {
		typ, data, err := c.ws.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				if websocket.CloseStatus(err) == websocket.StatusMessageTooBig {
					c.fail(websocket.StatusMessageTooBig, "frame over the read limit", true)
				} else {
					c.fail(websocket.StatusNormalClosure, "", true)
				}
			}
			return
		}
		ev, perr := c.parse(typ, data)
		if perr != nil {
			sess.Emit(event.TypeError, *perr)
			continue
		}
		if ev == nil { // refused by the rate limiter; the client was told once
			continue
		}
		if h, ok := ev.(*event.Hello); ok && h.ResumeToken != "" {
			sess.Emit(event.TypeError, errPayload(event.ErrConflict, "this connection already has a session; reconnect to resume", string(event.TypeHello)))
			continue
		}
		if h, ok := ev.(*event.Hello); ok && c.p.Device != "" && h.Device != c.p.Device {
			sess.Emit(event.TypeError, errPayload(event.ErrPermission, "the token is bound to device "+c.p.Device, string(event.TypeHello)))
			continue
		}
		_ = sess.Handle(ctx, ev) // client errors are already error events
	}
}

func (c *conn) writeLoop(ctx context.Context, st *session.Stream) {
	for {
		b, err := st.Next(ctx)
		if err != nil {
			return // the run loop sees st.Done or ctx
		}
		wctx, cancel := context.WithTimeout(ctx, c.h.cfg.WriteTimeout)
		err = c.ws.Write(wctx, websocket.MessageText, b)
		timedOut := errors.Is(wctx.Err(), context.DeadlineExceeded)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				if timedOut {
					c.fail(websocket.StatusPolicyViolation, ReasonWriteTimeout, true)
				} else {
					c.fail(websocket.StatusNormalClosure, "", true)
				}
			}
			return
		}
	}
}

func (c *conn) pingLoop(ctx context.Context) {
	t := time.NewTicker(c.h.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, c.h.cfg.PingTimeout)
		err := c.ws.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				c.fail(websocket.StatusPolicyViolation, ReasonKeepAlive, true)
			}
			return
		}
	}
}

// limiter rate-limits client events and says when to tell the client: once
// per run of refused events.
type limiter struct {
	l        *rate.Limiter
	clock    clock.Clock
	notified bool // only the reader goroutine touches it
}

func newLimiter(cfg Config, clk clock.Clock) *limiter {
	return &limiter{l: rate.NewLimiter(rate.Limit(cfg.EventsPerSecond), cfg.Burst), clock: clk}
}

// allow reports whether the event may pass and, if not, whether this is the
// first refusal of a run (the client is told once).
func (l *limiter) allow() (notify, ok bool) {
	if l.l.AllowN(l.clock.Now(), 1) {
		l.notified = false
		return false, true
	}
	notify = !l.notified
	l.notified = true
	return notify, false
}
