package pairing

import (
	"context"
	"encoding/hex"
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
// Sweep. Codes are RedisCodes'.
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

// RedisCodes is the CodeStore in Redis, shared by every node of a cluster,
// so a code issued through one node is exchanged through any: each code is
// a hash at vera:paircode:<digest> (its owner, device, expiry and whether
// it was used) living until its Retain; vera:paircode:owner:<partner>\0<end
// user>\0<device> names the owner's latest code, vera:paircode:id:<pairing
// id> a pairing's code, and vera:paircodes orders digests by Retain to
// count them against Config.MaxCodes. One script issues (replacing the
// owner's unused code), one claims, one withdraws: atomic, so of two
// exchanges of one code on two nodes exactly one wins. Expiry is decided
// on the callers' clock, as MemoryCodes decides it; Redis's TTLs only
// collect the keys.
//
// The scripts reach the replaced code's keys by name (Redis Cluster would
// refuse that; one Redis primary is the cluster's contract).
type RedisCodes struct{ rdb redis.UniversalClient }

var _ CodeStore = (*RedisCodes)(nil)

// NewRedisCodes returns the code store on rdb.
func NewRedisCodes(rdb redis.UniversalClient) *RedisCodes { return &RedisCodes{rdb: rdb} }

const (
	codePrefix = "vera:paircode:"
	codesIndex = "vera:paircodes"
)

func codeKey(hexDigest string) string { return codePrefix + hexDigest }
func codeOwnerKey(c Code) string      { return codePrefix + "owner:" + ownerOf(c) }
func codeIDKey(pairingID string) string {
	return codePrefix + "id:" + pairingID
}

// issueScript: KEYS code, owner, id, index. ARGV now ms, max, digest,
// expires ms, retain ms, pairing id, partner, end user, device, prefix.
var issueScript = redis.NewScript(`
local now, retain = tonumber(ARGV[1]), tonumber(ARGV[5])
local old = redis.call('GET', KEYS[2])
if old and redis.call('HGET', ARGV[10] .. old, 'used') == '0' then
  local pid = redis.call('HGET', ARGV[10] .. old, 'pairing') or ''
  redis.call('DEL', ARGV[10] .. old, ARGV[10] .. 'id:' .. pid)
  redis.call('ZREM', KEYS[4], old)
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'pairing', ARGV[6], 'partner', ARGV[7], 'end_user', ARGV[8], 'device', ARGV[9],
  'expires', ARGV[4], 'retain', ARGV[5], 'used', '0')
local keep = math.max(retain - now, 1)
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('SET', KEYS[2], ARGV[3], 'PX', math.max(tonumber(ARGV[4]) - now, 1))
redis.call('SET', KEYS[3], ARGV[3], 'PX', keep)
redis.call('ZADD', KEYS[4], retain, ARGV[3])
return 1
`)

// claimScript: KEYS code. ARGV now ms, device. It returns the outcome
// and, for "ok", the code's fields.
var claimScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'pairing', 'partner', 'end_user', 'device', 'expires', 'retain', 'used')
if not f[1] then return {'unknown'} end
if f[7] ~= '0' then return {'used'} end
if tonumber(ARGV[1]) >= tonumber(f[5]) then return {'expired'} end
redis.call('HSET', KEYS[1], 'used', '1')
if f[4] ~= ARGV[2] then return {'wrong_device'} end
return {'ok', f[1], f[2], f[3], f[4], f[5], f[6]}
`)

// withdrawScript: KEYS id, index. ARGV partner, prefix.
var withdrawScript = redis.NewScript(`
local d = redis.call('GET', KEYS[1])
if not d or redis.call('HGET', ARGV[2] .. d, 'partner') ~= ARGV[1] then return 0 end
redis.call('DEL', ARGV[2] .. d, KEYS[1])
redis.call('ZREM', KEYS[2], d)
return 1
`)

// Issue implements CodeStore.
func (s *RedisCodes) Issue(d [32]byte, c Code, now time.Time, max int) error {
	ctx, cancel := redisCtx()
	defer cancel()
	h := hex.EncodeToString(d[:])
	ok, err := issueScript.Run(ctx, s.rdb, []string{codeKey(h), codeOwnerKey(c), codeIDKey(c.PairingID), codesIndex},
		now.UnixMilli(), max, h, c.Expires.UnixMilli(), c.Retain.UnixMilli(), c.PairingID, c.Partner, c.EndUser, c.Device, codePrefix).Int()
	if err != nil {
		return fmt.Errorf("pairing: codes: %w", err)
	}
	if ok == 0 {
		return ErrTooManyCodes
	}
	return nil
}

// Claim implements CodeStore.
func (s *RedisCodes) Claim(d [32]byte, device string, now time.Time) (Code, Claim, error) {
	ctx, cancel := redisCtx()
	defer cancel()
	r, err := claimScript.Run(ctx, s.rdb, []string{codeKey(hex.EncodeToString(d[:]))}, now.UnixMilli(), device).StringSlice()
	if err != nil {
		return Code{}, ClaimUnknown, fmt.Errorf("pairing: codes: %w", err)
	}
	if len(r) == 0 {
		return Code{}, ClaimUnknown, errors.New("pairing: codes: claim answered nothing")
	}
	switch r[0] {
	case "unknown":
		return Code{}, ClaimUnknown, nil
	case "used":
		return Code{}, ClaimUsed, nil
	case "expired":
		return Code{}, ClaimExpired, nil
	case "wrong_device":
		return Code{}, ClaimWrongDevice, nil
	}
	if len(r) != 7 {
		return Code{}, ClaimUnknown, fmt.Errorf("pairing: codes: claim answered %d fields", len(r))
	}
	exp, _ := strconv.ParseInt(r[5], 10, 64)
	keep, _ := strconv.ParseInt(r[6], 10, 64)
	return Code{PairingID: r[1], Partner: r[2], EndUser: r[3], Device: r[4],
		Expires: time.UnixMilli(exp), Retain: time.UnixMilli(keep)}, Claimed, nil
}

// Withdraw implements CodeStore.
func (s *RedisCodes) Withdraw(partner, pairingID string) (bool, error) {
	ctx, cancel := redisCtx()
	defer cancel()
	n, err := withdrawScript.Run(ctx, s.rdb, []string{codeIDKey(pairingID), codesIndex}, partner, codePrefix).Int()
	if err != nil {
		return false, fmt.Errorf("pairing: codes: %w", err)
	}
	return n == 1, nil
}
