package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedStore is a Store that several nodes share (RedisStore). It
// schedules deliveries itself — Add and Reschedule set when each is due —
// and an endpoint's sender on a node works only while that node holds the
// endpoint's lease, so each endpoint still has one delivery in flight
// across the cluster, and a dead node's deliveries are taken over when its
// lease lapses.
type SharedStore interface {
	Store
	// Next takes or renews this node's lease on the endpoint's queue and
	// returns its oldest due delivery. Without the lease, or with nothing
	// due, ok is false and wait is how long until the next delivery is due
	// (capped by the poll interval: other nodes add deliveries too).
	Next(partner, url string, now time.Time) (seq uint64, ok bool, wait time.Duration, err error)
	// Release gives up this node's lease on the endpoint (Close), so
	// another node sends its deliveries at once.
	Release(partner, url string) error
}

// redisTimeout bounds one store call.
const redisTimeout = 3 * time.Second

// sharedPoll is how often a sender without the lease, or with nothing
// due, asks again.
const sharedPoll = 500 * time.Millisecond

// dedupTTL is how long an event id is remembered per endpoint.
const dedupTTL = 24 * time.Hour

// RedisStore is the Store in Redis, shared by every node. Keys:
//
//	vera:wh:seq              sequence numbers
//	vera:wh:pending          hash seq → delivery JSON
//	vera:wh:q:<queue>        sorted set of seq by due time (ms), one per partner endpoint
//	vera:wh:lease:<queue>    the node sending to that endpoint now (PX lease)
//	vera:wh:ev:<queue>:<id>  event id → seq, so an event is queued once per endpoint
//	vera:wh:failed           list of failed deliveries, oldest first
//
// <queue> is a digest of partner and URL: a URL's token never appears in
// a key. Durability is Redis's (appendonly yes).
type RedisStore struct {
	rdb   redis.UniversalClient
	owner string // this node's lease value
	lease time.Duration
}

var _ SharedStore = (*RedisStore)(nil)

// NewRedisStore returns the store on rdb for node (a unique value per
// process: a restarted node must not inherit its predecessor's leases).
// lease must exceed webhook_delivery.timeout: one attempt runs under it.
func NewRedisStore(rdb redis.UniversalClient, node string, lease time.Duration) *RedisStore {
	return &RedisStore{rdb: rdb, owner: node, lease: lease}
}

const (
	whSeq     = "vera:wh:seq"
	whPending = "vera:wh:pending"
	whFailed  = "vera:wh:failed"
)

func queueID(partner, url string) string {
	h := sha256.Sum256([]byte(partner + "\x00" + url))
	return hex.EncodeToString(h[:12])
}

func whQueue(q string) string     { return "vera:wh:q:" + q }
func whLease(q string) string     { return "vera:wh:lease:" + q }
func whEvent(q, id string) string { return "vera:wh:ev:" + q + ":" + id }
func ctxStore() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), redisTimeout)
}

// addScript stores deliveries atomically: none when one queue would pass
// max ({-1}); an event already queued for an endpoint keeps its seq.
// KEYS: seq, pending, then queue and event-id key per delivery. ARGV: max,
// dedup seconds, then JSON and due ms per delivery.
var addScript = redis.NewScript(`
local max = tonumber(ARGV[1])
local n = (#KEYS - 2) / 2
local add = {}
for i = 1, n do
  local q, ev = KEYS[1 + 2*i], KEYS[2 + 2*i]
  if redis.call('EXISTS', ev) == 0 then
    add[q] = (add[q] or 0) + 1
    if redis.call('ZCARD', q) + add[q] > max then return {-1} end
  end
end
local out = {}
for i = 1, n do
  local q, ev = KEYS[1 + 2*i], KEYS[2 + 2*i]
  local seq = redis.call('GET', ev)
  if not seq then
    seq = redis.call('INCR', KEYS[1])
    redis.call('HSET', KEYS[2], seq, ARGV[1 + 2*i])
    redis.call('ZADD', q, ARGV[2 + 2*i], seq)
    redis.call('SET', ev, seq, 'EX', ARGV[2])
  end
  out[i] = tonumber(seq)
end
return out
`)

// Add implements Store; an event id already queued for the endpoint is
// not queued again (Seq is the first one's).
func (s *RedisStore) Add(ds []Delivery, maxPending int) error {
	ctx, cancel := ctxStore()
	defer cancel()
	keys := []string{whSeq, whPending}
	args := []any{maxPending, int(dedupTTL.Seconds())}
	for _, d := range ds {
		q := queueID(d.Partner, d.URL)
		v, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("webhook: store: %w", err)
		}
		keys = append(keys, whQueue(q), whEvent(q, d.EventID))
		args = append(args, v, d.NextAt.UnixMilli())
	}
	seqs, err := addScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err != nil {
		return fmt.Errorf("webhook: store: %w", err)
	}
	if len(seqs) == 1 && seqs[0] == -1 {
		return ErrQueueFull
	}
	for i := range ds {
		ds[i].Seq = uint64(seqs[i])
	}
	return nil
}

func decodeDelivery(field, v string) (Delivery, error) {
	var d Delivery
	if err := json.Unmarshal([]byte(v), &d); err != nil {
		return d, fmt.Errorf("webhook: store: delivery %s: %w", field, err)
	}
	d.Seq, _ = strconv.ParseUint(field, 10, 64) // the field is the truth
	return d, nil
}

