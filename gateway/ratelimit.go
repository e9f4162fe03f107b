package gateway

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

// RateLimiter decides whether one more request under key may run now. A
// Redis-backed implementation for several nodes can replace the in-memory
// one behind this interface.
type RateLimiter interface {
	// Allow reports whether the request may run; when it may not, retryAfter
	// is how long until it would.
	Allow(key string) (ok bool, retryAfter time.Duration)
}

// MemoryRateLimiter is a token bucket per key (golang.org/x/time/rate):
// perMinute requests per minute with a burst of perMinute, so a client that
// was quiet may send a minute's worth at once and no more. Idle buckets are
// swept once the map holds more than maxKeys entries.
type MemoryRateLimiter struct {
	perMinute int
	clock     clock.Clock
	maxKeys   int

	mu      sync.Mutex // mu guards buckets
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// NewMemoryRateLimiter returns a limiter of perMinute requests per key per
// minute. now may be nil (wall clock).
func NewMemoryRateLimiter(perMinute int, clk clock.Clock) *MemoryRateLimiter {
	return &MemoryRateLimiter{perMinute: perMinute, clock: clock.OrReal(clk), maxKeys: 10_000, buckets: map[string]*bucket{}}
}

// Allow implements RateLimiter.
func (m *MemoryRateLimiter) Allow(key string) (bool, time.Duration) {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.buckets[key]
	if !ok {
		if len(m.buckets) >= m.maxKeys {
			m.sweep(now)
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(float64(m.perMinute)/60), m.perMinute)}
		m.buckets[key] = b
	}
	b.last = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep drops buckets idle long enough to have refilled completely: they
// behave exactly like new ones.
func (m *MemoryRateLimiter) sweep(now time.Time) {
	for k, b := range m.buckets {
		if now.Sub(b.last) > time.Minute {
			delete(m.buckets, k)
		}
	}
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}
