package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// countingLimiter is the real in-memory limiter, counting the Waits the
// server asks of it (a Redis limiter's round trips, in a cluster).
type countingLimiter struct {
	*MemoryRateLimiter
	waits atomic.Int64
}

func (c *countingLimiter) Wait(ctx context.Context, b Bucket) (time.Duration, error) {
	c.waits.Add(1)
	return c.MemoryRateLimiter.Wait(ctx, b)
}

// TestAuthFailureThrottleAsksOnlyAfterFailures: a source that never failed
// authenticates without the limiter being asked about its failures; once
// it fails, its requests ask first and are throttled past the limit; a
// minute after its last failure the bucket is full and asking stops.
func TestAuthFailureThrottleAsksOnlyAfterFailures(t *testing.T) {
	clk := newFakeClock()
	lim := &countingLimiter{MemoryRateLimiter: NewMemoryRateLimiter(clk)}
	cfg := testConfig()
	cfg.Limits.AuthFailuresPerMinute = 3
	s, err := New(cfg, Options{Clock: clk, RateLimiter: lim})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount(Route{Method: "POST", Path: "/v1/device", Scope: ScopeSessionsWrite,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })})
	do := func(src, key string) int {
		req := httptest.NewRequest("POST", "/v1/device", nil)
		req.RemoteAddr, req.Host = src+":4000", "localhost"
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	const bad = "vera_sk_wrong_key_0000000000"
	for i := 0; i < 20; i++ {
		if st := do("192.0.2.1", keyA); st != 204 {
			t.Fatalf("request %d = %d", i, st)
		}
	}
	if n := lim.waits.Load(); n != 0 {
		t.Fatalf("%d Waits for a source that never failed, want 0", n)
	}
	for i := 0; i < 3; i++ {
		if st := do("192.0.2.2", bad); st != 401 {
			t.Fatalf("failure %d = %d, want 401", i+1, st)
		}
	}
	// Throttled before its credentials are looked at: a good key too.
	if st := do("192.0.2.2", keyA); st != 429 {
		t.Fatalf("a throttled source's good key = %d, want 429", st)
	}
	if n := lim.waits.Load(); n != 3 {
		t.Fatalf("%d Waits, want 3 (the failing source's requests after its first failure)", n)
	}
	if st := do("192.0.2.1", keyA); st != 204 || lim.waits.Load() != 3 {
		t.Fatalf("another source = %d after %d Waits: it must not ask", st, lim.waits.Load())
	}
	clk.Advance(time.Minute)
	before := lim.waits.Load()
	for i := 0; i < 2; i++ {
		if st := do("192.0.2.2", keyA); st != 204 || lim.waits.Load() != before {
			t.Fatalf("a minute later = %d after %d more Waits; want 204 and none (the bucket is full again)", st, lim.waits.Load()-before)
		}
	}
}
