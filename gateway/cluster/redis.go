package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis timeouts: a lost Redis fails a call in about a second instead of
// hanging a request, so the node reports itself unready quickly.
const (
	redisDialTimeout = 2 * time.Second
	redisIOTimeout   = time.Second
)

// ErrRedisUnreachable: the node could not reach Redis at start.
var ErrRedisUnreachable = errors.New("cluster: Redis is unreachable")

// dialRedis parses cfg.RedisURL, applies the password and timeouts, and
// checks that Redis answers, so a wrong URL stops start-up with a clear
// message.
func dialRedis(ctx context.Context, cfg Config, hook redis.Hook) (*redis.Client, error) {
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("cluster.redis_url: %w", err)
	}
	if cfg.RedisPassword != "" {
		opts.Password = cfg.RedisPassword
	}
	opts.DialTimeout = redisDialTimeout
	opts.ReadTimeout, opts.WriteTimeout = redisIOTimeout, redisIOTimeout
	opts.PoolTimeout = redisIOTimeout
	opts.MaxRetries = 1
	opts.ClientName = "vera-gateway-" + cfg.NodeID
	opts.DisableIdentity = true // Redis 7.0 (Debian 12) has no CLIENT SETINFO
	c := redis.NewClient(opts)
	if hook != nil {
		c.AddHook(hook)
	}
	pctx, cancel := context.WithTimeout(ctx, redisDialTimeout+redisIOTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%w at %s: %w", ErrRedisUnreachable, redactURL(cfg.RedisURL), err)
	}
	return c, nil
}

// redisHook measures every Redis round trip (a command or a pipeline) for
// vera_cluster_redis_* and counts them for the benchmarks.
type redisHook struct {
	m     *metrics
	trips atomic.Int64
}

var _ redis.Hook = (*redisHook)(nil)

func (h *redisHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			h.m.redisErrors.WithLabelValues("dial").Inc()
		}
		return c, err
	}
}

func (h *redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.done(cmd.Name(), start, err)
		return err
	}
}

func (h *redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.done("pipeline", start, err)
		return err
	}
}

func (h *redisHook) done(op string, start time.Time, err error) {
	h.trips.Add(1)
	h.m.redisLatency.Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, redis.Nil) && !isScriptMiss(err) {
		h.m.redisErrors.WithLabelValues(op).Inc()
	}
}

// isScriptMiss is NOSCRIPT, which go-redis's Script.Run answers by
// loading the script: not a fault.
func isScriptMiss(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && len(re.Error()) >= 8 && re.Error()[:8] == "NOSCRIPT"
}
