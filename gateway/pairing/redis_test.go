package pairing_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/cluster"
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

// twoNodes are two pairing services on one Redis (codes, pairings and the
// per-address buckets shared), on one fake clock.
func twoNodes(t *testing.T, cfg pairing.Config) (a, b *harness) {
	t.Helper()
	rs := redistest.Start(t)
	opts := func() pairing.Options {
		return pairing.Options{Codes: pairing.NewRedisCodes(rs.Client()), RateLimiter: cluster.NewRateLimiter(rs.Client())}
	}
	a = newNode(t, pairing.NewRedisStore(rs.Client()), cfg, nil, opts())
	b = newNode(t, pairing.NewRedisStore(rs.Client()), cfg, a.clock, opts())
	return a, b
}

// TestCodeRefusalsOnRedis: the single-node refusals (unknown, expired,
// reused, burnt by another device, replaced) hold on the Redis codes.
func TestCodeRefusalsOnRedis(t *testing.T) {
	a, _ := twoNodes(t, pairing.DefaultConfig())
	checkCodeRefusals(t, a)
}

// TestCodesAcrossNodes: a code issued through node a is exchanged through
// node b, once; a newer code issued through b replaces a's unused one; a
// code withdrawn through b is gone on a; an expired code is refused on
// either; the code cap counts both nodes' codes.
func TestCodesAcrossNodes(t *testing.T) {
	cfg := pairing.DefaultConfig()
	cfg.MaxCodes = 4
	a, b := twoNodes(t, cfg)
	c := a.code(keyA, "u_x_1", device)
	ex := b.exchange(c.str("code"), device, "198.51.100.1:1")
	if ex.status != 201 || ex.str("pairing_id") != c.str("pairing_id") {
		t.Fatalf("exchange on b of a's code = %d %v", ex.status, ex.body)
	}
	if r := a.refresh(ex.str("refresh_token"), device); r.status != 200 {
		t.Fatalf("refresh on a = %d %v", r.status, r.body)
	}
	for _, n := range []*harness{a, b} {
		if r := n.exchange(c.str("code"), device, "198.51.100.2:1"); r.status != 401 || !strings.Contains(r.errMsg(), "already used") {
			t.Fatalf("second exchange = %d %v", r.status, r.body)
		}
	}
	old := a.code(keyA, "u_x_2", device).str("code")
	newer := b.code(keyA, "u_x_2", device).str("code")
	if r := a.exchange(old, device, "198.51.100.3:1"); r.status != 401 || !strings.Contains(r.errMsg(), "unknown") {
		t.Fatalf("replaced code on a = %d %v", r.status, r.body)
	}
	w := a.code(keyA, "u_x_3", device)
	if r := b.do("DELETE", "/v1/pairings/"+w.str("pairing_id"), keyB, "", ""); r.status != 404 {
		t.Fatalf("another partner withdrew a's code: %d", r.status)
	}
	if r := b.do("DELETE", "/v1/pairings/"+w.str("pairing_id"), keyA, "", ""); r.status != 204 {
		t.Fatalf("withdraw on b = %d %v", r.status, r.body)
	}
	if r := a.exchange(w.str("code"), device, "198.51.100.4:1"); r.status != 401 || !strings.Contains(r.errMsg(), "unknown") {
		t.Fatalf("withdrawn code on a = %d %v", r.status, r.body)
	}
	// Held now: the used one, newer; then two more reach the cap of 4.
	b.code(keyA, "u_x_4", device)
	late := a.code(keyA, "u_x_5", device).str("code")
	if r := b.do("POST", "/v1/pairings", keyA, `{"end_user_id":"u_x_6","device":"`+device+`"}`, ""); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("a fifth code across two nodes = %d %v, want 503 (max_codes 4)", r.status, r.body)
	}
	a.clock.Advance(5 * time.Minute)
	for i, n := range []*harness{a, b} {
		code := newer
		if i == 1 {
			code = late
		}
		if r := n.exchange(code, device, "198.51.100.5:1"); r.status != 401 || !strings.Contains(r.errMsg(), "expired") {
			t.Fatalf("expired code = %d %v", r.status, r.body)
		}
	}
}

// TestCodeExchangeRace: the same code exchanged at once through two nodes
// is paired exactly once, each time.
func TestCodeExchangeRace(t *testing.T) {
	a, b := twoNodes(t, pairing.DefaultConfig())
	for i := range 20 {
		code := a.code(keyA, fmt.Sprintf("u_race_%d", i), device).str("code")
		var wg sync.WaitGroup
		got := make([]reply, 2)
		for j, n := range []*harness{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[j] = n.exchange(code, device, fmt.Sprintf("198.51.100.%d:1", 10+2*i+j))
			}()
		}
		wg.Wait()
		won, lost := 0, 0
		for _, r := range got {
			switch {
			case r.status == 201:
				won++
			case r.status == 401 && strings.Contains(r.errMsg(), "already used"):
				lost++
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("race %d: %d won, %d told already used: %d %v / %d %v", i, won, lost, got[0].status, got[0].body, got[1].status, got[1].body)
		}
	}
}

// TestExchangeLimitAcrossNodes: one address's guesses count once across
// the nodes: the 11th in a minute is refused wherever it lands.
func TestExchangeLimitAcrossNodes(t *testing.T) {
	a, b := twoNodes(t, pairing.DefaultConfig())
	for i := range 10 {
		n := []*harness{a, b}[i%2]
		if r := n.exchange("AAAA-AAA"+string(rune('0'+i)), device, "192.0.2.77:1"); r.status != 401 {
			t.Fatalf("guess %d: %d %v", i+1, r.status, r.body)
		}
	}
	for _, n := range []*harness{a, b} {
		if r := n.exchange("AAAA-BBBB", device, "192.0.2.77:2"); r.status != 429 || r.header.Get("Retry-After") == "" {
			t.Fatalf("11th guess = %d %v, want 429 on both nodes", r.status, r.body)
		}
	}
}

// TestCodesRedisDown: without Redis a code is neither issued nor claimed
// (503 with Retry-After), and it is still good once Redis is back.
func TestCodesRedisDown(t *testing.T) {
	rs := redistest.Start(t)
	h := newNode(t, pairing.NewRedisStore(rs.Client()), pairing.DefaultConfig(), nil, pairing.Options{Codes: pairing.NewRedisCodes(rs.Client())})
	code := h.code(keyA, "u_down_1", device).str("code")
	rs.Stop()
	if r := h.do("POST", "/v1/pairings", keyA, `{"end_user_id":"u_down_2","device":"`+device+`"}`, ""); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("issue without Redis = %d %v", r.status, r.body)
	}
	if r := h.exchange(code, device, ""); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("exchange without Redis = %d %v", r.status, r.body)
	}
	rs.Start()
	if r := h.exchange(code, device, ""); r.status != 201 {
		t.Fatalf("exchange after Redis came back = %d %v", r.status, r.body)
	}
}
