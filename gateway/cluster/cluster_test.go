package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/safety"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, redistest.LeakOptions...)
}

const testSecret = "cluster-secret-0123456789abcdef-0123456789"

func testConfig(rs *redistest.Server, id string) Config {
	return Config{RedisURL: rs.URL(), NodeID: id, AdvertiseURL: "http://127.0.0.1:1", SecretEnv: "S", Secret: testSecret, HeartbeatMS: 100}
}

func join(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	c, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// TestJoin: a node_id a live node holds is refused, as is a Redis that
// does not answer; a killed node's entries lapse within two heartbeats,
// and a closed node's at once.
func TestJoin(t *testing.T) {
	rs := redistest.Start(t)
	a := join(t, testConfig(rs, "gw-a"))
	if _, err := New(context.Background(), testConfig(rs, "gw-a"), Options{}); !errors.Is(err, ErrNodeIDTaken) {
		t.Fatalf("second gw-a: %v, want ErrNodeIDTaken", err)
	}
	bad := testConfig(rs, "gw-x")
	bad.RedisURL = "unix://" + t.TempDir() + "/none.sock"
	if _, err := New(context.Background(), bad, Options{}); !errors.Is(err, ErrRedisUnreachable) || !strings.Contains(err.Error(), "none.sock") {
		t.Fatalf("unreachable Redis: %v", err)
	}
	ctx := context.Background()
	// A live node of another protocol: joining is refused, naming it.
	rdb0 := rs.Client()
	now := time.Now().UnixMilli()
	rdb0.HSet(ctx, nodeKey("gw-old"), "instance", "x", "protocol", Protocol+1, "version", "v0")
	rdb0.ZAdd(ctx, nodesKey, redis.Z{Score: float64(now), Member: "gw-old"})
	if _, err := New(ctx, testConfig(rs, "gw-new"), Options{}); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "gw-old") {
		t.Fatalf("join beside another protocol: %v", err)
	}
	if n, _ := rdb0.Exists(ctx, nodeKey("gw-new")).Result(); n != 0 {
		t.Fatal("a refused node left its record behind")
	}
	rdb0.Del(ctx, nodeKey("gw-old"))
	if err := a.Register(ctx, Session, "sess_1", "partner-a", "u_1"); err != nil {
		t.Fatal(err)
	}
	b := join(t, testConfig(rs, "gw-b"))
	e, err := b.Lookup(ctx, Session, "sess_1")
	if err != nil || e.Node != "gw-a" || e.Partner != "partner-a" || e.EndUser != "u_1" || e.Protocol != Protocol || e.Version == "" {
		t.Fatalf("lookup on b = %+v, %v", e, err)
	}
	rdb := rs.Client()
	a.Kill()
	ttl, err := rdb.PTTL(ctx, entryKey(Session, "sess_1")).Result()
	if err != nil || ttl <= 0 || ttl > 2*100*time.Millisecond {
		t.Fatalf("entry TTL after the kill = %v (%v), want within two heartbeats (200ms)", ttl, err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := b.Lookup(ctx, Session, "sess_1"); errors.Is(err, ErrNoEntry) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed node's entry never lapsed")
		}
	}
	// The id is free again once the killed node's record lapsed.
	a2 := join(t, testConfig(rs, "gw-a"))
	_ = a2.Register(ctx, Voice, "v1", "partner-a", "")
	if err := a2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lookup(ctx, Voice, "v1"); !errors.Is(err, ErrNoEntry) {
		t.Fatalf("a closed node's entry is still there: %v", err)
	}
}

