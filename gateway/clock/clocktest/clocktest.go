// Package clocktest is the one fake clock.Clock: time moves only when a
// test calls Advance, and every timer, ticker and AfterFunc that comes due
// fires then, in deadline order, deterministically.
//
// AfterFunc callbacks run synchronously inside Advance (outside the
// clock's lock, so they may use the clock); a timer armed by a callback
// fires on a later Advance. NewTimer(d <= 0) fires at once; AfterFunc(d <= 0)
// fires on the next Advance (Advance(0) will do).
package clocktest

import (
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Clock is a manual clock.Clock.
type Clock struct {
	mu      sync.Mutex // mu guards now, timers and changed
	now     time.Time
	timers  []*timer
	changed chan struct{} // closed and replaced whenever a timer is armed
}

var _ clock.Clock = (*Clock)(nil)

// timer is one armed NewTimer, NewTicker or AfterFunc.
type timer struct {
	c      *Clock
	at     time.Time
	d      time.Duration
	period time.Duration  // > 0 for tickers
	ch     chan time.Time // nil for AfterFunc
	f      func()         // nil for channel timers
	armed  bool           // guarded by c.mu
}

// NewClock returns a clock set to start.
func NewClock(start time.Time) *Clock {
	return &Clock{now: start, changed: make(chan struct{})}
}

// Now implements clock.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Since implements clock.Clock.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// NewTimer implements clock.Clock.
func (c *Clock) NewTimer(d time.Duration) (clock.Timer, <-chan time.Time) {
	t := &timer{c: c, ch: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 {
		t.ch <- c.now
		return t, t.ch
	}
	c.armLocked(t, d)
	return t, t.ch
}

// NewTicker implements clock.Clock. A period d <= 0 (which time.NewTicker
// refuses) is taken as 1 ns.
func (c *Clock) NewTicker(d time.Duration) (clock.Ticker, <-chan time.Time) {
	d = max(d, time.Nanosecond)
	t := &timer{c: c, period: d, ch: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked(t, d)
	return tickerOf{t}, t.ch
}

// AfterFunc implements clock.Clock.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &timer{c: c, f: f}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked(t, d)
	return t
}

func (c *Clock) armLocked(t *timer, d time.Duration) {
	t.at, t.d, t.armed = c.now.Add(d), d, true
	if !contains(c.timers, t) {
		c.timers = append(c.timers, t)
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

func contains(ts []*timer, t *timer) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// Advance moves time forward by d and fires everything now due, in
// deadline order: channel timers send the new time (a full channel drops
// the tick), tickers re-arm at their next period after now, AfterFunc
// callbacks run before Advance returns. Everything fired sees Now as the
// time advanced to.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due []*timer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case !t.armed:
		case t.at.After(now):
			keep = append(keep, t)
		default:
			due = append(due, t)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	var funcs []func()
	for _, t := range due {
		switch {
		case t.f != nil:
			t.armed = false
			funcs = append(funcs, t.f)
		default:
			select {
			case t.ch <- now:
			default:
			}
			if t.period > 0 {
				// The next tick after now; missed ones are dropped.
				t.at = t.at.Add((now.Sub(t.at)/t.period + 1) * t.period)
				keep = append(keep, t)
			} else {
				t.armed = false
			}
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, f := range funcs {
		f()
	}
}

// Pending is the number of armed timers, tickers and AfterFuncs.
func (c *Clock) Pending() int { return len(c.Armed()) }

// Armed is one armed timer: when it fires and the duration it was armed
// with (a ticker's period).
type Armed struct {
	At time.Time
	D  time.Duration
}

// Armed lists the armed timers, tickers and AfterFuncs, soonest first.
func (c *Clock) Armed() []Armed {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Armed
	for _, t := range c.timers {
		if t.armed {
			out = append(out, Armed{At: t.at, D: t.d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// WaitArmed blocks until an armed timer satisfies ok and returns it: the
// way a test knows the code under test is waiting on the clock before it
// advances it. The 10 s wall-clock bound is a hang guard only.
func (c *Clock) WaitArmed(tb testing.TB, ok func(Armed) bool) Armed {
	tb.Helper()
	guard := time.NewTimer(10 * time.Second)
	defer guard.Stop()
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		for _, a := range c.Armed() {
			if ok(a) {
				return a
			}
		}
		select {
		case <-ch:
		case <-guard.C:
			tb.Fatalf("clocktest: no matching timer armed within 10 s; armed: %v", c.Armed())
			return Armed{}
		}
	}
}

// Stop implements clock.Timer.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// Reset implements clock.Timer.
func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.c.armLocked(t, d)
	return was
}

// tickerOf is a ticker's clock.Ticker face.
type tickerOf struct{ t *timer }

func (k tickerOf) Stop() { k.t.Stop() }

func (k tickerOf) Reset(d time.Duration) {
	d = max(d, time.Nanosecond)
	k.t.c.mu.Lock()
	defer k.t.c.mu.Unlock()
	k.t.period = d
	k.t.c.armLocked(k.t, d)
}
