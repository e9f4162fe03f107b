package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/safety"
)

// Safety referral counters in Redis: vera:safety:<partner> is a hash of
// "event|level|region|surface" → count, added to by every node, so a
// partner's referral report (GET /v1/audit/safety) is the cluster's
// whichever node answers, and survives restarts (appendonly yes). Counts
// travel off the card's path: into a bounded queue, flushed in one
// pipeline every safetyFlush.
const (
	safetyFlush = 250 * time.Millisecond
	safetyQueue = 8192
)

type safetyCount struct {
	partner string
	row     safety.CounterRow
}

// clusterCounters is audit.SharedSafetyCounters on Redis.
type clusterCounters struct{ c *Cluster }

var _ audit.SharedSafetyCounters = clusterCounters{}

func safetyKey(partner string) string { return keyPrefix + "safety:" + partner }

// SafetyCounters makes local's counts cluster-wide: every count is also
// added in Redis, and the route reads Redis. Alone, local is returned.
func (c *Cluster) SafetyCounters(local *safety.Counters) audit.SafetyCounters {
	if c == nil {
		return local
	}
	c.mu.Lock()
	if c.counts == nil {
		c.counts = make(chan safetyCount, safetyQueue)
		c.wg.Add(1)
		go c.flushLoop()
	}
	c.mu.Unlock()
	local.OnCount(func(partner string, row safety.CounterRow) {
		select {
		case c.counts <- safetyCount{partner, row}:
		default:
			c.met.redisErrors.WithLabelValues("safety_queue_full").Inc()
			c.log.Error("cluster: safety count not queued for Redis (queue full); the local counters still hold it")
		}
	})
	return clusterCounters{c}
}

// flushLoop adds queued counts to Redis until the cluster closes, then
// flushes what is left.
func (c *Cluster) flushLoop() {
	defer c.wg.Done()
	t, ch := c.clock.NewTicker(safetyFlush)
	defer t.Stop()
	pending := map[safetyCount]int64{}
	for {
		select {
		case <-c.stop:
			c.drainCounts(pending)
			c.flushCounts(pending)
			return
		case <-ch:
			c.drainCounts(pending)
			c.flushCounts(pending)
		}
	}
}

func (c *Cluster) drainCounts(pending map[safetyCount]int64) {
	for {
		select {
		case s := <-c.counts:
			n := s.row.Count
			s.row.Count = 0
			pending[s] += int64(n)
		default:
			return
		}
	}
}

// flushCounts writes pending in one pipeline and keeps it on failure (a
// later flush retries; the map stays bounded by its distinct rows).
func (c *Cluster) flushCounts(pending map[safetyCount]int64) {
	if len(pending) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisDialTimeout)
	defer cancel()
	pipe := c.rdb.Pipeline()
	for s, n := range pending {
		pipe.HIncrBy(ctx, safetyKey(s.partner), strings.Join([]string{s.row.Event, s.row.Level, s.row.Region, s.row.Surface}, "|"), n)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		c.log.Warn("cluster: safety counts not written yet; retrying", "rows", len(pending), "err", err)
		return
	}
	clear(pending)
}

// SnapshotFor implements audit.SafetyCounters (an empty report when Redis
// does not answer; the route uses TrySnapshotFor).
func (cc clusterCounters) SnapshotFor(partner string) safety.CountersSnapshot {
	s, _ := cc.TrySnapshotFor(partner)
	return s
}

// TrySnapshotFor implements audit.SharedSafetyCounters.
func (cc clusterCounters) TrySnapshotFor(partner string) (safety.CountersSnapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisDialTimeout)
	defer cancel()
	all, err := cc.c.rdb.HGetAll(ctx, safetyKey(partner)).Result()
	if err != nil {
		return safety.SnapshotOf(nil), fmt.Errorf("cluster: safety counters: %w", err)
	}
	rows := make([]safety.CounterRow, 0, len(all))
	for k, v := range all {
		f := strings.Split(k, "|")
		var n uint64
		if _, err := fmt.Sscan(v, &n); err != nil || len(f) != 4 {
			continue
		}
		rows = append(rows, safety.CounterRow{Event: f[0], Level: f[1], Region: f[2], Surface: f[3], Count: n})
	}
	return safety.SnapshotOf(rows), nil
}
