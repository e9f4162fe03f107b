package main

import (
	"errors"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// TestClusterFairShares: a partner's share of the sessions (half of 4) is
// the cluster's, not each node's: one session on each of two nodes fills
// it, another partner still opens, and a killed node's share comes back
// once its heartbeat lapses.
func TestClusterFairShares(t *testing.T) {
	rs := redistest.Start(t)
	caps := func(c *fileConfig) {
		c.Session.MaxSessions = 4
		c.Limits.PerPartner.Sessions, c.Limits.PerToken.Sessions = 0.5, 0.5
	}
	a, b := startNode(t, rs, "gw-a", caps), startNode(t, rs, "gw-b", caps)
	open := func(n *node, partner, endUser string) error {
		_, st, err := n.a.sessions.Open(session.Owner{PartnerID: partner, EndUserID: endUser}, nil)
		if err == nil {
			t.Cleanup(st.Detach)
		}
		return err
	}
	if err := open(a, "partner-a", "u_1"); err != nil {
		t.Fatal(err)
	}
	if err := open(b, "partner-a", "u_2"); err != nil {
		t.Fatal(err)
	}
	var ge *gateway.Error
	for _, n := range []*node{a, b} {
		if err := open(n, "partner-a", "u_3"); !errors.As(err, &ge) || ge.Type != gateway.RateLimited || ge.RetryAfter < 1 {
			t.Fatalf("a third session of partner-a's two across the nodes: %v, want rate_limited with Retry-After", err)
		}
	}
	if err := open(b, "partner-b", "u_1"); err != nil {
		t.Fatalf("partner-b refused beside partner-a at its share: %v", err)
	}
	a.kill()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := open(b, "partner-a", "u_3")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partner-a's share held by the killed node never came back: %v", err)
		}
	}
}
