package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
)

// shareNode is one node's fair shares on the cluster c: a partner may hold
// half of 4 voice sessions (2), one end user 1 (a quarter).
func shareNode(c *Cluster) *gateway.Shares {
	lim := gateway.DefaultConfig().Limits
	lim.PerPartner.VoiceSessions, lim.PerToken.VoiceSessions = 0.5, 0.25
	s := gateway.NewShares(lim, map[gateway.ShareKind]int{gateway.ShareVoiceSessions: 4}, 3)
	c.Shares(s)
	return s
}

func mustTake(t *testing.T, s *gateway.Shares, partner, endUser string) func() {
	t.Helper()
	release, err := s.Acquire(gateway.ShareVoiceSessions, partner, endUser)
	if err != nil {
		t.Fatalf("Acquire(%s, %s) refused: %v", partner, endUser, err)
	}
	return release
}

func wantRefused(t *testing.T, s *gateway.Shares, partner, endUser string, typ gateway.ErrorType) {
	t.Helper()
	release, err := s.Acquire(gateway.ShareVoiceSessions, partner, endUser)
	if err == nil {
		release()
		t.Fatalf("Acquire(%s, %s) admitted, want %s", partner, endUser, typ)
	}
	if err.Type != typ || err.RetryAfter != 3 {
		t.Fatalf("Acquire(%s, %s) = %+v, want %s with Retry-After 3", partner, endUser, err, typ)
	}
}

// eventually retries try until it admits, for at most 5 s (a heartbeat is
// 100 ms here, so a lapse or a rewrite takes at most a few).
func eventually(t *testing.T, what string, try func() (func(), *gateway.Error)) func() {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		release, err := try()
		if err == nil {
			return release
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still refused after 5 s: %v", what, err)
		}
	}
}

// TestSharesAcrossNodes: two nodes share one cap. A partner's share of 2
// voice sessions is 2 across both nodes, and an end user's 1 is 1; a
// release on one node frees the share for the other at once; other
// partners are not touched by a partner at its cap.
func TestSharesAcrossNodes(t *testing.T) {
	rs := redistest.Start(t)
	a := shareNode(join(t, testConfig(rs, "gw-a")))
	b := shareNode(join(t, testConfig(rs, "gw-b")))

	ra := mustTake(t, a, "pa", "u1")
	wantRefused(t, b, "pa", "u1", gateway.RateLimited) // u1's one, held on a
	rb := mustTake(t, b, "pa", "u2")
	wantRefused(t, a, "pa", "u3", gateway.RateLimited) // pa's two: one per node
	wantRefused(t, b, "pa", "", gateway.RateLimited)
	mustTake(t, a, "pb", "u1")() // another partner, the same end user id
	if n := a.Held(gateway.ShareVoiceSessions, "pa"); n != 1 {
		t.Fatalf("a counts %d of pa's after refusals, want 1 (a refusal keeps nothing)", n)
	}
	ra()
	ra() // a second call releases nothing more
	// The release is sent behind; b sees it within a round trip or two.
	r3 := eventually(t, "pa's share after a's release", func() (func(), *gateway.Error) {
		return b.Acquire(gateway.ShareVoiceSessions, "pa", "u3")
	})
	wantRefused(t, a, "pa", "u4", gateway.RateLimited)
	rb()
	r3()
	eventually(t, "pa's whole share on one node", func() (func(), *gateway.Error) {
		return a.Acquire(gateway.ShareVoiceSessions, "pa", "u5")
	})
	mustTake(t, a, "pa", "u6")
	wantRefused(t, b, "pa", "u7", gateway.RateLimited)
}

