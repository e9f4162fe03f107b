package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind is a directory namespace: what an id names.
type Kind string

const (
	// Session: a conversation (sess_…), for the inbox, titles and chat
	// resume.
	Session Kind = "session"
	// Voice: a WebRTC connection, for PATCH and DELETE on its Location.
	Voice Kind = "voice"
	// Action: an approved action awaiting its result. Its entry lives for
	// actionTTL and is checked against its node's record on lookup, so it
	// needs no heartbeat.
	Action Kind = "action"
	// Resume: a chat resume token's digest, naming its session's node.
	Resume Kind = "resume"
)

// actionTTL bounds an approved action's entry: actions expire after 24 h.
const actionTTL = 24 * time.Hour

// Entry is one directory entry: which node owns an id, for whom.
type Entry struct {
	Kind    Kind   `json:"kind"`
	ID      string `json:"id"`
	Node    string `json:"node"`
	Addr    string `json:"addr"` // the node's advertise_url
	Partner string `json:"partner"`
	EndUser string `json:"end_user,omitempty"`
	// Version is the owner's build; Protocol its cluster protocol.
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
	// ExpiresMS is when the entry lapses unless its node refreshes it
	// (epoch ms).
	ExpiresMS int64 `json:"expires_ms"`
}

func entryKey(k Kind, id string) string { return keyPrefix + "dir:" + string(k) + ":" + id }

// ErrNoEntry: the directory has no live entry for the id.
var ErrNoEntry = errors.New("cluster: no directory entry")

// dropScript deletes an entry only while it still names the node.
var dropScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).node == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
`)

// entry builds this node's entry for id.
func (c *Cluster) entry(k Kind, id, partner, endUser string) Entry {
	ttl := c.ttl()
	if k == Action {
		ttl = actionTTL
	}
	return Entry{Kind: k, ID: id, Node: c.cfg.NodeID, Addr: c.advertise, Partner: partner, EndUser: endUser,
		Version: c.version, Protocol: Protocol, ExpiresMS: c.clock.Now().Add(ttl).UnixMilli()}
}

// Register records that this node owns id, at once, and (except actions)
// refreshes it every heartbeat until Forget.
func (c *Cluster) Register(ctx context.Context, k Kind, id, partner, endUser string) error {
	if c == nil {
		return nil
	}
	return c.registerAll(ctx, c.entry(k, id, partner, endUser))
}

// registerAll writes entries in one round trip.
func (c *Cluster) registerAll(ctx context.Context, es ...Entry) error {
	c.mu.Lock()
	for _, e := range es {
		if e.Kind != Action {
			c.local[entryKey(e.Kind, e.ID)] = e
			c.met.entries.WithLabelValues(string(e.Kind)).Set(float64(c.countLocked(e.Kind)))
		}
	}
	c.mu.Unlock()
	pipe := c.rdb.Pipeline()
	for _, e := range es {
		_ = c.put(ctx, pipe, e)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		c.log.Warn("cluster: directory write failed; the next heartbeat retries", "err", err)
		return err
	}
	return nil
}

// Forget removes this node's entries for ids of kind k.
func (c *Cluster) Forget(ctx context.Context, k Kind, ids ...string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	for _, id := range ids {
		delete(c.local, entryKey(k, id))
	}
	c.met.entries.WithLabelValues(string(k)).Set(float64(c.countLocked(k)))
	c.mu.Unlock()
	c.forgetLater(ids2keys(k, ids)...)
}

func ids2keys(k Kind, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = entryKey(k, id)
	}
	return out
}

// forgetLater hands keys to the forget loop: a session's end never waits
// on Redis (which may be down; unrefreshed, the entries lapse anyway).
func (c *Cluster) forgetLater(keys ...string) {
	select {
	case c.forgets <- keys:
	default:
		c.met.redisErrors.WithLabelValues("forget_queue_full").Inc()
	}
}

// forgetLoop deletes handed-over entries until the cluster stops.
func (c *Cluster) forgetLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case keys := <-c.forgets:
			c.forget(context.Background(), keys...)
		}
	}
}

// forget deletes the entries at keys that still name this node, in one
// round trip.
func (c *Cluster) forget(ctx context.Context, keys ...string) {
	ctx, cancel := context.WithTimeout(ctx, redisDialTimeout)
	defer cancel()
	pipe := c.rdb.Pipeline()
	for _, key := range keys {
		dropScript.Eval(ctx, pipe, []string{key}, c.cfg.NodeID)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		c.log.Warn("cluster: directory delete failed; the entries lapse by themselves", "err", err)
	}
}

// put writes e with its TTL.
func (c *Cluster) put(ctx context.Context, w redis.Cmdable, e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	ttl := time.UnixMilli(e.ExpiresMS).Sub(c.clock.Now())
	if e.Kind != Action {
		ttl = c.ttl()
	}
	return w.Set(ctx, entryKey(e.Kind, e.ID), b, ttl).Err()
}

func (c *Cluster) countLocked(k Kind) int {
	n := 0
	for _, e := range c.local {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// Lookup returns the live entry for id. An action's entry whose node has
// no record any more (it died) is dropped and reported missing.
func (c *Cluster) Lookup(ctx context.Context, k Kind, id string) (Entry, error) {
	if c.local != nil {
		c.mu.Lock()
		e, ok := c.local[entryKey(k, id)]
		c.mu.Unlock()
		if ok {
			return e, nil
		}
	}
	b, err := c.rdb.Get(ctx, entryKey(k, id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Entry{}, ErrNoEntry
	}
	if err != nil {
		return Entry{}, fmt.Errorf("cluster: directory: %w", err)
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return Entry{}, fmt.Errorf("cluster: directory entry %s: %w", k, err)
	}
	if k == Action && e.Node != c.cfg.NodeID {
		n, err := c.rdb.Exists(ctx, nodeKey(e.Node)).Result()
		if err != nil {
			return Entry{}, fmt.Errorf("cluster: directory: %w", err)
		}
		if n == 0 {
			c.drop(ctx, e)
			return Entry{}, ErrNoEntry
		}
	}
	return e, nil
}

// drop deletes an entry of a node found dead (only while it still names
// that node).
func (c *Cluster) drop(ctx context.Context, e Entry) {
	if err := dropScript.Run(ctx, c.rdb, []string{entryKey(e.Kind, e.ID)}, e.Node).Err(); err != nil {
		c.log.Warn("cluster: directory delete failed", "kind", e.Kind, "err", err)
	}
}
