package session

import (
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

// timers are a session's clock callbacks (ack timeouts, action expiry, an
// offer's answer window). Close stops them all; a callback that has
// started is joined by Close (through the session's WaitGroup) and none
// starts after it.
//
// mu is taken after a part's own lock (a part arms and stops timers while
// holding it) and a callback takes it only to check in, before f: f takes
// its part's lock itself, so it runs only once the part that armed it has
// finished its locked step.
type timers struct {
	clock clock.Clock
	wg    *sync.WaitGroup // the session's: callbacks in flight

	mu     sync.Mutex // mu guards the fields below
	closed bool
	set    map[clock.Timer]struct{}
}

func newTimers(clk clock.Clock, wg *sync.WaitGroup) *timers {
	return &timers{clock: clk, wg: wg, set: map[clock.Timer]struct{}{}}
}

// after arms a timer that calls f after d, unless the session closes first.
func (ts *timers) after(d time.Duration, f func()) clock.Timer {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var t clock.Timer
	t = ts.clock.AfterFunc(d, func() {
		ts.mu.Lock()
		if ts.closed {
			ts.mu.Unlock()
			return
		}
		delete(ts.set, t)
		ts.wg.Add(1)
		ts.mu.Unlock()
		defer ts.wg.Done()
		f()
	})
	ts.set[t] = struct{}{}
	return t
}

// stop stops t (nil: nothing).
func (ts *timers) stop(t clock.Timer) {
	if t == nil {
		return
	}
	t.Stop()
	ts.mu.Lock()
	delete(ts.set, t)
	ts.mu.Unlock()
}

// stopAll stops every timer; none is armed to any effect afterwards.
func (ts *timers) stopAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	for t := range ts.set {
		t.Stop()
	}
	clear(ts.set)
}
