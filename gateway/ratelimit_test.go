package gateway

import (
	"context"
	"testing"
	"time"
)

// TestMemoryRateLimiterAllOrNone: a Take that one bucket refuses takes
// nothing from the others, and Wait takes nothing at all.
func TestMemoryRateLimiterAllOrNone(t *testing.T) {
	clk := newFakeClock()
	ctx := context.Background()
	m := NewMemoryRateLimiter(clk)
	big, small := Bucket{Key: "big", PerMinute: 60}, Bucket{Key: "small", PerMinute: 2}
	for i := 0; i < 2; i++ {
		if d, _ := m.Take(ctx, big, small); !d.OK {
			t.Fatalf("take %d refused: %+v", i+1, d)
		}
	}
	for i := 0; i < 5; i++ {
		d, _ := m.Take(ctx, big, small)
		if d.OK || d.Refused != 1 || d.RetryAfter != 30*time.Second {
			t.Fatalf("third take = %+v, want refused by bucket 1 for 30 s", d)
		}
	}
	// The refusals took nothing from big: 58 remain.
	for i := 0; i < 58; i++ {
		if d, _ := m.Take(ctx, big); !d.OK {
			t.Fatalf("big take %d refused after small's refusals: %+v", i+1, d)
		}
	}
	if w, _ := m.Wait(ctx, big); w != time.Second {
		t.Fatalf("Wait(big) = %v, want 1s", w)
	}
	if w, _ := m.Wait(ctx, big); w != time.Second {
		t.Fatalf("Wait took a token: second Wait = %v", w)
	}
	clk.Advance(time.Second)
	if w, _ := m.Wait(ctx, big); w != 0 {
		t.Fatalf("Wait after refill = %v, want 0", w)
	}
	if got := retryAfterSeconds(1500 * time.Millisecond); got != 2 {
		t.Fatalf("retryAfterSeconds(1.5s) = %d, want 2 (rounded up)", got)
	}
}
