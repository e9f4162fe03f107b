package cluster

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Options are the cluster's collaborators.
type Options struct {
	Logger *slog.Logger
	// Registerer receives vera_cluster_*; nil registers nothing.
	Registerer prometheus.Registerer
	// Clock paces heartbeats and stamps records; nil is the wall clock.
	// (Redis's TTLs run on Redis's own clock.)
	Clock clock.Clock
	// Version is this build, recorded in the node record and every
	// directory entry; empty is BuildVersion().
	Version string
}

// Cluster is this node's membership: its record and directory entries in
// Redis, refreshed every heartbeat, the signed forwards to other nodes,
// and the Redis client the shared stores use. A nil *Cluster is one node
// alone: every method is then a no-op or passes through.
type Cluster struct {
	cfg       Config
	rdb       *redis.Client
	log       *slog.Logger
	clock     clock.Clock
	met       *metrics
	hook      *redisHook
	instance  string // this process, so a restarted node does not mistake its old record for a rival's
	version   string
	advertise string
	forwarder *http.Client
	inner     *mux.Router  // the routes forwarded calls reach
	chat      http.Handler // the websocket route relayed chats reach
	replays   *replayCache

	stop chan struct{}
	wg   sync.WaitGroup

	// counts carries safety counts to Redis (SafetyCounters); forgets
	// entries to delete (forgetLoop).
	counts  chan safetyCount
	forgets chan []string
	// shares are the fair shares this node counts in Redis (Shares);
	// puts carries their releases there (putLoop).
	shares *gateway.Shares
	puts   chan sharePut
	// shareDirty: a count may not have reached Redis; the next heartbeat
	// rewrites them all.
	shareDirty atomic.Bool

	// mu guards the fields below (and counts' creation).
	mu       sync.Mutex
	local    map[string]Entry // this node's refreshed entries, by key
	lastBeat time.Time
	healthy  bool
	draining bool
	closed   bool
}

// New connects to Redis (failing start-up with a clear message when it
// does not answer), claims cfg.NodeID and starts the heartbeat.
func New(ctx context.Context, cfg Config, opts Options) (*Cluster, error) {
	if !cfg.Enabled() {
		return nil, errors.New("cluster: no cluster section")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, log: opts.Logger, clock: clock.OrReal(opts.Clock), version: opts.Version,
		advertise: strings.TrimRight(cfg.AdvertiseURL, "/"), inner: mux.NewRouter(), replays: newReplayCache(),
		local: map[string]Entry{}, stop: make(chan struct{}), forgets: make(chan []string, forgetQueue)}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.inner.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no forwardable route for %s %s", r.Method, r.URL.Path))
	})
	if c.version == "" {
		c.version = BuildVersion()
	}
	var b [16]byte
	_, _ = cryptorand.Read(b[:])
	c.instance = hex.EncodeToString(b[:])
	met, err := newMetrics(opts.Registerer, c.heartbeatAge)
	if err != nil {
		return nil, fmt.Errorf("cluster: metrics: %w", err)
	}
	c.met = met
	c.hook = &redisHook{m: met}
	if c.rdb, err = dialRedis(ctx, cfg, c.hook); err != nil {
		return nil, err
	}
	if err := c.claim(ctx); err != nil {
		_ = c.rdb.Close()
		return nil, err
	}
	c.forwarder = newForwardClient()
	c.lastBeat, c.healthy = c.clock.Now(), true
	c.met.ready.Set(1)
	c.wg.Add(2)
	go c.beatLoop()
	go c.forgetLoop()
	c.log.Info("cluster: joined", "node", cfg.NodeID, "advertise", c.advertise, "public", cfg.Public(),
		"version", c.version, "protocol", Protocol, "heartbeat", cfg.Heartbeat())
	return c, nil
}

// forgetQueue bounds the entry deletions waiting for Redis.
const forgetQueue = 4096

// Redis is the client the shared stores use.
func (c *Cluster) Redis() *redis.Client { return c.rdb }

// NodeID is this node's id.
func (c *Cluster) NodeID() string { return c.cfg.NodeID }

// RoundTrips counts Redis round trips so far (benchmarks).
func (c *Cluster) RoundTrips() int64 { return c.hook.trips.Load() }

// Ready is nil while the node reaches Redis and is not draining; else why
// it takes no new sessions.
func (c *Cluster) Ready() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.draining:
		return errDraining
	case !c.healthy:
		return errRedisLost
	}
	return nil
}

