package pairing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTimeout bounds one store call.
const redisTimeout = 3 * time.Second

// RedisStore is the Store in Redis, shared by every node of a cluster, so
// a paired device refreshes through whichever node it reaches:
// vera:pair:<id> holds the pairing's JSON, vera:pair:user:<partner>\0<end
// user> its ids, and vera:pair:refreshed orders ids by last refresh for
// Sweep. (Codes still live in the memory of the node that issued them.)
type RedisStore struct{ rdb redis.UniversalClient }

var _ Store = (*RedisStore)(nil)

// NewRedisStore returns the store on rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

const pairRefreshed = "vera:pair:refreshed"

func pairKey(id string) string { return "vera:pair:" + id }
func pairUserKey(partner, endUser string) string {
	return "vera:pair:user:" + partner + "\x00" + endUser
}

func redisCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), redisTimeout)
}

// Get implements Store.
func (s *RedisStore) Get(id string) (Pairing, bool, error) {
	ctx, cancel := redisCtx()
	defer cancel()
	v, err := s.rdb.Get(ctx, pairKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Pairing{}, false, nil
	}
	if err != nil {
		return Pairing{}, false, fmt.Errorf("pairing: store: %w", err)
	}
	var p Pairing
	if err := json.Unmarshal(v, &p); err != nil {
		return Pairing{}, false, fmt.Errorf("pairing: store: %w", err)
	}
	return p, true, nil
}

// Put implements Store.
func (s *RedisStore) Put(p Pairing) error {
	v, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("pairing: store: %w", err)
	}
	ctx, cancel := redisCtx()
	defer cancel()
	pipe := s.rdb.TxPipeline()
	pipe.Set(ctx, pairKey(p.ID), v, 0)
	pipe.SAdd(ctx, pairUserKey(p.Partner, p.EndUser), p.ID)
	pipe.ZAdd(ctx, pairRefreshed, redis.Z{Score: float64(p.Refreshed.UnixMilli()), Member: p.ID})
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("pairing: store: %w", err)
	}
	return nil
}

// Delete implements Store.
func (s *RedisStore) Delete(id string) error {
	p, ok, err := s.Get(id)
	if err != nil || !ok {
		return err
	}
	ctx, cancel := redisCtx()
	defer cancel()
	pipe := s.rdb.TxPipeline()
	pipe.Del(ctx, pairKey(id))
	pipe.SRem(ctx, pairUserKey(p.Partner, p.EndUser), id)
	pipe.ZRem(ctx, pairRefreshed, id)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("pairing: store: %w", err)
	}
	return nil
}

// ByEndUser implements Store.
func (s *RedisStore) ByEndUser(partner, endUser string) ([]Pairing, error) {
	ctx, cancel := redisCtx()
	defer cancel()
	ids, err := s.rdb.SMembers(ctx, pairUserKey(partner, endUser)).Result()
	if err != nil {
		return nil, fmt.Errorf("pairing: store: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = pairKey(id)
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("pairing: store: %w", err)
	}
	var out []Pairing
	for _, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue // deleted between the two reads
		}
		var p Pairing
		if err := json.Unmarshal([]byte(str), &p); err != nil {
			return nil, fmt.Errorf("pairing: store: %w", err)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Sweep implements Store.
func (s *RedisStore) Sweep(before time.Time) (int, error) {
	ctx, cancel := redisCtx()
	defer cancel()
	ids, err := s.rdb.ZRangeByScore(ctx, pairRefreshed, &redis.ZRangeBy{Min: "-inf", Max: "(" + strconv.FormatInt(before.UnixMilli(), 10)}).Result()
	if err != nil {
		return 0, fmt.Errorf("pairing: store: %w", err)
	}
	n := 0
	for _, id := range ids {
		if err := s.Delete(id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