// Each implements Store (every node's pending deliveries).
func (s *RedisStore) Each(f func(Delivery) error) error {
	ctx, cancel := ctxStore()
	defer cancel()
	all, err := s.rdb.HGetAll(ctx, whPending).Result()
	if err != nil {
		return fmt.Errorf("webhook: store: %w", err)
	}
	for k, v := range all {
		d, err := decodeDelivery(k, v)
		if err != nil {
			return err
		}
		if err := f(d); err != nil {
			return err
		}
	}
	return nil
}

// Get implements Store.
func (s *RedisStore) Get(seq uint64) (Delivery, bool, error) {
	ctx, cancel := ctxStore()
	defer cancel()
	field := strconv.FormatUint(seq, 10)
	v, err := s.rdb.HGet(ctx, whPending, field).Result()
	if errors.Is(err, redis.Nil) {
		return Delivery{}, false, nil
	}
	if err != nil {
		return Delivery{}, false, fmt.Errorf("webhook: store: %w", err)
	}
	d, err := decodeDelivery(field, v)
	return d, err == nil, err
}

// rescheduleScript saves a pending delivery and its new due time, if it is
// still pending. KEYS: pending, queue. ARGV: seq, JSON, due ms.
var rescheduleScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`)

// Reschedule implements Store.
func (s *RedisStore) Reschedule(d Delivery) error {
	ctx, cancel := ctxStore()
	defer cancel()
	v, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("webhook: store: %w", err)
	}
	seq := strconv.FormatUint(d.Seq, 10)
	if err := rescheduleScript.Run(ctx, s.rdb, []string{whPending, whQueue(queueID(d.Partner, d.URL))}, seq, v, d.NextAt.UnixMilli()).Err(); err != nil {
		return fmt.Errorf("webhook: store: %w", err)
	}
	return nil
}

// Done implements Store.
func (s *RedisStore) Done(seq uint64) error {
	d, ok, err := s.Get(seq)
	if err != nil || !ok {
		return err
	}
	ctx, cancel := ctxStore()
	defer cancel()
	pipe := s.rdb.TxPipeline()
	pipe.HDel(ctx, whPending, strconv.FormatUint(seq, 10))
	pipe.ZRem(ctx, whQueue(queueID(d.Partner, d.URL)), strconv.FormatUint(seq, 10))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("webhook: store: %w", err)
	}
	return nil
}

// Fail implements Store.
func (s *RedisStore) Fail(d Delivery, keep int) error {
	ctx, cancel := ctxStore()
	defer cancel()
	v, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("webhook: store: %w", err)
	}
	seq := strconv.FormatUint(d.Seq, 10)
	pipe := s.rdb.TxPipeline()
	pipe.HDel(ctx, whPending, seq)
	pipe.ZRem(ctx, whQueue(queueID(d.Partner, d.URL)), seq)
	if keep > 0 {
		pipe.RPush(ctx, whFailed, v)
		pipe.LTrim(ctx, whFailed, int64(-keep), -1)
	} else {
		pipe.Del(ctx, whFailed)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("webhook: store: %w", err)
	}
	return nil
}

// Failed implements Store.
func (s *RedisStore) Failed() ([]Delivery, error) {
	ctx, cancel := ctxStore()
	defer cancel()
	vs, err := s.rdb.LRange(ctx, whFailed, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("webhook: store: %w", err)
	}
	out := make([]Delivery, 0, len(vs))
	for _, v := range vs {
		var d Delivery
		if err := json.Unmarshal([]byte(v), &d); err != nil {
			return nil, fmt.Errorf("webhook: store: failed delivery: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// Pending implements Store.
func (s *RedisStore) Pending() (int, error) {
	ctx, cancel := ctxStore()
	defer cancel()
	n, err := s.rdb.HLen(ctx, whPending).Result()
	if err != nil {
		return 0, fmt.Errorf("webhook: store: %w", err)
	}
	return int(n), nil
}

// nextScript takes or renews the lease (PX) and returns the oldest due
// delivery among the first 64 due, or the next due time. KEYS: lease,
// queue. ARGV: owner, lease ms, now ms. Returns {0} without the lease,
// {1, seq} for a due delivery, {2, due ms} when none is due yet, {3} when
// the queue is empty.
var nextScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return {0} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[3], 'LIMIT', 0, 64)
if #due > 0 then
  local best = tonumber(due[1])
  for i = 2, #due do local s = tonumber(due[i]) if s < best then best = s end end
  return {1, best}
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #first == 0 then return {3} end
return {2, tonumber(first[2])}
`)

// Next implements SharedStore.
func (s *RedisStore) Next(partner, url string, now time.Time) (uint64, bool, time.Duration, error) {
	ctx, cancel := ctxStore()
	defer cancel()
	q := queueID(partner, url)
	r, err := nextScript.Run(ctx, s.rdb, []string{whLease(q), whQueue(q)}, s.owner, s.lease.Milliseconds(), now.UnixMilli()).Int64Slice()
	if err != nil {
		return 0, false, sharedPoll, fmt.Errorf("webhook: store: %w", err)
	}
	switch r[0] {
	case 1:
		return uint64(r[1]), true, 0, nil
	case 2:
		return 0, false, max(min(time.UnixMilli(r[1]).Sub(now), sharedPoll), time.Millisecond), nil
	}
	return 0, false, sharedPoll, nil
}

// releaseScript deletes the lease if this node holds it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`)

// Release implements SharedStore.
func (s *RedisStore) Release(partner, url string) error {
	ctx, cancel := ctxStore()
	defer cancel()
	return releaseScript.Run(ctx, s.rdb, []string{whLease(queueID(partner, url))}, s.owner).Err()
}
