package webhook

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// RetryIntervals are the waits before the second, third and fourth attempt.
// After the fourth attempt fails the delivery is recorded as failed.
var RetryIntervals = [...]time.Duration{time.Second, 10 * time.Second, time.Minute}

// Schedule is the delivery BackOff: exactly RetryIntervals, then
// backoff.Stop. No jitter: partners are told these intervals.
type Schedule struct{ n int }

var _ backoff.BackOff = (*Schedule)(nil)

// NextBackOff implements backoff.BackOff.
func (s *Schedule) NextBackOff() time.Duration {
	if s.n >= len(RetryIntervals) {
		return backoff.Stop
	}
	d := RetryIntervals[s.n]
	s.n++
	return d
}

// Reset implements backoff.BackOff.
func (s *Schedule) Reset() { s.n = 0 }

// afterAttempts returns the wait after the given number of failed attempts
// (1-based), or backoff.Stop. The schedule is replayed so a delivery reloaded
// from the store continues where it left off.
func afterAttempts(b backoff.BackOff, attempts int) time.Duration {
	b.Reset()
	d := backoff.Stop
	for range attempts {
		d = b.NextBackOff()
		if d == backoff.Stop {
			break
		}
	}
	return d
}
