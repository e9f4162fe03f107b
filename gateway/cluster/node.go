package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Protocol is the cluster protocol: the Redis key layout, the stored
// records' formats and the forward signature. Nodes of one cluster must
// share it; builds (Version) may differ during a rolling upgrade.
const Protocol = 1

// keyPrefix starts every key the gateway writes (a Redis shared with other
// applications separates by database number in redis_url).
const keyPrefix = "vera:"

// Node states in the node record.
const (
	stateReady    = "ready"
	stateDraining = "draining"
)

// ErrNodeIDTaken: a live node already has this node_id.
var ErrNodeIDTaken = errors.New("cluster: a live node already has this node_id")

// ErrProtocol: a live node speaks another cluster protocol.
var ErrProtocol = errors.New("cluster: a live node speaks another cluster protocol")

func nodeKey(id string) string { return keyPrefix + "node:" + id }

const nodesKey = keyPrefix + "nodes"

// claimScript claims or refreshes a node record: it refuses (0) when
// another process holds the id, else writes the fields, sets the TTL and
// notes the node in the node index. KEYS: node record, node index. ARGV:
// instance, ttl ms, now ms, node id, then field/value pairs.
var claimScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'instance')
if cur and cur ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'instance', ARGV[1], unpack(ARGV, 5))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
return 1
`)

// releaseScript deletes the node record if this process holds it.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'instance') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
end
return 1
`)

// nodeInfo is one node's record.
type nodeInfo struct {
	ID, Advertise, Public, Version, State string
	Protocol                              int
}

// claimArgs are claimScript's arguments for this node in state.
func (c *Cluster) claimArgs(state string) []any {
	now := c.clock.Now()
	return []any{c.instance, c.ttl().Milliseconds(), now.UnixMilli(), c.cfg.NodeID,
		"advertise", c.advertise, "public", c.cfg.Public(), "version", c.version,
		"protocol", strconv.Itoa(Protocol), "state", state, "beat_ms", strconv.FormatInt(now.UnixMilli(), 10)}
}

// claim registers the node at start: refused while a live node has the
// id or a live node speaks another protocol.
func (c *Cluster) claim(ctx context.Context) error {
	ok, err := claimScript.Run(ctx, c.rdb, []string{nodeKey(c.cfg.NodeID), nodesKey}, c.claimArgs(stateReady)...).Int()
	if err != nil {
		return fmt.Errorf("cluster: register node: %w", err)
	}
	if ok == 0 {
		return fmt.Errorf("%w: %q (stop it, or give this node another cluster.node_id)", ErrNodeIDTaken, c.cfg.NodeID)
	}
	peers, err := c.liveNodes(ctx)
	if err != nil {
		return err
	}
	for _, p := range peers {
		if p.Protocol != Protocol {
			_ = c.release(ctx)
			return fmt.Errorf("%w: node %q speaks protocol %d, this build %d: replace every node at once", ErrProtocol, p.ID, p.Protocol, Protocol)
		}
		if p.Version != c.version {
			c.log.Warn("cluster: a live node runs another build (a rolling upgrade?)", "node", p.ID, "version", p.Version, "this_version", c.version)
		}
	}
	return nil
}

// liveNodes reads the records of the nodes that beat within two
// heartbeats.
func (c *Cluster) liveNodes(ctx context.Context) ([]nodeInfo, error) {
	since := c.clock.Now().Add(-c.ttl()).UnixMilli()
	ids, err := c.rdb.ZRangeByScore(ctx, nodesKey, &redis.ZRangeBy{Min: strconv.FormatInt(since, 10), Max: "+inf"}).Result()
	if err != nil {
		return nil, fmt.Errorf("cluster: list nodes: %w", err)
	}
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, nodeKey(id))
	}
	if len(ids) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, fmt.Errorf("cluster: list nodes: %w", err)
		}
	}
	var out []nodeInfo
	for i, cmd := range cmds {
		m := cmd.Val()
		if len(m) == 0 {
			continue // lapsed between the two reads
		}
		p, _ := strconv.Atoi(m["protocol"])
		out = append(out, nodeInfo{ID: ids[i], Advertise: m["advertise"], Public: m["public"], Version: m["version"], State: m["state"], Protocol: p})
	}
	return out, nil
}

// release removes the node record if this process holds it.
func (c *Cluster) release(ctx context.Context) error {
	return releaseScript.Run(ctx, c.rdb, []string{nodeKey(c.cfg.NodeID), nodesKey}, c.instance, c.cfg.NodeID).Err()
}

// BuildVersion is this binary's version for node records: the module
// version and VCS revision the Go toolchain stamped, or "devel".
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	if v == "" {
		v = "devel"
	}
	return v
}

// ttl is how long entries and the node record live without a heartbeat.
func (c *Cluster) ttl() time.Duration { return 2 * c.cfg.Heartbeat() }
