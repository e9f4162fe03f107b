package cluster

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/veraneural/vera-gateway/gateway"
)

// Fair shares across the cluster (gateway.ShareLedger). Each node keeps
// what it holds in one hash, vera:share:<node>#<instance>: a field per
// holder (kind, partner[, end user]) whose value is "count:seq", seq the
// node's change number (gateway.Shares). The hash lives two heartbeats and
// every heartbeat extends it, so a killed node's holdings lapse within two
// heartbeats. A heartbeat rewrites it from the node's own counts only when
// a count may have been lost on its way (a failed or dropped write: Redis
// briefly down during a hang-up) or the hash itself was lost (lapsed while
// Redis was unreachable, or a Redis restart without it), so the counts are
// right again one heartbeat later, and a steady heartbeat costs one
// PEXPIRE however many holders there are.
// A node's hash is found through its node record's instance, so a node
// restarted under the same id never inherits its predecessor's counts.

func shareKey(node, instance string) string { return keyPrefix + "share:" + node + "#" + instance }

// shareSetLua sets one field to count:seq unless the field holds a newer
// seq; a count of 0 removes the field.
const shareSetLua = `
local function set(key, f, n, seq)
  local cur = redis.call('HGET', key, f)
  if cur and tonumber(string.match(cur, ':(%d+)$')) >= tonumber(seq) then return end
  if n == '0' then redis.call('HDEL', key, f) else redis.call('HSET', key, f, n .. ':' .. seq) end
end
`

// shareTakeScript: KEYS node index, this node's hash. ARGV prefix, node id,
// seq, ttl ms, then per holding field, count, cap. It sums the holder's
// counts on the other live nodes; if any holding would pass its cap it
// returns that holding's index and writes nothing, else it writes them all
// and returns -1.
var shareTakeScript = redis.NewScript(shareSetLua + `
local prefix, me = ARGV[1], ARGV[2]
local n = (#ARGV - 4) / 3
local fields, others = {}, {}
for i = 1, n do fields[i], others[i] = ARGV[2 + 3*i], 0 end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if id ~= me then
    local inst = redis.call('HGET', prefix .. 'node:' .. id, 'instance')
    if inst then
      local vals = redis.call('HMGET', prefix .. 'share:' .. id .. '#' .. inst, unpack(fields))
      for i = 1, n do
        if vals[i] then others[i] = others[i] + tonumber(string.match(vals[i], '^(%d+)')) end
      end
    end
  end
end
for i = 1, n do
  if others[i] + tonumber(ARGV[3 + 3*i]) > tonumber(ARGV[4 + 3*i]) then return i - 1 end
end
for i = 1, n do set(KEYS[2], fields[i], ARGV[3 + 3*i], ARGV[3]) end
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return -1
`)

// sharePutScript: KEYS this node's hash. ARGV seq, ttl ms, then field,
// count pairs.
var sharePutScript = redis.NewScript(shareSetLua + `
for i = 3, #ARGV, 2 do set(KEYS[1], ARGV[i], ARGV[i + 1], ARGV[1]) end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`)

// shareSyncScript: KEYS this node's hash. ARGV seq, ttl ms, then field,
// count pairs: every count the node holds at seq. Fields written at a
// newer seq (a change after the snapshot) stay; the others become the
// snapshot.
var shareSyncScript = redis.NewScript(`
local seq = tonumber(ARGV[1])
local snap = {}
for i = 3, #ARGV, 2 do snap[ARGV[i]] = ARGV[i + 1] end
local cur = redis.call('HGETALL', KEYS[1])
for i = 1, #cur, 2 do
  local f = cur[i]
  if tonumber(string.match(cur[i + 1], ':(%d+)$')) > seq then snap[f] = nil
  elseif not snap[f] then redis.call('HDEL', KEYS[1], f) end
end
for f, n in pairs(snap) do redis.call('HSET', KEYS[1], f, n .. ':' .. ARGV[1]) end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`)

// sharePut is one count change waiting to be sent.
type sharePut struct {
	seq uint64
	hs  []gateway.ShareHolding
}

// sharePutQueue bounds the releases waiting for Redis; past it a release
// waits for the next heartbeat's rewrite.
const sharePutQueue = 4096

