package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"
)

// liveServer is the gateway served on a real loopback listener with its
// connection bounds (HTTPServer, Listener), as cmd serves it.
type liveServer struct {
	*testServer
	addr string
	http *http.Server
}

func startLive(t testing.TB, cfg Config) *liveServer {
	t.Helper()
	ts := newTestServer(t, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ls := &liveServer{testServer: ts, addr: ln.Addr().String(), http: ts.HTTPServer()}
	done := make(chan struct{})
	go func() { defer close(done); _ = ls.http.Serve(ts.Listener(ln)) }()
	t.Cleanup(func() {
		_ = ls.http.Close()
		<-done
	})
	return ls
}

// dialFrom opens a TCP connection to addr from the loopback address src
// (127.0.0.2, …: every 127/8 address is this machine's), so one test can
// play several sources.
func dialFrom(t testing.TB, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", src, err)
	}
	return c
}

// openFDs counts this process's open file descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// closedByServer waits (bounded) until the server ends c, reading and
// discarding what it sends; it reports whether it did.
func closedByServer(c net.Conn, within time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// rawGet and rawPost send one request over a fresh connection from src
// and return the status.
func rawGet(t testing.TB, src, addr, path, key string) int {
	return rawDo(t, src, addr, "GET", path, key, "")
}

func rawPost(t testing.TB, src, addr, path, key, body string) int {
	return rawDo(t, src, addr, "POST", path, key, body)
}

func rawDo(t testing.TB, src, addr, method, path, key, body string) int {
	t.Helper()
	c := dialFrom(t, src, addr)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	req := method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
	if key != "" {
		req += "Authorization: Bearer " + key + "\r\n"
	}
	if body != "" {
		req += fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	if _, err := io.WriteString(c, req+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s from %s: %v", path, src, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func floodConfig() Config {
	cfg := testConfig()
	cfg.Limits.HeaderTimeout = 300 * time.Millisecond
	cfg.Limits.BodyTimeout = 300 * time.Millisecond
	cfg.Limits.IdleTimeout = 300 * time.Millisecond
	cfg.Limits.MaxConnectionsPerSource = 120
	return cfg
}

// TestAbuseConnectionFloodBounded: a flood of slow and idle connections —
// before and after authentication — is closed within the configured
// timeouts, one source past its cap gets 503 with Retry-After at once, and
// meanwhile /healthz and an authenticated request from another source are
// answered. At the end every descriptor is back. (A few hundred
// connections here; BenchmarkHealthzUnderConnectionFlood runs 2,000.)
func TestAbuseConnectionFloodBounded(t *testing.T) {
	ls := startLive(t, floodConfig())
	base := openFDs(t)
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	open := func(src, first string) net.Conn {
		c := dialFrom(t, src, ls.addr)
		if first != "" {
			if _, err := io.WriteString(c, first); err != nil {
				t.Fatal(err)
			}
		}
		flood = append(flood, c)
		return c
	}
	// 120 idle connections from 127.0.0.2 (its cap), sending nothing.
	for i := 0; i < 120; i++ {
		open("127.0.0.2", "")
	}
	// 60 slow headers from 127.0.0.3: a request line, then nothing.
	for i := 0; i < 60; i++ {
		open("127.0.0.3", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
	}
	// 60 unauthenticated slow bodies from 127.0.0.4: a megabyte announced,
	// ten bytes sent.
	unauth := make([]net.Conn, 0, 60)
	for i := 0; i < 60; i++ {
		unauth = append(unauth, open("127.0.0.4", "POST /v1/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+
			"Content-Length: 1048576\r\n\r\n{\"text\":\"x"))
	}
	// 40 authenticated slow bodies from 127.0.0.5 (40 of partner a's 60
	// requests a minute).
	for i := 0; i < 40; i++ {
		open("127.0.0.5", "POST /v1/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer "+keyA+"\r\n"+
			"Content-Length: 4096\r\n\r\n{\"text\":\"x")
	}

	// Meanwhile another source is served: health and an authenticated call.
	if st := rawGet(t, "127.0.0.1", ls.addr, "/healthz", ""); st != 200 {
		t.Fatalf("/healthz during the flood = %d", st)
	}
	if st := rawPost(t, "127.0.0.1", ls.addr, "/v1/device", keyA, "{}"); st != 200 {
		t.Fatalf("authenticated request during the flood = %d, want 200", st)
	}

	// The unauthenticated bodies were answered 401 without being read, and
	// their connections closed.
	// The source's first 30 failures (limits.auth_failures_per_minute) are
	// 401, the rest are throttled with 429 before their credentials are
	// looked at.
	statuses := map[int]int{}
	for i, c := range unauth {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		r, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("unauthenticated slow body %d: %v, want 401", i, err)
		}
		r.Body.Close()
		if !r.Close {
			t.Fatalf("unauthenticated slow body %d = %d with the connection kept open, want it closed", i, r.StatusCode)
		}
		statuses[r.StatusCode]++
	}
	if statuses[401] != 30 || statuses[429] != 30 {
		t.Fatalf("unauthenticated slow bodies answered %v, want 30 × 401 and 30 × 429", statuses)
	}
	// Every flood connection is ended by the server (bounded wait, far
	// above the 300 ms timeouts).
	var wg sync.WaitGroup
	var mu sync.Mutex
	open2 := 0
	for _, c := range flood {
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			if !closedByServer(c, 10*time.Second) {
				mu.Lock()
				open2++
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	if open2 > 0 {
		t.Fatalf("%d of %d flood connections still open after 10 s (timeouts 300 ms)", open2, len(flood))
	}
	for _, c := range flood {
		c.Close()
	}
	flood = nil
	// Descriptors back to the baseline (the server closes its side too).
	deadline := time.Now().Add(5 * time.Second)
	for openFDs(t) > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := openFDs(t); n > base {
		t.Fatalf("%d descriptors open after the flood, %d before", n, base)
	}
	if n := ls.conns.Open(netip.MustParseAddr("127.0.0.2")); n != 0 {
		t.Fatalf("source 127.0.0.2 still counts %d connections", n)
	}
}

// TestAbuseSourceConnectionCap: one source past
// limits.max_connections_per_source gets 503 with Retry-After at once,
// before any request is read, while another source is served; closing its
// connections frees the count.
func TestAbuseSourceConnectionCap(t *testing.T) {
	cfg := floodConfig()
	cfg.Limits.HeaderTimeout = time.Minute // the held connections stay for the test
	ls := startLive(t, cfg)
	var held []net.Conn
	for i := 0; i < cfg.Limits.MaxConnectionsPerSource; i++ {
		held = append(held, dialFrom(t, "127.0.0.2", ls.addr))
	}
	src := netip.MustParseAddr("127.0.0.2")
	deadline := time.Now().Add(5 * time.Second)
	for ls.conns.Open(src) < len(held) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // the server accepts asynchronously
	}
	extra := dialFrom(t, "127.0.0.2", ls.addr)
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil {
		t.Fatalf("connection over the source's cap: %v, want a 503", err)
	}
	resp.Body.Close()
	extra.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("connection over the cap = %d Retry-After %q, want 503 with Retry-After 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if st := rawGet(t, "127.0.0.1", ls.addr, "/healthz", ""); st != 200 {
		t.Fatalf("/healthz from another source = %d", st)
	}
	for _, c := range held {
		c.Close()
	}
	deadline = time.Now().Add(5 * time.Second)
	for ls.conns.Open(src) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := ls.conns.Open(src); n != 0 {
		t.Fatalf("source still counts %d connections after closing them", n)
	}
	if st := rawGet(t, "127.0.0.2", ls.addr, "/healthz", ""); st != 200 {
		t.Fatalf("/healthz from the source after it closed its connections = %d", st)
	}
}

// TestAbuseIdleKeepAliveClosed: a connection that made one request and
// then idles is closed after limits.idle_timeout.
func TestAbuseIdleKeepAliveClosed(t *testing.T) {
	ls := startLive(t, floodConfig())
	c := dialFrom(t, "127.0.0.6", ls.addr)
	defer c.Close()
	_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first request: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("server sent bytes on an idle keep-alive connection")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("idle keep-alive connection still open after 10 s (idle_timeout 300 ms)")
	}
}

// TestAbuseTrustedProxies: behind a load balancer, the source is the one
// its PROXY header or X-Forwarded-For names — and only a trusted proxy's.
func TestAbuseTrustedProxies(t *testing.T) {
	cfg := floodConfig()
	cfg.Limits.TrustedProxies = []string{"127.0.0.10/32"}
	cfg.Limits.MaxConnectionsPerSource = 2
	cfg.Limits.AuthFailuresPerMinute = 2
	ls := startLive(t, cfg)
	send := func(src, prefix, xff, key string) *http.Response {
		t.Helper()
		c := dialFrom(t, src, ls.addr)
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		req := prefix + "POST /v1/device HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
		if xff != "" {
			req += "X-Forwarded-For: " + xff + "\r\n"
		}
		if key != "" {
			req += "Authorization: Bearer " + key + "\r\n"
		}
		_, _ = io.WriteString(c, req+"\r\n{}")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("request from %s: %v", src, err)
		}
		resp.Body.Close()
		return resp
	}
	// The proxy forwards three failed logins of 198.51.100.7: two are 401,
	// the third is throttled for that source only.
	for i := 0; i < 2; i++ {
		if r := send("127.0.0.10", "", "198.51.100.7", "vera_sk_wrong_key_0000000000"); r.StatusCode != 401 {
			t.Fatalf("failed login %d via proxy = %d, want 401", i+1, r.StatusCode)
		}
	}
	if r := send("127.0.0.10", "", "198.51.100.7", "vera_sk_wrong_key_0000000000"); r.StatusCode != 429 || r.Header.Get("Retry-After") != "30" {
		t.Fatalf("third failed login via proxy = %d Retry-After %q, want 429 after 30 s", r.StatusCode, r.Header.Get("Retry-After"))
	}
	// Another client behind the same proxy is not throttled.
	if r := send("127.0.0.10", "", "198.51.100.8", keyA); r.StatusCode != 200 {
		t.Fatalf("another client via the proxy = %d, want 200", r.StatusCode)
	}
	// A PROXY v1 header names the source too.
	if r := send("127.0.0.10", "PROXY TCP4 198.51.100.7 127.0.0.1 5000 80\r\n", "", keyA); r.StatusCode != 429 {
		t.Fatalf("throttled source via a PROXY header = %d, want 429", r.StatusCode)
	}
	// An untrusted client's X-Forwarded-For is ignored: it cannot shed its
	// failures by naming another address...
	for i := 0; i < 2; i++ {
		send("127.0.0.11", "", fmt.Sprintf("203.0.113.%d", i), "vera_sk_wrong_key_0000000000")
	}
	if r := send("127.0.0.11", "", "203.0.113.99", keyA); r.StatusCode != 429 {
		t.Fatalf("untrusted client naming a fresh X-Forwarded-For = %d, want 429 (its own address is throttled)", r.StatusCode)
	}
	// ...and its PROXY header is not read: a malformed request.
	if r := send("127.0.0.12", "PROXY TCP4 198.51.100.9 127.0.0.1 5000 80\r\n", "", keyA); r.StatusCode != 400 {
		t.Fatalf("untrusted PROXY header = %d, want 400", r.StatusCode)
	}
}
