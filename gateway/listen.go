package gateway

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTPServer returns the http.Server for Handler with the connection
// bounds of limits: header and idle timeouts and MaxHeaderBytes here, the
// body and write deadlines per request (wrap), so that a websocket upgrade
// can clear them. Serve it on Listener(ln).
func (s *Server) HTTPServer() *http.Server {
	l := s.cfg.Limits
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Listener wraps ln with the per-source connection cap
// (limits.max_connections_per_source) and, for connections from
// limits.trusted_proxies, the PROXY protocol: a trusted proxy's connection
// that starts with a PROXY header (v1 or v2) counts against the source it
// names; one without counts against nobody (its requests' X-Forwarded-For
// sources are capped per request instead). Anyone else's PROXY header is
// not read, so it fails as a malformed request. A connection over the cap
// gets 503 with Retry-After and is closed, before any request is read.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, srv: s}
}

// sourceCounts counts open connections (or requests in flight) per source.
type sourceCounts struct {
	max int

	mu   sync.Mutex // mu guards open
	open map[netip.Addr]int
}

func newSourceCounts(max int) *sourceCounts {
	return &sourceCounts{max: max, open: map[netip.Addr]int{}}
}

func (c *sourceCounts) acquire(a netip.Addr) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[a] >= c.max {
		return false
	}
	c.open[a]++
	return true
}

func (c *sourceCounts) release(a netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[a]--; c.open[a] <= 0 {
		delete(c.open, a)
	}
}

// Open returns the number of connections open from a (tests, metrics).
func (c *sourceCounts) Open(a netip.Addr) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open[a]
}

type limitedListener struct {
	net.Listener
	srv *Server
}

// Accept returns the next connection within its source's cap; it never
// blocks on a client (PROXY headers are read by the connection's own
// goroutine, refusals are written by a short-lived one).
func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer := addrOf(c.RemoteAddr())
		if l.srv.trusted(peer) {
			return &proxyConn{Conn: c, srv: l.srv, peer: peer}, nil
		}
		if !l.srv.conns.acquire(peer) {
			l.srv.refuseConn(c, peer)
			continue
		}
		return &countedConn{Conn: c, srv: l.srv, src: peer}, nil
	}
}

// countedConn releases its source's count once, when closed.
type countedConn struct {
	net.Conn
	srv  *Server
	src  netip.Addr
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.srv.conns.release(c.src) })
	return c.Conn.Close()
}

// refuseConn answers a connection over its source's cap with 503 and
// Retry-After (bounded to a second of writing) and closes it.
func (s *Server) refuseConn(c net.Conn, src netip.Addr) {
	s.metrics.refused.Inc()
	s.log.Debug("connection refused: source at its connection cap", "limit", s.cfg.Limits.MaxConnectionsPerSource)
	go func() {
		body := fmt.Sprintf(`{"error":{"type":"unavailable","message":"more than %d connections from one source","request_id":%q}}`+"\n",
			s.cfg.Limits.MaxConnectionsPerSource, newRequestID())
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"+
			"Connection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		_ = c.Close()
	}()
}

// proxyConn is a connection from a trusted proxy: its first bytes may be a
// PROXY header naming the real source, read once, on the connection's own
// goroutine (http.Server asks RemoteAddr first thing when it serves it).
type proxyConn struct {
	net.Conn
	srv  *Server
	peer netip.Addr

	once    sync.Once
	br      *bufio.Reader
	src     netip.Addr // the source the header named; invalid: none
	srcPort uint16
	err     error
	closeMu sync.Once
}

func (c *proxyConn) init() {
	c.once.Do(func() {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.srv.cfg.Limits.HeaderTimeout))
		c.br = bufio.NewReaderSize(c.Conn, 256)
		src, port, err := readProxyHeader(c.br)
		_ = c.Conn.SetReadDeadline(time.Time{})
		if err != nil {
			c.err = err
			return
		}
		if src.IsValid() && !c.srv.conns.acquire(src) {
			c.err = errors.New("source at its connection cap")
			c.srv.refuseConn(c.Conn, src)
			return
		}
		c.src, c.srcPort = src, port
	})
}

func (c *proxyConn) Read(b []byte) (int, error) {
	c.init()
	if c.err != nil {
		return 0, c.err
	}
	return c.br.Read(b)
}

// RemoteAddr is the source the PROXY header named, else the proxy.
func (c *proxyConn) RemoteAddr() net.Addr {
	c.init()
	if c.src.IsValid() {
		return net.TCPAddrFromAddrPort(netip.AddrPortFrom(c.src, c.srcPort))
	}
	return c.Conn.RemoteAddr()
}

func (c *proxyConn) Close() error {
	c.closeMu.Do(func() {
		if c.src.IsValid() {
			c.srv.conns.release(c.src)
		}
	})
	return c.Conn.Close()
}

