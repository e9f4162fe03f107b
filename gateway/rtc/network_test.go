package rtc_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

const coturnSecret = "test-static-auth-secret-0123456789"

// startCoturn runs a real coturn on loopback for the test, or skips.
func startCoturn(t testing.TB) *fixtures.TURNServer {
	t.Helper()
	s := fixtures.StartTURNServerForTest(t, coturnSecret)
	if s == nil {
		t.Skip("turnserver not installed (Debian package coturn; .ci/deps.sh installs it on the test path)")
	}
	return s
}

// turnConfig is LoopbackConfig minting credentials for coturn ts with
// secret.
func turnConfig(ts *fixtures.TURNServer, secret string) rtc.Config {
	cfg := rtc.LoopbackConfig()
	cfg.TURN = rtc.TURNConfig{URLs: []string{ts.URL("udp"), ts.URL("tcp")}, SecretEnv: "TURN_SECRET", Secret: secret, TTLSeconds: 600}
	return cfg
}

// tcpListener is a loopback listener on an ephemeral port for ICE-TCP.
func tcpListener(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// linkServers makes a direct (UDP) session only to read the ICE servers its
// answer's Link headers carry, as a WHIP client does before its real
// session (pion cannot apply new servers to a running peer), then hangs up.
func linkServers(t testing.TB, url string) []webrtc.ICEServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: url, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	servers := c.ICEServers()
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return servers
}

func closeClient(t testing.TB, c *fixtures.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var he *fixtures.HTTPError
	if err := c.Close(ctx); err != nil && !(errors.As(err, &he) && he.Status == http.StatusNotFound) {
		t.Errorf("client close: %v", err)
	}
}

