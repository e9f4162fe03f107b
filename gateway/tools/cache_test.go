package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// TestSchemaCacheByPartnerAndDigest: the same schema is compiled once per
// partner (a retried or repeated PUT costs nothing), a refusal is cached as
// well, another partner never shares an entry (no timing oracle across
// partners), and the cache stays bounded.
func TestSchemaCacheByPartnerAndDigest(t *testing.T) {
	r, err := New(DefaultConfig(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	raw := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	s1, err := r.schema(ctx, "p1", raw)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := r.schema(ctx, "p1", append(json.RawMessage(nil), raw...))
	if s1 != s2 {
		t.Fatal("the same schema bytes compiled twice for one partner")
	}
	if s3, _ := r.schema(ctx, "p2", raw); s3 == s1 {
		t.Fatal("another partner got the first partner's compiled schema")
	}
	bad := json.RawMessage(`{"type":"object","properties":{"a":{"minLength":-1}}}`)
	_, e1 := r.schema(ctx, "p1", bad)
	_, e2 := r.schema(ctx, "p1", bad)
	if e1 == nil || e1 != e2 {
		t.Fatalf("refusal not cached: %v, %v", e1, e2)
	}
	for i := range maxCached + 10 {
		_, _ = r.schema(ctx, "p3", json.RawMessage(fmt.Sprintf(`{"type":"object","title":"%d"}`, i)))
	}
	if n := r.cache.len(); n != maxCached {
		t.Fatalf("cache holds %d entries, want the bound %d", n, maxCached)
	}
	// A cancelled request does not wait for a compile slot.
	for range cap(r.compiling) {
		r.compiling <- struct{}{}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.schema(cctx, "p4", json.RawMessage(`{"type":"object","title":"new"}`)); err == nil {
		t.Fatal("a cancelled request compiled while every slot was taken")
	}
}
