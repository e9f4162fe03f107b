package cluster

import (
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/inbox"
	"github.com/veraneural/vera-gateway/gateway/pairing"
	"github.com/veraneural/vera-gateway/gateway/tools"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

// Stores are the Redis stores a node of the cluster uses in place of the
// bbolt file and process memory.
type Stores struct {
	Inbox   inbox.Store
	Webhook webhook.Store
	Audit   audit.Store
	Tools   tools.Store
	Pairing pairing.Store
}

// Stores builds them on the cluster's Redis: the inbox is this node's
// (inbox.hold_for bounds a dead node's leftovers), the webhook queue's
// endpoint leases outlast one attempt (webhook_delivery.timeout).
func (c *Cluster) Stores(holdFor, webhookTimeout time.Duration) Stores {
	return Stores{
		Inbox:   inbox.NewRedisStore(c.rdb, c.cfg.NodeID, holdFor),
		Webhook: webhook.NewRedisStore(c.rdb, c.cfg.NodeID+"#"+c.instance[:8], webhookTimeout+2*time.Second),
		Audit:   audit.NewRedisStore(c.rdb),
		Tools:   tools.NewRedisStore(c.rdb),
		Pairing: pairing.NewRedisStore(c.rdb),
	}
}

// RateLimiter is the cluster-wide limiter; nil alone (the gateway's
// in-memory one).
func (c *Cluster) RateLimiter() gateway.RateLimiter {
	if c == nil {
		return nil
	}
	return NewRateLimiter(c.rdb)
}

// Idempotency is the cluster-wide idempotency store; nil alone (the
// gateway's in-memory one).
func (c *Cluster) Idempotency(cfg gateway.IdempotencyConfig) gateway.IdempotencyStore {
	if c == nil {
		return nil
	}
	return NewIdempotencyStore(c.rdb, time.Duration(cfg.TTLSeconds)*time.Second, cfg.MaxEntries)
}

// Pairing is opts with the cluster's pairing codes and per-address
// exchange and refresh buckets, so that a code issued through one node is
// exchanged, once, through any; alone, opts as they are (in memory).
func (c *Cluster) Pairing(opts pairing.Options) pairing.Options {
	if c == nil {
		return opts
	}
	opts.Codes, opts.RateLimiter = pairing.NewRedisCodes(c.rdb), NewRateLimiter(c.rdb)
	return opts
}
