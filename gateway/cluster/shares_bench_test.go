package cluster

import (
	"context"
	"fmt"
	"testing"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
)

func joinTB(b testing.TB, rs *redistest.Server, id string) *Cluster {
	b.Helper()
	c, err := New(context.Background(), testConfig(rs, id), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// BenchmarkSharesAcquireRelease: one Acquire and its release of a voice
// session share, for a client token (partner and end-user shares), alone
// (process memory) and on a node of a two-node cluster (one script per
// Acquire; the release is sent behind, batched).
func BenchmarkSharesAcquireRelease(b *testing.B) {
	rs := redistest.Start(b)
	for _, mode := range []string{"alone", "cluster"} {
		b.Run(mode, func(b *testing.B) {
			var c *Cluster
			if mode == "cluster" {
				c = joinTB(b, rs, "gw-a-"+fmt.Sprint(b.N))
				peer := joinTB(b, rs, "gw-b-"+fmt.Sprint(b.N))
				// The other node holds shares of other partners: the
				// script reads its hash as in a real cluster.
				ps := shareNode(peer)
				for i := range 50 {
					r, err := ps.Acquire(gateway.ShareVoiceSessions, fmt.Sprintf("p%d", i), "u")
					if err != nil {
						b.Fatal(err)
					}
					defer r()
				}
			}
			lim := gateway.DefaultConfig().Limits
			s := gateway.NewShares(lim, map[gateway.ShareKind]int{gateway.ShareVoiceSessions: 1000}, 3)
			c.Shares(s)
			var trips0 int64
			if c != nil {
				trips0 = c.RoundTrips()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := s.Acquire(gateway.ShareVoiceSessions, "pa", "u1")
				if err != nil {
					b.Fatal(err)
				}
				r()
			}
			b.StopTimer()
			if c != nil {
				// Heartbeats (100 ms here) add a few; the Acquires are one each.
				b.ReportMetric(float64(c.RoundTrips()-trips0)/float64(b.N), "trips/op")
			}
		})
	}
}

// BenchmarkSharesHeartbeat: one heartbeat of a node holding shares for n
// holders, steady (the hash's PEXPIRE rides in the heartbeat's pipeline)
// and rewriting every count (after a write may have been lost).
func BenchmarkSharesHeartbeat(b *testing.B) {
	rs := redistest.Start(b)
	for _, bc := range []struct {
		n       int
		rewrite bool
	}{{0, false}, {1000, false}, {1000, true}} {
		n := bc.n
		name := fmt.Sprintf("holders=%d", n)
		if bc.rewrite {
			name += "/rewrite"
		}
		b.Run(name, func(b *testing.B) {
			c := joinTB(b, rs, fmt.Sprintf("gw-hb-%d-%v-%d", n, bc.rewrite, b.N))
			lim := gateway.DefaultConfig().Limits
			s := gateway.NewShares(lim, map[gateway.ShareKind]int{gateway.ShareSessions: 100000}, 3)
			c.Shares(s)
			for i := range n {
				r, err := s.Acquire(gateway.ShareSessions, fmt.Sprintf("p%d", i%20), fmt.Sprintf("u%d", i))
				if err != nil {
					b.Fatal(err)
				}
				defer r()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if bc.rewrite {
					c.shareDirty.Store(true)
				}
				c.beat()
			}
		})
	}
}