// TestRateLimiterAcrossNodes: two limiters on one Redis share the bucket:
// the 61st request of a minute is refused with the exact wait, and a
// refusal by one bucket takes nothing from the other.
func TestRateLimiterAcrossNodes(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	l1, l2 := NewRateLimiter(rs.Client()), NewRateLimiter(rs.Client())
	key := gateway.Bucket{Key: "partner\x00a", PerMinute: 60}
	for i := range 60 {
		l := l1
		if i%2 == 1 {
			l = l2
		}
		if d, err := l.Take(ctx, key); err != nil || !d.OK {
			t.Fatalf("request %d refused: %+v %v", i+1, d, err)
		}
	}
	d, err := l2.Take(ctx, key)
	if err != nil || d.OK || d.Refused != 0 || d.RetryAfter <= 900*time.Millisecond || d.RetryAfter > time.Second {
		t.Fatalf("61st = %+v %v, want refused for just under 1 s", d, err)
	}
	user := gateway.Bucket{Key: "user\x00a\x00u", PerMinute: 2}
	big := gateway.Bucket{Key: "partner\x00b", PerMinute: 60}
	for range 2 {
		if d, _ := l1.Take(ctx, big, user); !d.OK {
			t.Fatal("refused within both buckets")
		}
	}
	if d, _ := l2.Take(ctx, big, user); d.OK || d.Refused != 1 || d.RetryAfter <= 29*time.Second || d.RetryAfter > 30*time.Second {
		t.Fatalf("third take = %+v, want refused by the user bucket for 30 s", d)
	}
	for i := range 58 {
		if d, _ := l1.Take(ctx, big); !d.OK {
			t.Fatalf("big take %d refused after the user bucket's refusal", i)
		}
	}
	if w, _ := l1.Wait(ctx, big); w <= 0 || w > time.Second {
		t.Fatalf("Wait(big) = %v", w)
	}
	if w2, _ := l2.Wait(ctx, big); w2 <= 0 {
		t.Fatal("Wait took a token")
	}
	rs.Stop()
	if _, err := l1.Take(ctx, key); err == nil {
		t.Fatal("Take with Redis down did not fail")
	}
}

// TestIdempotencyAcrossNodes: a key running on one node is 409 on the
// other; its response replays byte for byte from either; another body is
// a mismatch; a released key runs again; a partner's capacity evicts only
// its own keys.
func TestIdempotencyAcrossNodes(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	s1 := NewIdempotencyStore(rs.Client(), 24*time.Hour, 2)
	s2 := NewIdempotencyStore(rs.Client(), 24*time.Hour, 2)
	k := gateway.IdempotencyKey{Partner: "pa", Scope: "POST /v1/client_tokens", Key: "k1"}
	sum := sha256.Sum256([]byte(`{"end_user_id":"u"}`))
	if r, err := s1.Begin(ctx, k, sum); r != nil || err != nil {
		t.Fatalf("first Begin = %v, %v", r, err)
	}
	if _, err := s2.Begin(ctx, k, sum); err != gateway.ErrIdempotencyInFlight {
		t.Fatalf("Begin on another node while running = %v, want in flight", err)
	}
	body := []byte("{\"token\":\"t\"}\n\x00\xff")
	if err := s1.Complete(ctx, k, gateway.StoredResponse{Status: 201, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}); err != nil {
		t.Fatal(err)
	}
	r, err := s2.Begin(ctx, k, sum)
	if err != nil || r == nil || r.Status != 201 || !bytes.Equal(r.Body, body) || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("replay on another node = %+v, %v", r, err)
	}
	if _, err := s2.Begin(ctx, k, sha256.Sum256([]byte("other"))); err != gateway.ErrIdempotencyMismatch {
		t.Fatalf("other body = %v", err)
	}
	k2 := gateway.IdempotencyKey{Partner: "pa", Scope: "POST /x", Key: "k2"}
	if _, err := s1.Begin(ctx, k2, sum); err != nil {
		t.Fatal(err)
	}
	if err := s1.Release(ctx, k2); err != nil {
		t.Fatal(err)
	}
	if r, err := s2.Begin(ctx, k2, sum); r != nil || err != nil {
		t.Fatalf("after release: %v %v, want a fresh claim", r, err)
	}
	other := gateway.IdempotencyKey{Partner: "pb", Scope: "POST /x", Key: "b"}
	if _, err := s1.Begin(ctx, other, sum); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // pa passes its capacity of 2
		_, _ = s1.Begin(ctx, gateway.IdempotencyKey{Partner: "pa", Scope: "POST /x", Key: string(rune('m' + i))}, sum)
	}
	if _, err := s2.Begin(ctx, other, sum); err != gateway.ErrIdempotencyInFlight {
		t.Fatalf("pb's key was evicted by pa's burst: %v", err)
	}
	if r, err := s2.Begin(ctx, k, sum); r != nil || err != nil {
		t.Fatalf("pa's oldest key survived pa's burst: %v %v", r, err)
	}
}

