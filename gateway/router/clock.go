package router

import (
	"context"
	"time"
)

// Clock is the router's source of time: TTFT and model deadlines, backoff
// sleeps and breaker cool-downs all go through it so tests run on a fake.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not happened; it reports whether it did.
	Stop() bool
}

// wallClock is the real clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// sleep waits d on clk or until ctx ends, whichever is first.
func sleep(ctx context.Context, clk Clock, d time.Duration) error {
	if d <= 0 {
		return context.Cause(ctx)
	}
	done := make(chan struct{})
	t := clk.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		t.Stop()
		return context.Cause(ctx)
	}
}