// Shares makes s cluster-wide: each Acquire counts every live node's
// holdings (one Redis round trip), releases are sent behind, and every
// heartbeat rewrites this node's counts. Alone (or with a nil s) it does
// nothing. Call it before the node takes sessions.
func (c *Cluster) Shares(s *gateway.Shares) {
	if c == nil || s == nil {
		return
	}
	c.mu.Lock()
	if c.shares == nil {
		c.shares = s
		c.puts = make(chan sharePut, sharePutQueue)
		c.wg.Add(1)
		go c.putLoop()
	}
	c.mu.Unlock()
	s.UseLedger((*shareLedger)(c))
}

// shareLedger is the Cluster as gateway.ShareLedger.
type shareLedger Cluster

func (l *shareLedger) c() *Cluster { return (*Cluster)(l) }

func shareArgs(seq uint64, ttlMS int64, hs []gateway.ShareHolding, caps bool) []any {
	args := []any{strconv.FormatUint(seq, 10), ttlMS}
	for _, h := range hs {
		args = append(args, h.Key, h.Held)
		if caps {
			args = append(args, h.Cap)
		}
	}
	return args
}

// Take implements gateway.ShareLedger.
func (l *shareLedger) Take(seq uint64, hs []gateway.ShareHolding) (int, error) {
	c := l.c()
	ctx, cancel := context.WithTimeout(context.Background(), redisIOTimeout)
	defer cancel()
	args := append([]any{keyPrefix, c.cfg.NodeID}, shareArgs(seq, c.ttl().Milliseconds(), hs, true)...)
	n, err := shareTakeScript.Run(ctx, c.rdb, []string{nodesKey, shareKey(c.cfg.NodeID, c.instance)}, args...).Int()
	if err != nil {
		c.shareDirty.Store(true) // the script may have run, its reply lost
	}
	return n, err
}

// Put implements gateway.ShareLedger: queued, never blocking.
func (l *shareLedger) Put(seq uint64, hs []gateway.ShareHolding) {
	c := l.c()
	select {
	case c.puts <- sharePut{seq: seq, hs: hs}:
	default:
		c.shareDirty.Store(true)
		c.met.redisErrors.WithLabelValues("share_queue_full").Inc()
	}
}

// putLoop sends queued releases, all that are waiting in one pipeline.
func (c *Cluster) putLoop() {
	defer c.wg.Done()
	for {
		var batch []sharePut
		select {
		case <-c.stop:
			return
		case p := <-c.puts:
			batch = append(batch, p)
		}
		for len(batch) < 64 && len(c.puts) > 0 {
			batch = append(batch, <-c.puts)
		}
		ctx, cancel := context.WithTimeout(context.Background(), redisIOTimeout)
		pipe := c.rdb.Pipeline()
		key := shareKey(c.cfg.NodeID, c.instance)
		for _, p := range batch {
			sharePutScript.Eval(ctx, pipe, []string{key}, shareArgs(p.seq, c.ttl().Milliseconds(), p.hs, false)...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			c.shareDirty.Store(true)
			c.log.Warn("cluster: share release not sent; the next heartbeat rewrites the counts", "err", err)
		}
		cancel()
	}
}

// syncShares adds the heartbeat's part for the fair shares to pipe: the
// hash's new expiry, or the full rewrite of this node's counts when one may
// have been lost. after takes the pipeline's result.
func (c *Cluster) syncShares(ctx context.Context, pipe redis.Pipeliner) (after func(error)) {
	c.mu.Lock()
	s := c.shares
	c.mu.Unlock()
	if s == nil {
		return func(error) {}
	}
	key := shareKey(c.cfg.NodeID, c.instance)
	if c.shareDirty.Swap(false) {
		seq, hs := s.Holdings()
		shareSyncScript.Eval(ctx, pipe, []string{key}, shareArgs(seq, c.ttl().Milliseconds(), hs, false)...)
		return func(err error) {
			if err != nil {
				c.shareDirty.Store(true)
			}
		}
	}
	extended := pipe.PExpire(ctx, key, c.ttl())
	return func(err error) {
		switch {
		case err != nil:
			c.shareDirty.Store(true)
		case !extended.Val():
			c.resyncShares(s, key) // no hash: right if this node holds nothing
		}
	}
}

// resyncShares rewrites this node's counts at once, when it holds any.
func (c *Cluster) resyncShares(s *gateway.Shares, key string) {
	seq, hs := s.Holdings()
	if len(hs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisIOTimeout)
	defer cancel()
	if err := shareSyncScript.Run(ctx, c.rdb, []string{key}, shareArgs(seq, c.ttl().Milliseconds(), hs, false)...).Err(); err != nil {
		c.shareDirty.Store(true)
	}
}
