package gateway

import (
	"net/netip"
	"sync"
	"time"
)

// failedSources is the auth-failure throttle's local hint: the sources
// that failed to authenticate on this node, or were throttled by it,
// within the last failHintFor. Only their requests ask the limiter's
// bucket before authenticating, so the request of a source with no recent
// failure — almost every request — costs the limiter nothing (in a
// cluster, no Redis round trip).
//
// On one node the hint is exact: a source absent from it has not failed
// for a full refill of its bucket (burst = limits.auth_failures_per_minute
// refills in a minute), so its bucket is full. In a cluster every failure
// is still charged to the shared bucket by the node that saw it; a node
// that has not yet seen a source fail authenticates that source's first
// request without asking, and charges it if it fails (answered 429 when
// the shared bucket is empty). A source guessing credentials across N
// nodes therefore gets at most N attempts beyond its limit, one per node,
// for as long as it keeps being throttled (THREATS.md).
type failedSources struct {
	mu    sync.Mutex // mu guards until and full
	until map[netip.Addr]time.Time
	// full: the map reached maxFailedSources; until this time every
	// source is asked about (the throttle as it was before the hint).
	full time.Time
}

// failHintFor is how long a failure keeps its source asked about: a full
// refill of the failure bucket (its burst is a minute's worth).
const failHintFor = time.Minute

// maxFailedSources bounds the hint; past it (a spray from more sources
// than that within a minute) every request asks the limiter again.
const maxFailedSources = 100_000

func newFailedSources() *failedSources {
	return &failedSources{until: map[netip.Addr]time.Time{}}
}

// suspect reports whether src's requests must ask the limiter first.
func (f *failedSources) suspect(src netip.Addr, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Before(f.full) {
		return true
	}
	u, ok := f.until[src]
	if ok && !now.Before(u) {
		delete(f.until, src)
		return false
	}
	return ok
}

// mark notes that src failed or was throttled at now.
func (f *failedSources) mark(src netip.Addr, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.until[src]; !ok && len(f.until) >= maxFailedSources {
		for a, u := range f.until {
			if !now.Before(u) {
				delete(f.until, a)
			}
		}
		if len(f.until) >= maxFailedSources {
			f.full = now.Add(failHintFor)
			return
		}
	}
	f.until[src] = now.Add(failHintFor)
}
