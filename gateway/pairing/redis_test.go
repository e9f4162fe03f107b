package pairing_test

import (
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/gateway/pairing"
)

// TestRedisStore: pairings put through one node's store are found, listed
// by end user, swept and deleted through another's, and survive a Redis
// restart.
func TestRedisStore(t *testing.T) {
	rs := redistest.Start(t)
	a, b := pairing.NewRedisStore(rs.Client()), pairing.NewRedisStore(rs.Client())
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"pair_b", "pair_a", "pair_c"} {
		user := "u_1"
		if id == "pair_c" {
			user = "u_2"
		}
		p := pairing.Pairing{ID: id, Partner: "pa", EndUser: user, Device: "meta-rayban-display", Secret: [32]byte{byte(i)},
			Created: t0, Refreshed: t0.Add(time.Duration(i) * time.Hour)}
		if err := a.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	rs.Stop()
	rs.Start()
	got, err := b.ByEndUser("pa", "u_1")
	if err != nil || len(got) != 2 || got[0].ID != "pair_a" || got[1].ID != "pair_b" || got[1].Secret != [32]byte{0} {
		t.Fatalf("ByEndUser on b = %+v, %v", got, err)
	}
	if other, _ := b.ByEndUser("pb", "u_1"); len(other) != 0 {
		t.Fatalf("another partner's end user sees %d pairings", len(other))
	}
	if n, err := b.Sweep(t0.Add(90 * time.Minute)); err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want the two refreshed before 1:30", n, err)
	}
	if _, ok, _ := a.Get("pair_b"); ok {
		t.Fatal("a swept pairing is still there")
	}
	if err := a.Delete("pair_c"); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.ByEndUser("pa", "u_2"); len(got) != 0 {
		t.Fatalf("after delete: %+v", got)
	}
}

// TestPairingFlowOnRedis: the whole code → exchange → refresh flow on the
// Redis store.
func TestPairingFlowOnRedis(t *testing.T) {
	rs := redistest.Start(t)
	h := newHarness(t, pairing.NewRedisStore(rs.Client()), pairing.DefaultConfig())
	c := h.code(keyA, "u_7f3a", device)
	ex := h.exchange(c.str("code"), device, "")
	if ex.status != 201 || ex.str("refresh_token") == "" {
		t.Fatalf("exchange on Redis = %d %v", ex.status, ex.body)
	}
	if r := h.refresh(ex.str("refresh_token"), device); r.status != 200 || r.str("refresh_token") == "" {
		t.Fatalf("refresh on Redis = %d %v", r.status, r.body)
	}
}
