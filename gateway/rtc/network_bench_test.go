package rtc_test

import (
	"context"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// BenchmarkSessionSetup times one session's setup per network path on one
// gateway, in one run: the client gathers, POSTs its offer, and ICE, DTLS
// and the events channel come up (fixtures.Dial). The relay paths allocate
// on a real coturn with the credential the answer minted; they are skipped
// without turnserver. Hang-up is outside the timer.
//
//	go test -tags nolibopusfile -run '^$' -bench SessionSetup -benchtime 20x -count 5 ./gateway/rtc/
func BenchmarkSessionSetup(b *testing.B) {
	var turn *fixtures.TURNServer
	if fixtures.TURNServerPath() != "" {
		turn = startCoturn(b)
	}
	cfg := rtc.LoopbackConfig()
	if turn != nil {
		cfg = turnConfig(turn, coturnSecret)
	}
	// Sessions decode but are not registered: the test server's registry
	// channel holds 256, fewer than -count 5 × 4 paths × 20 sessions.
	opts := rtc.HandlerOptions{NewSession: func(_ context.Context, _ rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
		return newDecodeSession(c)
	}}
	ts := newTestServer(b, cfg, opts, rtc.WithTCPListener(tcpListener(b)))
	var srv webrtc.ICEServer
	if turn != nil {
		srv = linkServers(b, ts.URL)[0]
	}
	relay := func(u string, nets ...webrtc.NetworkType) fixtures.ClientOptions {
		s := srv
		s.URLs = []string{u}
		return fixtures.ClientOptions{RelayOnly: true, ICEServers: []webrtc.ICEServer{s}, NetworkTypes: nets}
	}
	paths := []struct {
		name  string
		relay bool
		co    func() fixtures.ClientOptions
	}{
		{"udp", false, func() fixtures.ClientOptions { return fixtures.ClientOptions{} }},
		{"tcp", false, func() fixtures.ClientOptions {
			return fixtures.ClientOptions{NetworkTypes: []webrtc.NetworkType{webrtc.NetworkTypeTCP4}}
		}},
		{"relay-turn-udp", true, func() fixtures.ClientOptions { return relay(turn.URL("udp")) }},
		{"relay-turn-tcp", true, func() fixtures.ClientOptions {
			return relay(turn.URL("tcp"), webrtc.NetworkTypeUDP4, webrtc.NetworkTypeTCP4)
		}},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			if p.relay && turn == nil {
				b.Skip("turnserver not installed")
			}
			co := p.co()
			co.URL, co.LoopbackOnly = ts.URL, true
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				c, err := fixtures.Dial(ctx, co)
				if err != nil {
					cancel()
					b.Fatal(err)
				}
				b.StopTimer()
				if err := c.Close(ctx); err != nil {
					b.Error(err)
				}
				cancel()
				b.StartTimer()
			}
		})
	}
}
