// Package sessiontest provides test doubles for sessions: a fake clock whose
// timers fire only when the test advances it.
package sessiontest

import (
	"sort"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/session"
)

// Clock is a manual session.Clock. AfterFunc callbacks run synchronously
// inside Advance, in deadline order.
type Clock struct {
	mu     sync.Mutex // guards now and timers
	now    time.Time
	timers []*timer
}

type timer struct {
	c    *Clock
	at   time.Time
	f    func()
	dead bool
}

// NewClock returns a clock set to start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now implements session.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements session.Clock.
func (c *Clock) AfterFunc(d time.Duration, f func()) session.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Pending returns the number of armed timers.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.dead {
			n++
		}
	}
	return n
}

// Advance moves time forward by d and runs every timer now due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due []*timer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.dead:
		case !t.at.After(now):
			t.dead = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.dead
	t.dead = true
	return was
}