// proxyV2Sig starts a PROXY protocol v2 header.
var proxyV2Sig = []byte("\r\n\r\n\x00\r\nQUIT\n")

// readProxyHeader reads a PROXY protocol header (v1 text or v2 binary) if
// br starts with one, and returns the source address it names (invalid for
// LOCAL, UNKNOWN or no header at all).
func readProxyHeader(br *bufio.Reader) (netip.Addr, uint16, error) {
	head, err := br.Peek(12)
	if err != nil && len(head) == 0 {
		return netip.Addr{}, 0, err
	}
	switch {
	case strings.HasPrefix(string(head), "PROXY "):
		return readProxyV1(br)
	case len(head) == 12 && string(head) == string(proxyV2Sig):
		return readProxyV2(br)
	default:
		return netip.Addr{}, 0, nil
	}
}

func readProxyV1(br *bufio.Reader) (netip.Addr, uint16, error) {
	var line []byte
	for len(line) < 107 {
		b, err := br.ReadByte()
		if err != nil {
			return netip.Addr{}, 0, err
		}
		line = append(line, b)
		if b == '\n' {
			break
		}
	}
	f := strings.Fields(strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r"))
	if len(f) >= 2 && f[1] == "UNKNOWN" {
		return netip.Addr{}, 0, nil
	}
	if len(f) != 6 || (f[1] != "TCP4" && f[1] != "TCP6") {
		return netip.Addr{}, 0, errors.New("malformed PROXY v1 header")
	}
	a, err := netip.ParseAddr(f[2])
	port, perr := strconv.ParseUint(f[4], 10, 16)
	if err != nil || perr != nil {
		return netip.Addr{}, 0, errors.New("malformed PROXY v1 address")
	}
	return a.Unmap(), uint16(port), nil
}

func readProxyV2(br *bufio.Reader) (netip.Addr, uint16, error) {
	var hdr [16]byte
	if _, err := ioReadFull(br, hdr[:]); err != nil {
		return netip.Addr{}, 0, err
	}
	n := int(binary.BigEndian.Uint16(hdr[14:16]))
	body := make([]byte, n)
	if _, err := ioReadFull(br, body); err != nil {
		return netip.Addr{}, 0, err
	}
	if hdr[12]>>4 != 2 {
		return netip.Addr{}, 0, errors.New("PROXY v2: bad version")
	}
	if hdr[12]&0xf == 0 { // LOCAL: the proxy's own connection (health checks)
		return netip.Addr{}, 0, nil
	}
	switch hdr[13] >> 4 {
	case 1: // AF_INET
		if n < 12 {
			return netip.Addr{}, 0, errors.New("PROXY v2: short IPv4 addresses")
		}
		return netip.AddrFrom4([4]byte(body[0:4])), binary.BigEndian.Uint16(body[8:10]), nil
	case 2: // AF_INET6
		if n < 36 {
			return netip.Addr{}, 0, errors.New("PROXY v2: short IPv6 addresses")
		}
		return netip.AddrFrom16([16]byte(body[0:16])).Unmap(), binary.BigEndian.Uint16(body[32:34]), nil
	default:
		return netip.Addr{}, 0, nil
	}
}

func ioReadFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// addrOf is the IP of a net.Addr (the zero Addr when it has none).
func addrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return ip.Unmap()
		}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// trusted reports whether a is in limits.trusted_proxies.
func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

type sourceKey struct{}

// source is who a request comes from: its connection's source (the PROXY
// header's, if any), or, when that is a trusted proxy, the rightmost
// X-Forwarded-For address that is not one (viaProxy true). Nobody else's
// X-Forwarded-For is read.
func (s *Server) source(r *http.Request) (a netip.Addr, viaProxy bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	a = ap.Addr().Unmap()
	if !s.trusted(a) {
		return a, false
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if h = h.Unmap(); !s.trusted(h) {
			return h, true
		}
	}
	return a, false
}

// SourceAddr is the request's source address as the edge determined it
// (see limits.trusted_proxies); the zero Addr outside the server.
func SourceAddr(ctx context.Context) netip.Addr {
	a, _ := ctx.Value(sourceKey{}).(netip.Addr)
	return a
}

// withSource stores the request's source and, for one named by a trusted
// proxy's X-Forwarded-For, caps its requests in flight as the listener caps
// direct connections.
func (s *Server) withSource(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src, viaProxy := s.source(r)
		r = r.WithContext(context.WithValue(r.Context(), sourceKey{}, src))
		if viaProxy {
			if !s.inflight.acquire(src) {
				s.metrics.refused.Inc()
				w.Header().Set("Connection", "close")
				WriteError(w, r, &Error{Type: Unavailable, RetryAfter: 1,
					Message: fmt.Sprintf("more than %d requests in flight from one source", s.cfg.Limits.MaxConnectionsPerSource)})
				return
			}
			defer s.inflight.release(src)
		}
		next.ServeHTTP(w, r)
	})
}
