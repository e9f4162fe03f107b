package router

import (
	"sync"
	"time"
)

// BreakerState is the state of a model's circuit breaker; its value is the
// breaker_state gauge.
type BreakerState int

const (
	BreakerClosed   BreakerState = 0 // requests pass
	BreakerHalfOpen BreakerState = 1 // one probe may pass
	BreakerOpen     BreakerState = 2 // requests are skipped until the cool-down ends
)

func (s BreakerState) String() string {
	switch s {
	case BreakerHalfOpen:
		return "half_open"
	case BreakerOpen:
		return "open"
	}
	return "closed"
}

// breaker opens after `failures` consecutive failures, lets one probe
// through after `cooldown`, closes on the probe's success and reopens on
// its failure.
type breaker struct {
	failures int
	cooldown time.Duration
	onChange func(BreakerState)

	mu       sync.Mutex // mu guards the fields below
	state    BreakerState
	streak   int
	openedAt time.Time
	probing  bool
}

func newBreaker(failures int, cooldown time.Duration, onChange func(BreakerState)) *breaker {
	b := &breaker{failures: failures, cooldown: cooldown, onChange: onChange}
	b.onChange(BreakerClosed)
	return b
}

// allow reports whether a request may go to the model now.
func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerClosed:
		return true
	case BreakerOpen:
		if now.Sub(b.openedAt) < b.cooldown {
			return false
		}
		b.set(BreakerHalfOpen)
		b.probing = true
		return true
	default: // half-open: only the one probe
		if b.probing {
			return false
		}
		b.probing = true
		return true
	}
}

// record notes the outcome of a request that allow let through. Outcomes
// that say nothing about the model's health (ok == nil) only end a probe.
func (b *breaker) record(now time.Time, ok *bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok == nil {
		b.probing = false
		return
	}
	if *ok {
		b.streak = 0
		b.probing = false
		if b.state != BreakerClosed {
			b.set(BreakerClosed)
		}
		return
	}
	b.streak++
	b.probing = false
	if b.state == BreakerHalfOpen || b.streak >= b.failures {
		b.openedAt = now
		b.set(BreakerOpen)
	}
}

func (b *breaker) snapshot() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

func (b *breaker) set(s BreakerState) {
	b.state = s
	b.onChange(s)
}

// peek reports whether allow would let a request through now, without
// taking the half-open probe.
func (b *breaker) peek(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerOpen:
		return now.Sub(b.openedAt) >= b.cooldown
	case BreakerHalfOpen:
		return !b.probing
	}
	return true
}
