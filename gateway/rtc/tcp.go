package rtc

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
)

// ICE-TCP mux tuning. The read buffer counts packets per connection (LiveKit
// uses 50); pion recommends a 4 MiB write buffer. A client sends its first
// STUN binding request as soon as it has connected, so a connection that
// has said nothing for firstSTUNTimeout is an idle socket, not a client.
const (
	tcpReadBufferPackets = 50
	tcpWriteBufferBytes  = 4 << 20
	firstSTUNTimeout     = 10 * time.Second
)

// listenTCP sets up passive ICE-TCP on one port: ln when given, otherwise
// tcp_port on udp_address ("" = all interfaces). Active TCP candidates are
// off: the gateway only accepts.
func (e *Engine) listenTCP(se *webrtc.SettingEngine, ln net.Listener) error {
	if ln == nil {
		network := "tcp4"
		if e.cfg.UDP6 {
			network = "tcp"
		}
		addr := net.JoinHostPort(e.cfg.UDPAddress, strconv.Itoa(e.cfg.TCPPort))
		var err error
		if ln, err = net.Listen(network, addr); err != nil {
			return fmt.Errorf("rtc: listen tcp %s (rtc.tcp_port): %w", addr, err)
		}
	}
	e.tcpLn = ln
	e.tcpMux = ice.NewTCPMuxDefault(ice.TCPMuxParams{
		Listener:             newLimitListener(ln, e.cfg.TCPMaxConns, e.log),
		Logger:               slogFactory{log: e.log}.NewLogger("tcpmux"),
		ReadBufferSize:       tcpReadBufferPackets,
		WriteBufferSize:      tcpWriteBufferBytes,
		FirstStunBindTimeout: firstSTUNTimeout,
	})
	se.SetICETCPMux(e.tcpMux)
	se.DisableActiveTCP(true)
	return nil
}

// TCPAddr is the ICE-TCP listener's address, nil when ICE-TCP is off.
func (e *Engine) TCPAddr() net.Addr {
	if e.tcpLn == nil {
		return nil
	}
	return e.tcpLn.Addr()
}

// limitListener closes connections past max at once instead of handing
// them to the mux, so a flood of idle sockets costs no goroutine or buffer.
type limitListener struct {
	net.Listener
	sem     chan struct{}
	log     *slog.Logger
	refused atomic.Int64
	lastLog atomic.Int64 // unix nanos of the last "refused" warning
}

func newLimitListener(ln net.Listener, max int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, max), log: log}
}

// Accept returns the next connection within the limit.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
		default:
			_ = c.Close()
			n := l.refused.Add(1)
			now := time.Now().UnixNano()
			if last := l.lastLog.Load(); now-last > int64(10*time.Second) && l.lastLog.CompareAndSwap(last, now) {
				l.log.Warn("rtc: ICE-TCP connection refused: rtc.tcp_max_conns reached", "max", cap(l.sem), "refused_total", n)
			}
		}
	}
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
