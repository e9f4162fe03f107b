package cluster

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/veraneural/vera-gateway/gateway"
)

// claimTTL is how long a claimed key stays in flight without a response:
// a node that died mid-request frees it after this, so the client's retry
// runs instead of waiting a day.
const claimTTL = 2 * time.Minute

// IdempotencyStore is gateway.IdempotencyStore on Redis: a key claimed on
// one node is in flight (409) on every other, and its stored response
// replays byte for byte from any node for the TTL (24 h). Each partner
// keeps at most maxPerPartner keys, its oldest dropped first, never
// another partner's. A record is vera:idem:<partner>\0<scope>\0<key>, a
// hash of the body digest, the claim and the response; vera:idem:<partner>
// orders a partner's keys by age.
type IdempotencyStore struct {
	rdb           redis.UniversalClient
	ttl           time.Duration
	maxPerPartner int

	mu     sync.Mutex // mu guards claims
	claims map[gateway.IdempotencyKey]string
}

var _ gateway.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the store on rdb (idempotency.ttl_seconds,
// idempotency.max_entries).
func NewIdempotencyStore(rdb redis.UniversalClient, ttl time.Duration, maxPerPartner int) *IdempotencyStore {
	return &IdempotencyStore{rdb: rdb, ttl: ttl, maxPerPartner: maxPerPartner, claims: map[gateway.IdempotencyKey]string{}}
}

func idemKey(k gateway.IdempotencyKey) string {
	return keyPrefix + "idem:" + k.Partner + "\x00" + k.Scope + "\x00" + k.Key
}
func idemIndex(partner string) string { return keyPrefix + "idem:" + partner }

// beginScript: KEYS record, partner index. ARGV digest, claim, claim ms,
// ttl ms, max. Returns {0} claimed, {1} other body, {2} in flight, {3,
// response}.
var beginScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'sum', 'resp')
if v[1] then
  if v[1] ~= ARGV[1] then return {1} end
  if not v[2] then return {2} end
  return {3, v[2]}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'sum', ARGV[1], 'claim', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[4]))
redis.call('ZADD', KEYS[2], now, KEYS[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5])
if over > 0 then
  for _, k in ipairs(redis.call('ZPOPMIN', KEYS[2], over)) do
    if k ~= KEYS[1] and string.sub(k, 1, 5) == 'vera:' then redis.call('DEL', k) end
  end
end
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {0}
`)

// completeScript stores the response if this claim still holds the key.
// KEYS record. ARGV claim, response, ttl ms.
var completeScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'resp', ARGV[2])
redis.call('HDEL', KEYS[1], 'claim')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// releaseClaimScript forgets the key if this claim still holds it.
var releaseClaimScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'claim') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`)

// storedJSON is a StoredResponse in Redis (Body as base64: replayed byte
// for byte).
type storedJSON struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// Begin implements gateway.IdempotencyStore.
func (s *IdempotencyStore) Begin(ctx context.Context, k gateway.IdempotencyKey, sum [32]byte) (*gateway.StoredResponse, error) {
	var b [12]byte
	_, _ = cryptorand.Read(b[:])
	claim := hex.EncodeToString(b[:])
	r, err := beginScript.Run(ctx, s.rdb, []string{idemKey(k), idemIndex(k.Partner)},
		hex.EncodeToString(sum[:]), claim, claimTTL.Milliseconds(), s.ttl.Milliseconds(), s.maxPerPartner).Slice()
	if err != nil {
		return nil, fmt.Errorf("cluster: idempotency: %w", err)
	}
	switch code, _ := r[0].(int64); code {
	case 1:
		return nil, gateway.ErrIdempotencyMismatch
	case 2:
		return nil, gateway.ErrIdempotencyInFlight
	case 3:
		raw, _ := r[1].(string)
		var sj storedJSON
		if err := json.Unmarshal([]byte(raw), &sj); err != nil {
			return nil, fmt.Errorf("cluster: idempotency: stored response: %w", err)
		}
		return &gateway.StoredResponse{Status: sj.Status, Header: sj.Header, Body: sj.Body}, nil
	}
	s.mu.Lock()
	s.claims[k] = claim
	s.mu.Unlock()
	return nil, nil
}

func (s *IdempotencyStore) takeClaim(k gateway.IdempotencyKey) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.claims[k]
	delete(s.claims, k)
	return c, ok
}

// Complete implements gateway.IdempotencyStore.
func (s *IdempotencyStore) Complete(ctx context.Context, k gateway.IdempotencyKey, resp gateway.StoredResponse) error {
	claim, ok := s.takeClaim(k)
	if !ok {
		return nil
	}
	b, err := json.Marshal(storedJSON{Status: resp.Status, Header: resp.Header, Body: resp.Body})
	if err != nil {
		return err
	}
	if err := completeScript.Run(ctx, s.rdb, []string{idemKey(k)}, claim, b, s.ttl.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("cluster: idempotency: %w", err)
	}
	return nil
}

// Release implements gateway.IdempotencyStore.
func (s *IdempotencyStore) Release(ctx context.Context, k gateway.IdempotencyKey) error {
	claim, ok := s.takeClaim(k)
	if !ok {
		return nil
	}
	if err := releaseClaimScript.Run(ctx, s.rdb, []string{idemKey(k)}, claim).Err(); err != nil {
		return fmt.Errorf("cluster: idempotency: %w", err)
	}
	return nil
}
