package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTimeout bounds one store call.
const redisTimeout = 5 * time.Second

// RedisStore is the Store in Redis, shared by every node of a cluster, so
// GET /v1/audit/decisions answers the same wherever it lands. Per partner:
//
//	vera:audit:<partner>:seq   record ids (never reused, so cursors stay valid)
//	vera:audit:<partner>       hash id → record JSON
//	vera:audit:<partner>:ids   sorted set of ids (paging)
//	vera:audit:<partner>:at    sorted set of ids by decision time (retention)
//	vera:audit:partners        set of partners with records (Prune)
//
// Append stores and trims in one script. Durability is Redis's
// (appendonly yes).
type RedisStore struct {
	rdb redis.UniversalClient
}

var _ Store = (*RedisStore)(nil)

// NewRedisStore returns the store on rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

const auditPartners = "vera:audit:partners"

func auditKeys(partner string) []string {
	base := "vera:audit:" + partner
	return []string{base + ":seq", base, base + ":ids", base + ":at", auditPartners}
}

// trimLua drops records before the cutoff (ms) and, when max > 0, the
// oldest beyond max; it defines trim(KEYS, cutoff, max) → dropped.
const trimLua = `
local function drop(k, id)
  redis.call('HDEL', k[2], id) redis.call('ZREM', k[3], id) redis.call('ZREM', k[4], id)
end
local function trim(k, cutoff, max)
  local n = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', k[4], '-inf', '(' .. cutoff)) do drop(k, id) n = n + 1 end
  if max > 0 then
    local over = redis.call('ZCARD', k[3]) - max
    if over > 0 then
      for _, id in ipairs(redis.call('ZRANGE', k[3], 0, over - 1)) do drop(k, id) n = n + 1 end
    end
  end
  return n
end
`

// appendScript stores one record under the next id and trims. KEYS:
// auditKeys. ARGV: partner, JSON after its id, at ms, cutoff ms, max.
var appendScript = redis.NewScript(trimLua + `
local id = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], id, '{"id":"' .. id .. '"' .. ARGV[2])
redis.call('ZADD', KEYS[3], id, id)
redis.call('ZADD', KEYS[4], ARGV[3], id)
redis.call('SADD', KEYS[5], ARGV[1])
trim(KEYS, ARGV[4], tonumber(ARGV[5]))
return id
`)

// pruneScript trims one partner by age. KEYS: auditKeys. ARGV: cutoff ms.
var pruneScript = redis.NewScript(trimLua + `return trim(KEYS, ARGV[1], 0)`)

// jsonIDPrefix is how every marshalled Record starts (ID is its first
// field, without omitempty); the script writes the id in its place.
const jsonIDPrefix = `{"id":""`

// Append implements Store.
func (s *RedisStore) Append(partner string, r Record, cutoff time.Time, maxRecords int) (Record, error) {
	if partner == "" {
		return Record{}, fmt.Errorf("%w: partner is required", ErrInvalid)
	}
	r.ID = ""
	b, err := json.Marshal(r)
	if err != nil || len(b) < len(jsonIDPrefix) || string(b[:len(jsonIDPrefix)]) != jsonIDPrefix {
		return Record{}, fmt.Errorf("%w: append: record does not encode with its id first", ErrStore)
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	id, err := appendScript.Run(ctx, s.rdb, auditKeys(partner), partner, b[len(jsonIDPrefix):],
		r.At.UnixMilli(), cutoff.UnixMilli(), maxRecords).Int64()
	if err != nil {
		return Record{}, fmt.Errorf("%w: append: %w", ErrStore, err)
	}
	r.ID = formatID(uint64(id))
	return r, nil
}

// listBatch is how many ids List reads per round trip while filtering.
const listBatch = 256

// List implements Store.
func (s *RedisStore) List(partner string, q Query) ([]Record, bool, error) {
	if q.After == ^uint64(0) {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	k := auditKeys(partner)
	var out []Record
	after := q.After
	for {
		ids, err := s.rdb.ZRangeByScore(ctx, k[2], &redis.ZRangeBy{Min: "(" + strconv.FormatUint(after, 10), Max: "+inf", Count: listBatch}).Result()
		if err != nil {
			return nil, false, fmt.Errorf("%w: list: %w", ErrStore, err)
		}
		if len(ids) == 0 {
			return out, false, nil
		}
		vals, err := s.rdb.HMGet(ctx, k[1], ids...).Result()
		if err != nil {
			return nil, false, fmt.Errorf("%w: list: %w", ErrStore, err)
		}
		for i, v := range vals {
			str, ok := v.(string)
			if !ok {
				continue // dropped between the two reads
			}
			var r Record
			if err := json.Unmarshal([]byte(str), &r); err != nil {
				return nil, false, fmt.Errorf("%w: list: record %s: %w", ErrStore, ids[i], err)
			}
			if (q.SessionID != "" && r.SessionID != q.SessionID) || (q.ActionID != "" && r.ActionID != q.ActionID) {
				continue
			}
			if len(out) == q.Limit {
				return out, true, nil
			}
			out = append(out, r)
		}
		last, err := strconv.ParseUint(ids[len(ids)-1], 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%w: list: id %q", ErrStore, ids[len(ids)-1])
		}
		after = last
	}
}

// Prune implements Store.
func (s *RedisStore) Prune(cutoff time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	partners, err := s.rdb.SMembers(ctx, auditPartners).Result()
	if err != nil {
		return 0, fmt.Errorf("%w: prune: %w", ErrStore, err)
	}
	n := 0
	var errs []error
	for _, p := range partners {
		d, err := pruneScript.Run(ctx, s.rdb, auditKeys(p), cutoff.UnixMilli()).Int()
		n += d
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("%w: prune: %w", ErrStore, err)
	}
	return n, nil
}
