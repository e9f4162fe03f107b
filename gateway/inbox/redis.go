package inbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTimeout bounds one store call (the Store interface takes no
// context; the client's own timeouts apply inside it).
const redisTimeout = 3 * time.Second

// RedisStore is the Store in Redis, for a cluster (config key cluster).
// Each node keeps its own queue — messages reach a session only on the
// node that owns it, and POSTs are forwarded there — in one hash
// vera:inbox:<node> (seq → JSON message), with sequence numbers from
// vera:inbox:seq. A restarted node with the same node_id finds its
// messages again and holds them for admission, as a restarted single node
// does. The hash expires HoldFor after its last write, so a node that
// never comes back leaves nothing behind. Durability is Redis's: with
// appendonly yes, a stored message survives a Redis restart.
type RedisStore struct {
	rdb     redis.UniversalClient
	key     string
	holdFor time.Duration
}

// NewRedisStore returns node's store on rdb; holdFor is inbox.hold_for.
func NewRedisStore(rdb redis.UniversalClient, node string, holdFor time.Duration) *RedisStore {
	return &RedisStore{rdb: rdb, key: "vera:inbox:" + node, holdFor: holdFor}
}

const redisSeqKey = "vera:inbox:seq"

// Add implements Store.
func (s *RedisStore) Add(m Message) (Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	seq, err := s.rdb.Incr(ctx, redisSeqKey).Uint64()
	if err != nil {
		return Message{}, fmt.Errorf("inbox: store: %w", err)
	}
	m.Seq = seq
	v, err := json.Marshal(m)
	if err != nil {
		return Message{}, fmt.Errorf("inbox: store: %w", err)
	}
	pipe := s.rdb.TxPipeline()
	pipe.HSet(ctx, s.key, strconv.FormatUint(seq, 10), v)
	pipe.PExpire(ctx, s.key, s.holdFor)
	if _, err := pipe.Exec(ctx); err != nil {
		return Message{}, fmt.Errorf("inbox: store: %w", err)
	}
	return m, nil
}

// Remove implements Store.
func (s *RedisStore) Remove(seq uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	if err := s.rdb.HDel(ctx, s.key, strconv.FormatUint(seq, 10)).Err(); err != nil {
		return fmt.Errorf("inbox: store: %w", err)
	}
	return nil
}

// List implements Store.
func (s *RedisStore) List() ([]Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	all, err := s.rdb.HGetAll(ctx, s.key).Result()
	if err != nil {
		return nil, fmt.Errorf("inbox: store: %w", err)
	}
	out := make([]Message, 0, len(all))
	for k, v := range all {
		var m Message
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return nil, fmt.Errorf("inbox: store: message %s: %w", k, err)
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Message) int { return cmpSeq(a.Seq, b.Seq) })
	return out, nil
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