var (
	errDraining  = errors.New("draining")
	errRedisLost = errors.New("redis unavailable")
)

func (c *Cluster) heartbeatAge() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clock.Since(c.lastBeat).Seconds()
}

// beatLoop refreshes the node record and entries every heartbeat.
func (c *Cluster) beatLoop() {
	defer c.wg.Done()
	t, ch := c.clock.NewTicker(c.cfg.Heartbeat())
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ch:
			c.beat()
		}
	}
}

// beat is one heartbeat: the node record, every local entry, this node's
// fair-share counts and the node count, in one pipeline (one round trip).
func (c *Cluster) beat() {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Heartbeat())
	defer cancel()
	c.mu.Lock()
	state := stateReady
	if c.draining {
		state = stateDraining
	}
	entries := make([]Entry, 0, len(c.local))
	for _, e := range c.local {
		entries = append(entries, e)
	}
	c.mu.Unlock()
	now := c.clock.Now()
	pipe := c.rdb.Pipeline()
	claimed := claimScript.Eval(ctx, pipe, []string{nodeKey(c.cfg.NodeID), nodesKey}, c.claimArgs(state)...)
	for _, e := range entries {
		e.ExpiresMS = now.Add(c.ttl()).UnixMilli()
		_ = c.put(ctx, pipe, e)
	}
	sharesDone := c.syncShares(ctx, pipe)
	pipe.ZRemRangeByScore(ctx, nodesKey, "-inf", fmt.Sprint(now.Add(-10*c.ttl()).UnixMilli()))
	count := pipe.ZCount(ctx, nodesKey, fmt.Sprint(now.Add(-c.ttl()).UnixMilli()), "+inf")
	_, err := pipe.Exec(ctx)
	sharesDone(err)
	if err == nil {
		if n, _ := claimed.Int(); n == 0 {
			err = fmt.Errorf("%w: another process claimed %q while this one could not beat", ErrNodeIDTaken, c.cfg.NodeID)
		}
	}
	c.mu.Lock()
	was := c.healthy
	c.healthy = err == nil
	if err == nil {
		c.lastBeat = now
	}
	c.mu.Unlock()
	switch {
	case err != nil && was:
		c.log.Error("cluster: heartbeat failed: not ready, new sessions refused until Redis answers", "err", err)
	case err == nil && !was:
		c.log.Info("cluster: heartbeat restored: ready", "entries", len(entries))
	}
	if err == nil {
		c.met.nodes.Set(float64(count.Val()))
		c.met.ready.Set(boolGauge(c.Ready() == nil))
	} else {
		c.met.ready.Set(0)
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// StartDrain marks the node draining in Redis: it takes no new sessions
// while its live ones finish (their entries stay until they end).
func (c *Cluster) StartDrain(ctx context.Context) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.draining = true
	c.mu.Unlock()
	c.met.ready.Set(0)
	ctx, cancel := context.WithTimeout(ctx, redisDialTimeout)
	defer cancel()
	if err := claimScript.Run(ctx, c.rdb, []string{nodeKey(c.cfg.NodeID), nodesKey}, c.claimArgs(stateDraining)...).Err(); err != nil {
		c.log.Warn("cluster: could not mark the node draining", "err", err)
	}
}

// Close stops the heartbeat, removes this node's entries and record, and
// closes the Redis client. Call it after every store that uses Redis is
// closed. A nil Cluster is closed.
func (c *Cluster) Close(ctx context.Context) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	keys := make([]string, 0, len(c.local))
	for k := range c.local {
		keys = append(keys, k)
	}
	c.local = map[string]Entry{}
	c.mu.Unlock()
	close(c.stop)
	c.wg.Wait()
	for len(c.forgets) > 0 {
		keys = append(keys, <-c.forgets...)
	}
	ctx, cancel := context.WithTimeout(ctx, redisDialTimeout)
	defer cancel()
	c.forget(ctx, keys...)
	err := errors.Join(c.release(ctx), c.rdb.Del(ctx, shareKey(c.cfg.NodeID, c.instance)).Err())
	c.forwarder.CloseIdleConnections()
	return errors.Join(err, c.rdb.Close())
}

// Kill stops the node as a crash would, for tests: the heartbeat stops and
// nothing is removed, so its entries lapse by TTL.
func (c *Cluster) Kill() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	close(c.stop)
	c.wg.Wait()
	c.forwarder.CloseIdleConnections()
	_ = c.rdb.Close()
}