// TestForwardSignature: only a forward signed with the cluster secret,
// addressed to this node, fresh and first, verifies.
func TestForwardSignature(t *testing.T) {
	now := time.Now()
	p := gateway.Principal{PartnerID: "pa", Via: "token", EndUserID: "u_1", Device: "phone", Scopes: []string{gateway.ScopeSessionsWrite}}
	body := []byte(`{"text":"hi"}`)
	mk := func(secret string, at time.Time, to string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, InternalPath, nil)
		sign(r, []byte(secret), at, http.MethodPost, "/v1/sessions/s/messages", body, "gw-a", to, p)
		return r
	}
	seen := newReplayCache()
	r := mk(testSecret, now, "gw-b")
	got, err := verify(r, []byte(testSecret), "gw-b", now, body, seen)
	if err != nil || got.PartnerID != "pa" || got.EndUserID != "u_1" || got.Device != "phone" || !got.Has(gateway.ScopeSessionsWrite) {
		t.Fatalf("valid forward = %+v, %v", got, err)
	}
	if _, err := verify(r, []byte(testSecret), "gw-b", now, body, seen); !errors.Is(err, ErrReplayed) {
		t.Fatalf("replay = %v", err)
	}
	for name, c := range map[string]struct {
		r    *http.Request
		body []byte
		want error
	}{
		"wrong secret": {mk("another-secret-0123456789abcdef-01234", now, "gw-b"), body, ErrForged},
		"other node":   {mk(testSecret, now, "gw-c"), body, ErrForged},
		"changed body": {mk(testSecret, now.Add(time.Millisecond), "gw-b"), []byte(`{"text":"bye"}`), ErrForged},
		"stale":        {mk(testSecret, now.Add(-time.Minute), "gw-b"), body, ErrStale},
		"no signature": {httptest.NewRequest(http.MethodPost, InternalPath, nil), body, ErrForged},
	} {
		if _, err := verify(c.r, []byte(testSecret), "gw-b", now, c.body, seen); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	r = mk(testSecret, now.Add(2*time.Millisecond), "gw-b")
	r.Header.Set(HeaderPrincipal, encodePrincipal(gateway.Principal{PartnerID: "pb", Via: "key"}))
	if _, err := verify(r, []byte(testSecret), "gw-b", now, body, seen); !errors.Is(err, ErrForged) {
		t.Errorf("swapped principal: %v", err)
	}
}

// TestSafetyCountersAcrossNodes: cards counted on two nodes add up in one
// partner's report on either node; another partner's never appear; with
// Redis down the report fails rather than show one node's share.
func TestSafetyCountersAcrossNodes(t *testing.T) {
	rs := redistest.Start(t)
	a, b := join(t, testConfig(rs, "gw-a")), join(t, testConfig(rs, "gw-b"))
	la, lb := safety.NewCounters(nil), safety.NewCounters(nil)
	ca, cb := a.SafetyCounters(la).(audit.SharedSafetyCounters), b.SafetyCounters(lb).(audit.SharedSafetyCounters)
	la.Partner("pa").CardShown(safety.LevelCrisis, "US", safety.SurfaceHUD)
	lb.Partner("pa").CardShown(safety.LevelCrisis, "US", safety.SurfaceHUD)
	lb.Partner("pa").CardSpoken(safety.LevelCrisis, "US", safety.SurfaceVoice)
	lb.Partner("pb").CardShown(safety.LevelElevated, "GB", safety.SurfaceScreen)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, err := ca.TrySnapshotFor("pa")
		if err == nil && s.Totals[safety.EventShown] == 2 && s.Totals[safety.EventSpoken] == 1 {
			if len(s.Rows) != 2 || s.Rows[0].Region != "US" {
				t.Fatalf("rows = %+v", s.Rows)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pa's report on a = %+v, %v; want 2 shown, 1 spoken", s, err)
		}
	}
	if s, _ := cb.TrySnapshotFor("pb"); s.Totals[safety.EventShown] > 1 || len(s.Rows) > 1 {
		t.Fatalf("pb's report = %+v", s)
	}
	rs.Stop()
	if _, err := cb.TrySnapshotFor("pa"); err == nil {
		t.Fatal("a report without Redis did not fail")
	}
}
