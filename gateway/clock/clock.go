// Package clock is the gateway's one source of time, in tailscale's
// tstime.Clock shape: every gateway package that reads the time or waits
// takes a Clock, production passes Real, and tests pass the fake in
// gateway/clock/clocktest, whose timers fire only when the test advances
// it. Business logic never calls time.Now directly.
//
// safety, glasses and audio do not import gateway: they take a
// func() time.Time (or a one-method interface of their own), which a
// Clock's Now method value satisfies. Media pacing (the RTP sender's
// 20 ms ticker) stays on the wall clock: it paces real packets.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Since is Now().Sub(t).
	Since(t time.Time) time.Duration
	// NewTimer returns a timer that sends the time on its channel once d
	// has passed.
	NewTimer(d time.Duration) (Timer, <-chan time.Time)
	// NewTicker returns a ticker that sends the time on its channel every
	// d, dropping ticks a slow reader misses (as time.Ticker does).
	NewTicker(d time.Duration) (Ticker, <-chan time.Time)
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending NewTimer or AfterFunc.
type Timer interface {
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
	// Reset re-arms the timer to fire d from now; it reports whether the
	// timer was still pending.
	Reset(d time.Duration) bool
}

// Ticker is a running NewTicker.
type Ticker interface {
	Stop()
	Reset(d time.Duration)
}

// Real is the wall clock.
type Real struct{}

var _ Clock = Real{}

// Now implements Clock.
func (Real) Now() time.Time { return time.Now() }

// Since implements Clock.
func (Real) Since(t time.Time) time.Duration { return time.Since(t) }

// NewTimer implements Clock.
func (Real) NewTimer(d time.Duration) (Timer, <-chan time.Time) {
	t := time.NewTimer(d)
	return t, t.C
}

// NewTicker implements Clock.
func (Real) NewTicker(d time.Duration) (Ticker, <-chan time.Time) {
	t := time.NewTicker(d)
	return t, t.C
}

// AfterFunc implements Clock.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// OrReal returns c, or Real when c is nil, for packages whose Clock option
// is optional.
func OrReal(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Sleep waits d on c or until ctx ends, whichever is first; it returns
// ctx's cause when ctx ended first (or at once when d <= 0 and ctx is done).
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return context.Cause(ctx)
	}
	t, ch := c.NewTimer(d)
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		t.Stop()
		return context.Cause(ctx)
	}
}
