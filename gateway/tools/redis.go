package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTimeout bounds one store call.
const redisTimeout = 3 * time.Second

// RedisStore is the Store in Redis, shared by every node of a cluster: a
// partner's tools are the same wherever its request lands. Per partner,
// vera:tools:<partner> holds name → tool JSON and
// vera:tools:<partner>:created name → the first CreatedAt, so a replace
// keeps it without rewriting JSON inside Redis.
type RedisStore struct {
	rdb redis.UniversalClient
}

var _ Store = (*RedisStore)(nil)

// NewRedisStore returns the store on rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

func toolsKey(partner string) string   { return "vera:tools:" + partner }
func createdKey(partner string) string { return "vera:tools:" + partner + ":created" }

// putScript creates or replaces a tool within the partner's maximum.
// KEYS: tools, created. ARGV: name, JSON, max, created. Returns {-1} at
// the maximum, else {1 if new else 0, the first created}.
var putScript = redis.NewScript(`
local exists = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if not exists and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return {-1} end
if not exists then redis.call('HSET', KEYS[2], ARGV[1], ARGV[4]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local created = redis.call('HGET', KEYS[2], ARGV[1]) or ARGV[4]
if exists then return {0, created} end
return {1, created}
`)

// Put implements Store.
func (s *RedisStore) Put(partner string, t Tool, max int) (Tool, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	v, err := json.Marshal(t)
	if err != nil {
		return Tool{}, false, err
	}
	r, err := putScript.Run(ctx, s.rdb, []string{toolsKey(partner), createdKey(partner)},
		t.Name, v, max, t.CreatedAt.Format(time.RFC3339Nano)).Slice()
	if err != nil {
		return Tool{}, false, fmt.Errorf("tools: store: %w", err)
	}
	if n, _ := r[0].(int64); n == -1 {
		return Tool{}, false, ErrLimit
	}
	created, _ := r[1].(string)
	if at, err := time.Parse(time.RFC3339Nano, created); err == nil {
		t.CreatedAt = at
	}
	n, _ := r[0].(int64)
	return t, n == 1, nil
}

// decode reads a stored tool with its first CreatedAt.
func decode(v, created string) (Tool, error) {
	var t Tool
	if err := json.Unmarshal([]byte(v), &t); err != nil {
		return t, fmt.Errorf("tools: store: %w", err)
	}
	if at, err := time.Parse(time.RFC3339Nano, created); err == nil {
		t.CreatedAt = at
	}
	return t, nil
}

// Get implements Store.
func (s *RedisStore) Get(partner, name string) (Tool, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	v := pipe.HGet(ctx, toolsKey(partner), name)
	c := pipe.HGet(ctx, createdKey(partner), name)
	_, err := pipe.Exec(ctx)
	if errors.Is(v.Err(), redis.Nil) {
		return Tool{}, false, nil
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return Tool{}, false, fmt.Errorf("tools: store: %w", err)
	}
	t, err := decode(v.Val(), c.Val())
	return t, err == nil, err
}

// Delete implements Store.
func (s *RedisStore) Delete(partner, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	pipe := s.rdb.TxPipeline()
	n := pipe.HDel(ctx, toolsKey(partner), name)
	pipe.HDel(ctx, createdKey(partner), name)
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("tools: store: %w", err)
	}
	return n.Val() == 1, nil
}

// List implements Store.
func (s *RedisStore) List(partner string) ([]Tool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	all := pipe.HGetAll(ctx, toolsKey(partner))
	created := pipe.HGetAll(ctx, createdKey(partner))
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("tools: store: %w", err)
	}
	out := make([]Tool, 0, len(all.Val()))
	for name, v := range all.Val() {
		t, err := decode(v, created.Val()[name])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sortTools(out)
	return out, nil
}
