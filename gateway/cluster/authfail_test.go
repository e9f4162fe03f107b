package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
)

// askCounter is the Redis limiter, counting the auth-failure Waits (each
// one Redis round trip).
type askCounter struct {
	*RateLimiter
	waits atomic.Int64
}

func (a *askCounter) Wait(ctx context.Context, b gateway.Bucket) (time.Duration, error) {
	a.waits.Add(1)
	return a.RateLimiter.Wait(ctx, b)
}

const (
	throttleKey = "vera_sk_throttle_partner_0123456789"
	wrongKey    = "vera_sk_wrong_key_0000000000000000"
)

// throttleNode is a gateway edge on the shared limiter with one route.
func throttleNode(t *testing.T, rs *redistest.Server) (*askCounter, func(src, key string) int) {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.Auth.Keys = []gateway.KeyConfig{{ID: "pa", Secret: throttleKey, Scopes: gateway.AllScopes}}
	cfg.Limits.AuthFailuresPerMinute = 3
	lim := &askCounter{RateLimiter: NewRateLimiter(rs.Client())}
	s, err := gateway.New(cfg, gateway.Options{RateLimiter: lim})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount(gateway.Route{Method: "POST", Path: "/v1/x", Scope: gateway.ScopeSessionsWrite,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })})
	return lim, func(src, key string) int {
		req := httptest.NewRequest("POST", "/v1/x", nil)
		req.RemoteAddr, req.Host = src+":4000", "localhost"
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
}

// TestAuthFailureThrottleAcrossNodes: the failure bucket is the cluster's.
// A source that failed on node A up to the limit is throttled on node B
// from its first failed attempt there, and then before its credentials are
// looked at; a source that never failed costs neither node a Wait.
func TestAuthFailureThrottleAcrossNodes(t *testing.T) {
	rs := redistest.Start(t)
	la, a := throttleNode(t, rs)
	lb, b := throttleNode(t, rs)
	for i := 0; i < 10; i++ {
		if st := b("192.0.2.1", throttleKey); st != 204 {
			t.Fatalf("good request %d on b = %d", i, st)
		}
	}
	for i := 0; i < 3; i++ {
		if st := a("192.0.2.66", wrongKey); st != 401 {
			t.Fatalf("failure %d on a = %d, want 401", i+1, st)
		}
	}
	if st := a("192.0.2.66", wrongKey); st != 429 {
		t.Fatalf("fourth failure on a = %d, want 429", st)
	}
	// On b: its first failure is charged to the shared bucket, which is
	// empty: 429; from then on b asks first, so even a good key waits.
	if st := b("192.0.2.66", wrongKey); st != 429 {
		t.Fatalf("first failure on b after a's = %d, want 429", st)
	}
	if st := b("192.0.2.66", throttleKey); st != 429 {
		t.Fatalf("a throttled source's good key on b = %d, want 429", st)
	}
	if la.waits.Load() != 3 || lb.waits.Load() != 1 {
		t.Fatalf("Waits a=%d b=%d, want 3 and 1 (only after the source's failures on each node)", la.waits.Load(), lb.waits.Load())
	}
	if st := b("192.0.2.1", throttleKey); st != 204 || lb.waits.Load() != 1 {
		t.Fatalf("the good source on b = %d (Waits %d): it must not ask", st, lb.waits.Load())
	}
}