// playAndCheck plays the speech fixture and waits for every packet at the
// gateway; it returns the server side's selected path.
func playAndCheck(t *testing.T, ctx context.Context, ts *testServer, c *fixtures.Client) rtc.Path {
	t.Helper()
	id := idOf(c)
	conn, ok := ts.h.Conn(id)
	if !ok {
		t.Fatal("no server conn")
	}
	select {
	case <-conn.Ready():
	case <-ctx.Done():
		t.Fatal("server conn never ready")
	}
	stream := speechStream(t)
	if err := c.Play(ctx, stream); err != nil {
		t.Fatal(err)
	}
	if err := ts.session(id).waitPackets(ctx, len(stream.Packets)); err != nil {
		t.Fatal(err)
	}
	if err := c.SendEvent([]byte(`{"type":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "pong" }); err != nil {
		t.Fatal(err)
	}
	p, ok := conn.Path()
	if !ok {
		t.Fatal("connected without a selected path")
	}
	return p
}

// TestICETCPOnlyClient: a client that can only do TCP (active ICE-TCP
// candidates) reaches the gateway's one TCP port, media and events flow;
// a UDP client on the same engine still uses the UDP port.
func TestICETCPOnlyClient(t *testing.T) {
	ln := tcpListener(t)
	port := ln.Addr().(*net.TCPAddr).Port
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{}, rtc.WithTCPListener(ln))
	if got := ts.eng.TCPAddr(); got == nil || got.String() != ln.Addr().String() {
		t.Fatalf("TCPAddr %v, want %s", got, ln.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true,
		NetworkTypes: []webrtc.NetworkType{webrtc.NetworkTypeTCP4}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	if strings.Contains(c.Offer(), " udp ") || strings.Contains(c.Offer(), " UDP ") {
		t.Fatalf("the TCP-only client offered UDP candidates:\n%s", c.Offer())
	}
	p := playAndCheck(t, ctx, ts, c)
	if p.Protocol != "tcp" || p.Local != "host" {
		t.Errorf("server path %+v, want tcp from the host candidate", p)
	}
	pair, err := c.SelectedPair()
	if err != nil || pair == nil {
		t.Fatalf("client pair: %v", err)
	}
	if pair.Remote.Protocol != webrtc.ICEProtocolTCP || int(pair.Remote.Port) != port || pair.Remote.TCPType != "passive" {
		t.Errorf("client reached %s %s:%d tcptype %q, want the passive candidate on port %d",
			pair.Remote.Protocol, pair.Remote.Address, pair.Remote.Port, pair.Remote.TCPType, port)
	}

	// UDP clients keep the UDP mux.
	u := dial(t, ctx, ts.URL)
	if p := playAndCheck(t, ctx, ts, u); p.Protocol != "udp" {
		t.Errorf("UDP client path %+v", p)
	}
}

// TestICETCPPortFromConfig binds rtc.tcp_port itself and refuses a taken one.
func TestICETCPPortFromConfig(t *testing.T) {
	ln := tcpListener(t)
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := rtc.LoopbackConfig()
	cfg.TCPPort = port
	_, err := rtc.NewEngine(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "rtc.tcp_port") {
		t.Fatalf("taken port %d: err %v, want one naming rtc.tcp_port", port, err)
	}
	_ = ln.Close()
	e, err := rtc.NewEngine(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.TCPAddr().String(); got != "127.0.0.1:"+strconv.Itoa(port) {
		t.Errorf("TCPAddr %s", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed means closed: the port is free again.
	ln2, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("engine close left the port bound: %v", err)
	}
	_ = ln2.Close()
}

// TestICETCPConnCap: past tcp_max_conns the gateway closes new connections
// at once; the ones it holds are untouched.
func TestICETCPConnCap(t *testing.T) {
	ln := tcpListener(t)
	cfg := rtc.LoopbackConfig()
	cfg.TCPMaxConns = 2
	e, err := rtc.NewEngine(cfg, nil, rtc.WithTCPListener(ln))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp4", e.TCPAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	extra, err := net.Dial("tcp4", e.TCPAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := extra.Read(make([]byte, 1)); err == nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Fatalf("third connection not closed by the gateway: %v", err)
	}
	_ = held[0].SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := held[0].Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("a held connection was closed: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestTURNRelayThroughCoturn: a client forced to relay reaches the gateway
// through a real coturn with the credential the answer's Link headers
// minted, over TURN/UDP and over TURN/TCP (a client whose UDP is blocked).
// The gateway also serves ICE-TCP, which a relay-only client must not use.
func TestTURNRelayThroughCoturn(t *testing.T) {
	turn := startCoturn(t)
	ts := newTestServer(t, turnConfig(turn, coturnSecret), rtc.HandlerOptions{}, rtc.WithTCPListener(tcpListener(t)))
	servers := linkServers(t, ts.URL)
	if len(servers) != 1 || len(servers[0].URLs) != 2 || servers[0].Username == "" {
		t.Fatalf("Link servers %+v, want one minted TURN entry with two URLs", servers)
	}
	for _, tc := range []struct {
		name string
		url  string
		nets []webrtc.NetworkType
	}{
		{"udp", turn.URL("udp"), nil},
		// Relay candidates are UDP on the far side; the client reaches coturn over TCP.
		{"tcp", turn.URL("tcp"), []webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeTCP4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := servers[0]
			srv.URLs = []string{tc.url}
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true, RelayOnly: true,
				ICEServers: []webrtc.ICEServer{srv}, NetworkTypes: tc.nets})
			if err != nil {
				t.Fatal(err)
			}
			defer closeClient(t, c)
			if !strings.Contains(c.Offer(), "typ relay") || strings.Contains(c.Offer(), "typ host") {
				t.Fatalf("relay-only offer:\n%s", c.Offer())
			}
			p := playAndCheck(t, ctx, ts, c)
			if p.Protocol != "udp" || (p.Remote != "relay" && p.Remote != "prflx") {
				t.Errorf("server path %+v, want udp to the client's relayed address", p)
			}
			pair, err := c.SelectedPair()
			if err != nil || pair == nil || pair.Local.Typ != webrtc.ICECandidateTypeRelay {
				t.Fatalf("client pair %v (%v), want a local relay candidate", pair, err)
			}
		})
	}
}

// TestTURNBadCredentialNeverConnects: credentials minted with the wrong
// secret, or already expired by the gateway's clock, are refused by coturn:
// the relay-only client gathers nothing and the session never connects.
func TestTURNBadCredentialNeverConnects(t *testing.T) {
	turn := startCoturn(t)
	for _, tc := range []struct {
		name   string
		secret string
		clock  func() time.Time
	}{
		{"wrong secret", "not-the-coturn-secret-0123456789", time.Now},
		{"expired", coturnSecret, func() time.Time { return time.Now().Add(-time.Hour) }}, // ttl 600 s: expired 50 min ago
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, turnConfig(turn, tc.secret), rtc.HandlerOptions{}, rtc.WithClock(tc.clock))
			servers := linkServers(t, ts.URL)
			if len(servers) != 1 {
				t.Fatalf("Link servers %+v", servers)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := fixtures.Start(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true, RelayOnly: true, ICEServers: servers})
			if err != nil {
				t.Fatal(err)
			}
			defer closeClient(t, c)
			if strings.Contains(c.Offer(), "a=candidate") {
				t.Fatalf("coturn accepted the credential: candidates\n%s", c.Offer())
			}
			wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
			defer wcancel()
			if err := c.WaitReady(wctx); err == nil {
				t.Fatal("connected without a relay")
			}
			conn, ok := ts.h.Conn(idOf(c))
			if !ok {
				t.Fatal("no server conn")
			}
			select {
			case <-conn.Ready():
				t.Fatal("server side connected")
			default:
			}
			if _, ok := conn.Path(); ok {
				t.Error("server side selected a path")
			}
		})
	}
}
