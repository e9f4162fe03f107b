package chat_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// BenchmarkChatTurn is one text turn over a real loopback websocket:
// input.text out, transcript.final … reply.done back.
func BenchmarkChatTurn(b *testing.B) {
	s := newServer(b, func(c *chat.Config, _ *session.Config) { c.EventsPerSecond = 1e6; c.Burst = 1 << 20 })
	c := s.dial(b, "good")
	c.send(`{"type":"hello","device":"browser"}`)
	c.until(event.TypeNotice)
	b.ReportAllocs()
	for b.Loop() {
		c.send(`{"type":"input.text","text":"how was your day"}`)
		c.until(event.TypeReplyDone)
	}
}

// BenchmarkChatSetupBesidePartnerAtCaps: partner b's chat setup (dial,
// hello, session.created, close) alone and while partner a holds its whole
// share — 100 live chats with sessions of a gateway of 200. Reports the
// median per op; the target is b within 10 % of alone. Each op
// leaves b a session in its resume window, so run at most 100 ops (b's
// share) per round:
//
//	go test -tags nolibopusfile -run '^$' -bench ChatSetupBesidePartnerAtCaps -benchtime 50x -count 5 -benchmem ./gateway/chat/
func BenchmarkChatSetupBesidePartnerAtCaps(b *testing.B) {
	for _, beside := range []bool{false, true} {
		name := "alone"
		if beside {
			name = "beside_a_at_caps"
		}
		b.Run(name, func(b *testing.B) {
			if b.N > 100 {
				b.Skip("more ops than partner b's share of sessions; use -benchtime 50x")
			}
			s := sharedServerOf(b, 200, 0.5)
			if beside {
				for i := 0; i < 100; i++ {
					c, _ := s.tryDial(b, fmt.Sprintf("pa/u%d", i))
					if c == nil {
						b.Fatalf("partner a's chat %d refused", i)
					}
					c.hello("")
				}
				if c, resp := s.tryDial(b, "pa/over"); c != nil || resp.StatusCode != 429 {
					b.Fatal("partner a is not at its cap")
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				c, _ := s.tryDial(b, "pb/u1")
				if c == nil {
					b.Fatal("partner b refused")
				}
				c.hello("")
				lat = append(lat, time.Since(t0))
				_ = c.c.Close(websocket.StatusNormalClosure, "")
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
		})
	}
}