// TestSharesConcurrentAcrossNodes: 40 racing Acquires for one partner,
// half on each node, admit exactly the cap of 2 (the check and the count
// are one script).
func TestSharesConcurrentAcrossNodes(t *testing.T) {
	rs := redistest.Start(t)
	nodes := []*gateway.Shares{shareNode(join(t, testConfig(rs, "gw-a"))), shareNode(join(t, testConfig(rs, "gw-b")))}
	var (
		mu       sync.Mutex
		admitted []func()
		wg       sync.WaitGroup
	)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := nodes[i%2].Acquire(gateway.ShareVoiceSessions, "pa", fmt.Sprintf("u%d", i))
			if err == nil {
				mu.Lock()
				admitted = append(admitted, release)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(admitted) != 2 {
		t.Fatalf("%d of 40 racing Acquires admitted, want exactly the partner's 2", len(admitted))
	}
	for _, r := range admitted {
		r()
	}
}

// TestSharesNodeDies: a killed node's holdings lapse with its heartbeat
// (two heartbeats), so a crash never keeps a share forever; a closed node
// gives them back at once.
func TestSharesNodeDies(t *testing.T) {
	rs := redistest.Start(t)
	a := shareNode(join(t, testConfig(rs, "gw-a")))
	cb := join(t, testConfig(rs, "gw-b"))
	b := shareNode(cb)
	mustTake(t, b, "pa", "u1")
	mustTake(t, b, "pa", "u2")
	wantRefused(t, a, "pa", "u3", gateway.RateLimited)
	cb.Kill()
	r := eventually(t, "pa's share after b was killed", func() (func(), *gateway.Error) {
		return a.Acquire(gateway.ShareVoiceSessions, "pa", "u3")
	})
	ttl, err := rs.Client().PTTL(context.Background(), shareKey("gw-b", cb.instance)).Result()
	if err != nil || ttl > 2*100*time.Millisecond {
		t.Fatalf("the killed node's share hash lives %v (%v), want gone or lapsing within two heartbeats", ttl, err)
	}
	r()

	cc := join(t, testConfig(rs, "gw-c"))
	c := shareNode(cc)
	mustTake(t, c, "pa", "u1")
	mustTake(t, c, "pa", "u2")
	wantRefused(t, a, "pa", "u3", gateway.RateLimited)
	if err := cc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustTake(t, a, "pa", "u3") // no waiting: Close removed c's holdings
}

// TestSharesRedisLost: with Redis gone a new share is refused with 503 and
// Retry-After (it cannot be checked across the cluster) while releases do
// not block; once Redis is back, each node's next heartbeat rewrites its
// counts (the ones Redis held have lapsed meanwhile, and a release it
// missed is righted).
func TestSharesRedisLost(t *testing.T) {
	rs := redistest.Start(t)
	ca := join(t, testConfig(rs, "gw-a"))
	a := shareNode(ca)
	b := shareNode(join(t, testConfig(rs, "gw-b")))
	r1 := mustTake(t, a, "pa", "u1")
	mustTake(t, a, "pa", "u2")
	wantRefused(t, b, "pa", "u3", gateway.RateLimited)
	rs.Stop()
	wantRefused(t, b, "pa", "u3", gateway.Unavailable)
	done := make(chan struct{})
	go func() { r1(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a release blocked on a Redis that is down")
	}
	if n := a.Held(gateway.ShareVoiceSessions, "pa"); n != 1 {
		t.Fatalf("a counts %d of pa's after the release, want 1", n)
	}
	rs.Start()
	ctx, rdb := context.Background(), rs.Client()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		v, _ := rdb.HGet(ctx, shareKey("gw-a", ca.instance), "voice_sessions\x00pa").Result()
		if strings.HasPrefix(v, "1:") {
			break // a's heartbeat has rewritten its one
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's count in Redis is %q 5 s after Redis came back, want 1", v)
		}
	}
	eventually(t, "pa's share once Redis is back", func() (func(), *gateway.Error) {
		return b.Acquire(gateway.ShareVoiceSessions, "pa", "u3")
	})
	wantRefused(t, b, "pa", "u4", gateway.RateLimited)
}
