package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/veraneural/vera-gateway/gateway"
)

// RateLimiter is gateway.RateLimiter on Redis: the buckets the gateway
// defines (a partner key with all its client tokens, each end user, each
// failing source) are the cluster's, so 60 requests a minute per key means
// 60 across every node. Each bucket is GCRA — a token bucket kept as one
// theoretical arrival time — and one script takes from every bucket of a
// request or from none, on Redis's clock (TIME), so nodes' clocks never
// matter and Retry-After is exact to the microsecond before rounding up.
type RateLimiter struct {
	rdb redis.UniversalClient
}

var _ gateway.RateLimiter = (*RateLimiter)(nil)

// NewRateLimiter returns the limiter on rdb.
func NewRateLimiter(rdb redis.UniversalClient) *RateLimiter { return &RateLimiter{rdb: rdb} }

// gcraScript: KEYS are the buckets; ARGV[1] is 1 to take, 0 to peek, then
// per bucket its emission interval and burst. It returns {index of the
// bucket that refuses longest (-1: none), its wait in µs}; only when none
// refuses and ARGV[1] is 1 does it take (set every bucket's new arrival
// time, expiring once the bucket is full again).
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local news, worst, widx = {}, 0, -1
for i = 1, #KEYS do
  local T, burst = tonumber(ARGV[2*i]), tonumber(ARGV[2*i + 1])
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
  if tat < now then tat = now end
  local nt = tat + T
  local over = nt - now - T * burst
  if over > worst then worst, widx = over, i - 1 end
  news[i] = nt
end
if widx >= 0 or ARGV[1] ~= '1' then return {widx, math.ceil(worst)} end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%.0f', news[i]), 'PX', math.ceil((news[i] - now) / 1000) + 1000)
end
return {-1, 0}
`)

func rateKey(b gateway.Bucket) string { return keyPrefix + "rl:" + b.Key }

func (l *RateLimiter) run(ctx context.Context, take bool, bs []gateway.Bucket) (int, time.Duration, error) {
	keys := make([]string, len(bs))
	args := make([]any, 1, 1+2*len(bs))
	args[0] = 0
	if take {
		args[0] = 1
	}
	for i, b := range bs {
		if b.PerMinute < 1 {
			return 0, 0, fmt.Errorf("cluster: rate bucket %q: PerMinute must be positive", b.Key)
		}
		burst := b.Burst
		if burst <= 0 {
			burst = b.PerMinute
		}
		keys[i] = rateKey(b)
		args = append(args, int64(time.Minute/time.Microsecond)/int64(b.PerMinute), burst)
	}
	r, err := gcraScript.Run(ctx, l.rdb, keys, args...).Int64Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("cluster: rate limit: %w", err)
	}
	return int(r[0]), time.Duration(r[1]) * time.Microsecond, nil
}

// Take implements gateway.RateLimiter.
func (l *RateLimiter) Take(ctx context.Context, buckets ...gateway.Bucket) (gateway.Decision, error) {
	if len(buckets) == 0 {
		return gateway.Decision{OK: true, Refused: -1}, nil
	}
	idx, wait, err := l.run(ctx, true, buckets)
	if err != nil {
		return gateway.Decision{}, err
	}
	if idx < 0 {
		return gateway.Decision{OK: true, Refused: -1}, nil
	}
	return gateway.Decision{RetryAfter: wait, Refused: idx}, nil
}

// Wait implements gateway.RateLimiter.
func (l *RateLimiter) Wait(ctx context.Context, b gateway.Bucket) (time.Duration, error) {
	_, wait, err := l.run(ctx, false, []gateway.Bucket{b})
	return wait, err
}
