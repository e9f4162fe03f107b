package gateway

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Bucket is one token bucket a request takes from: PerMinute requests a
// minute, refilled continuously, holding at most Burst (PerMinute when 0:
// a client that was quiet may send a minute's worth at once, no more).
//
// The server defines the buckets (see Server.rateBuckets) and their keys:
//
//	partner\x00<partner id>                  every request of a partner key or any of its client tokens
//	user\x00<partner id>\x00<end user id>    additionally, every request of that end user's tokens
//	authfail\x00<source address>             failed authentications from one source
type Bucket struct {
	Key       string
	PerMinute int
	Burst     int
}

func (b Bucket) burst() int {
	if b.Burst > 0 {
		return b.Burst
	}
	return b.PerMinute
}

// Decision is a RateLimiter's answer to one Take.
type Decision struct {
	// OK: one request was taken from every bucket.
	OK bool
	// RetryAfter, when !OK, is how long until every bucket would allow the
	// request (the longest wait of the buckets that refused).
	RetryAfter time.Duration
	// Refused is the index of the bucket with that longest wait; -1 when OK.
	Refused int
}

// RateLimiter keeps the token buckets of Bucket. The in-memory
// implementation serves one node; a shared one (Redis) makes the buckets
// cluster-wide by implementing the same two calls, atomically per call.
//
// An error means the limiter could not decide (its store is down): the
// server refuses the request with 503 and Retry-After (fails closed), so
// an outage never lifts a partner's limit; NoRateLimit routes (hang-ups)
// never ask. The auth-failure throttle's Wait fails open: an outage must
// not lock every caller out.
type RateLimiter interface {
	// Take takes one request from every bucket, or from none when any of
	// them is empty (so a refusal costs the other buckets nothing).
	Take(ctx context.Context, buckets ...Bucket) (Decision, error)
	// Wait reports how long until b would allow one request (0: now),
	// taking nothing. The server asks it before it authenticates a request
	// from a source that failed to authenticate on this node within the
	// last minute (failedSources); other requests never ask.
	Wait(ctx context.Context, b Bucket) (time.Duration, error)
}

// MemoryRateLimiter is RateLimiter in process memory: a token bucket per key
// (golang.org/x/time/rate). Idle buckets are swept once the map holds more
// than maxKeys entries.
type MemoryRateLimiter struct {
	clock   clock.Clock
	maxKeys int

	mu      sync.Mutex // mu guards buckets
	buckets map[string]*memBucket
}

type memBucket struct {
	lim  *rate.Limiter
	last time.Time
}

// NewMemoryRateLimiter returns an in-memory limiter; clk may be nil (wall
// clock).
func NewMemoryRateLimiter(clk clock.Clock) *MemoryRateLimiter {
	return &MemoryRateLimiter{clock: clock.OrReal(clk), maxKeys: 100_000, buckets: map[string]*memBucket{}}
}

// bucketLocked returns b's limiter, created full, with b's current rate.
func (m *MemoryRateLimiter) bucketLocked(b Bucket, now time.Time) *rate.Limiter {
	mb, ok := m.buckets[b.Key]
	if !ok {
		if len(m.buckets) >= m.maxKeys {
			m.sweep(now)
		}
		mb = &memBucket{lim: rate.NewLimiter(perMinute(b.PerMinute), b.burst())}
		m.buckets[b.Key] = mb
	}
	if mb.lim.Limit() != perMinute(b.PerMinute) {
		mb.lim.SetLimitAt(now, perMinute(b.PerMinute))
	}
	if mb.lim.Burst() != b.burst() {
		mb.lim.SetBurstAt(now, b.burst())
	}
	mb.last = now
	return mb.lim
}

func perMinute(n int) rate.Limit { return rate.Limit(float64(n) / 60) }

// Take implements RateLimiter.
func (m *MemoryRateLimiter) Take(_ context.Context, buckets ...Bucket) (Decision, error) {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	d := Decision{OK: true, Refused: -1}
	rs := make([]*rate.Reservation, len(buckets))
	for i, b := range buckets {
		rs[i] = m.bucketLocked(b, now).ReserveN(now, 1)
		wait := rs[i].DelayFrom(now)
		if !rs[i].OK() {
			wait = time.Minute
		}
		if wait > 0 && wait > d.RetryAfter {
			d = Decision{RetryAfter: wait, Refused: i}
		}
	}
	if d.Refused >= 0 {
		for _, r := range rs {
			r.CancelAt(now)
		}
	}
	return d, nil
}

// Wait implements RateLimiter.
func (m *MemoryRateLimiter) Wait(_ context.Context, b Bucket) (time.Duration, error) {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	lim := m.bucketLocked(b, now)
	tok := lim.TokensAt(now)
	if tok >= 1 {
		return 0, nil
	}
	return time.Duration((1 - tok) / float64(lim.Limit()) * float64(time.Second)), nil
}

// sweep drops buckets idle long enough to have refilled completely: they
// behave exactly like new ones.
func (m *MemoryRateLimiter) sweep(now time.Time) {
	for k, b := range m.buckets {
		refill := time.Duration(float64(b.lim.Burst()) / float64(b.lim.Limit()) * float64(time.Second))
		if now.Sub(b.last) > refill {
			delete(m.buckets, k)
		}
	}
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1: a client
// that waits that long is let through.
func retryAfterSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}
