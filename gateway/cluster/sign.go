package cluster

import (
	"crypto/hmac"
	cryptorand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
)

// Headers of a forwarded call. The partner's credential is never among
// them: the caller's verified principal travels instead, signed.
const (
	HeaderSignature = "Vera-Cluster-Signature" // t=<unix ms>,v1=<hex HMAC-SHA256>
	HeaderFrom      = "Vera-Cluster-From"      // sending node id
	HeaderTo        = "Vera-Cluster-To"        // receiving node id
	HeaderMethod    = "Vera-Cluster-Method"    // the original method
	HeaderPath      = "Vera-Cluster-Path"      // the original path and query
	HeaderPrincipal = "Vera-Cluster-Principal" // base64url JSON of the caller
	HeaderNonce     = "Vera-Cluster-Nonce"     // random per forward: two equal calls in one ms differ
)

// replayWindow is how far a forward's timestamp may be from the receiver's
// clock; within it, a signature is accepted once.
const replayWindow = 30 * time.Second

// Forward verification failures (all answered 401).
var (
	ErrForged   = errors.New("cluster: forward signature does not verify")
	ErrStale    = errors.New("cluster: forward timestamp outside the replay window")
	ErrReplayed = errors.New("cluster: forward already received")
)

// principal is the caller as a forward carries it.
type principal struct {
	Partner string   `json:"partner"`
	Via     string   `json:"via"`
	Scopes  []string `json:"scopes,omitempty"`
	EndUser string   `json:"end_user,omitempty"`
	Device  string   `json:"device,omitempty"`
}

func encodePrincipal(p gateway.Principal) string {
	b, _ := json.Marshal(principal{Partner: p.PartnerID, Via: p.Via, Scopes: p.Scopes, EndUser: p.EndUserID, Device: p.Device})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePrincipal(s string) (gateway.Principal, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return gateway.Principal{}, err
	}
	var p principal
	if err := json.Unmarshal(b, &p); err != nil {
		return gateway.Principal{}, err
	}
	if p.Partner == "" {
		return gateway.Principal{}, errors.New("no partner")
	}
	return gateway.Principal{PartnerID: p.Partner, Via: p.Via, Scopes: p.Scopes, EndUserID: p.EndUser, Device: p.Device}, nil
}

// signature is the HMAC of a forward: every part that decides what the
// owner does, so none can be changed or moved to another node.
func signature(secret []byte, t int64, nonce, method, path string, bodySum [32]byte, from, to, principal string) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "vera-cluster-v%d\n%s\n%s\n%x\n%d\n%s\n%s\n%s\n%s", Protocol, method, path, bodySum, t, nonce, from, to, principal)
	return hex.EncodeToString(m.Sum(nil))
}

// sign sets the forward headers on req for a call from one node to
// another on behalf of p.
func sign(req *http.Request, secret []byte, now time.Time, method, path string, body []byte, from, to string, p gateway.Principal) {
	enc := encodePrincipal(p)
	t := now.UnixMilli()
	var n [12]byte
	_, _ = cryptorand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	h := req.Header
	h.Set(HeaderNonce, nonce)
	h.Set(HeaderFrom, from)
	h.Set(HeaderTo, to)
	h.Set(HeaderMethod, method)
	h.Set(HeaderPath, path)
	h.Set(HeaderPrincipal, enc)
	h.Set(HeaderSignature, "t="+strconv.FormatInt(t, 10)+",v1="+signature(secret, t, nonce, method, path, sha256.Sum256(body), from, to, enc))
}

// verify checks a received forward's headers against its body: the
// signature under the cluster secret, addressed to this node, within the
// replay window, and not seen before.
func verify(r *http.Request, secret []byte, self string, now time.Time, body []byte, seen *replayCache) (gateway.Principal, error) {
	h := r.Header
	ts, sig, ok := parseSignature(h.Get(HeaderSignature))
	if !ok || h.Get(HeaderTo) != self {
		return gateway.Principal{}, ErrForged
	}
	want := signature(secret, ts, h.Get(HeaderNonce), h.Get(HeaderMethod), h.Get(HeaderPath), sha256.Sum256(body), h.Get(HeaderFrom), self, h.Get(HeaderPrincipal))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return gateway.Principal{}, ErrForged
	}
	at := time.UnixMilli(ts)
	if d := now.Sub(at); d > replayWindow || d < -replayWindow {
		return gateway.Principal{}, ErrStale
	}
	if !seen.add(sig, at.Add(replayWindow), now) {
		return gateway.Principal{}, ErrReplayed
	}
	p, err := decodePrincipal(h.Get(HeaderPrincipal))
	if err != nil {
		return gateway.Principal{}, ErrForged
	}
	return p, nil
}

func parseSignature(s string) (int64, string, bool) {
	tpart, vpart, ok := strings.Cut(s, ",")
	if !ok || !strings.HasPrefix(tpart, "t=") || !strings.HasPrefix(vpart, "v1=") {
		return 0, "", false
	}
	t, err := strconv.ParseInt(tpart[2:], 10, 64)
	return t, vpart[3:], err == nil && len(vpart) == 3+64
}

// replayCache remembers the signatures accepted within the replay window.
type replayCache struct {
	mu   sync.Mutex // mu guards seen and adds
	seen map[string]time.Time
	adds int
}

// maxReplayEntries bounds the cache; past it the oldest expire early,
// which the timestamp window still bounds.
const maxReplayEntries = 100_000

func newReplayCache() *replayCache { return &replayCache{seen: map[string]time.Time{}} }

// add records sig until until; false when it was already there.
func (c *replayCache) add(sig string, until, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[sig]; ok {
		return false
	}
	if c.adds++; c.adds%1024 == 0 || len(c.seen) >= maxReplayEntries {
		for k, t := range c.seen {
			if !t.After(now) {
				delete(c.seen, k)
			}
		}
		if len(c.seen) >= maxReplayEntries {
			return false // a flood of valid forwards: refuse rather than forget
		}
	}
	c.seen[sig] = until
	return true
}
