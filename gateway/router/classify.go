package router

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/safety"
)

// DefaultClassifyBudget is how long a turn's reply waits for the safety
// slot when the caller's configuration (safety.classify_budget_ms) says
// nothing.
const DefaultClassifyBudget = 300 * time.Millisecond

// Outcomes of one classifier call: the "outcome" label of
// vera_safety_classifier_total.
const (
	OutcomeOK          = "ok"           // answered within the caller's budget
	OutcomeLate        = "late"         // answered after the budget passed (a late detection if it raises the level)
	OutcomeOverBudget  = "over_budget"  // stopped unanswered after the budget passed
	OutcomeTimeout     = "timeout"      // the model's timeout_ms ran out
	OutcomeError       = "error"        // HTTP or connection failure
	OutcomeMalformed   = "malformed"    // an answer that is not the expected shape
	OutcomeBreakerOpen = "breaker_open" // skipped: circuit breaker open
	OutcomeCanceled    = "canceled"     // the caller stopped it before the budget passed
)

// Verdict is the safety slot's judgment of one user turn: the highest level
// any classifier gave. A classifier that is slow, fails or answers out of
// form adds nothing, so it never lowers a level: merge the verdict with the
// local detector's and the engine's, never-downgrade.
type Verdict struct {
	Level safety.Level
	// Reasons are the ids behind the verdict, "<model>:<category>" (e.g.
	// "mod:self-harm/intent", "guard:S11"), sorted. Only configured names
	// appear: never user text, never a classifier's free text.
	Reasons []string
	// Answered, Pending and Failed count the slot's models: answered,
	// still running when the verdict was taken, failed or skipped.
	Answered, Pending, Failed int
}

// Classification is the safety slot at work on one turn. Its calls run in
// their own goroutines, owned by it: Stop cancels and joins them, and each
// ends on its own within its model's timeout_ms. Safe for concurrent use.
type Classification struct {
	clock  clock.Clock
	cancel context.CancelCauseFunc // nil for the idle classification
	done   chan struct{}
	// reached[0] closes when the verdict reaches elevated, reached[1]
	// crisis.
	reached [2]chan struct{}

	mu         sync.Mutex // mu guards v and overBudget
	v          Verdict
	overBudget bool // the caller's budget passed (or was 0) with calls pending
}

// idleClassification is what StartClassify returns when there is nothing
// to do (no safety slot, blank text): done, level none, no allocation.
var idleClassification = func() *Classification {
	c := &Classification{done: make(chan struct{})}
	close(c.done)
	return c
}()

// errClassifyStopped is the cause the calls of a stopped classification see.
var errClassifyStopped = errors.New("router: classification stopped")

// StartClassify sends text, the user's turn and nothing else (no ids, no
// history), to every model of the safety slot at once and returns at once.
// With no safety slot configured, or blank text, it returns a finished
// classification of level none at no cost (shared, allocation-free).
// ctx bounds the calls.
func (r *Router) StartClassify(ctx context.Context, text string) *Classification {
	if len(r.classifiers) == 0 || strings.TrimSpace(text) == "" {
		return idleClassification
	}
	cctx, cancel := context.WithCancelCause(ctx)
	c := &Classification{clock: r.clock, cancel: cancel, done: make(chan struct{}),
		reached: [2]chan struct{}{make(chan struct{}), make(chan struct{})}}
	c.v.Pending = len(r.classifiers)
	for _, m := range r.classifiers {
		go func() {
			level, reasons, outcome := r.classifyOne(cctx, m, text)
			c.record(r, m, level, reasons, outcome)
		}()
	}
	return c
}

// Classify is StartClassify then Wait(budget), then Stop: the verdict known
// when every classifier has answered, one says crisis, or budget has passed
// on the router's clock, whichever is first. Classifiers still running
// then are stopped (counted over_budget). The error is non-nil only when
// ctx ended first. With no safety slot it returns level none at once.
func (r *Router) Classify(ctx context.Context, text string, budget time.Duration) (Verdict, error) {
	if len(r.classifiers) == 0 {
		return Verdict{}, nil // no safety slot: the turn pays nothing
	}
	c := r.StartClassify(ctx, text)
	v := c.Wait(budget)
	c.Stop()
	if ctx.Err() != nil {
		return v, context.Cause(ctx)
	}
	return v, nil
}

// Wait returns the verdict once every classifier has finished, one has
// said crisis (nothing can raise it further), or budget has passed on the
// router's clock. It never waits longer than budget; budget <= 0 returns
// the verdict so far at once. Answers that arrive after the budget passed
// still raise the verdict (see Reached, Verdict) and count as late.
func (c *Classification) Wait(budget time.Duration) Verdict {
	select {
	case <-c.done:
		return c.Verdict()
	default:
	}
	expired := budget <= 0
	if !expired {
		fired := make(chan struct{})
		t := c.clock.AfterFunc(budget, func() { close(fired) })
		select {
		case <-c.done:
		case <-c.reached[1]:
		case <-fired:
			expired = true
		}
		t.Stop()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if expired && c.v.Pending > 0 {
		c.overBudget = true
	}
	return c.snapshotLocked()
}

// Verdict returns the verdict so far; final once Done is closed.
func (c *Classification) Verdict() Verdict {
	if c == idleClassification {
		return Verdict{} // shared by every turn: no lock
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshotLocked()
}

func (c *Classification) snapshotLocked() Verdict {
	v := c.v
	v.Reasons = slices.Clone(c.v.Reasons)
	return v
}

// Done is closed once every classifier has answered, failed or stopped.
func (c *Classification) Done() <-chan struct{} { return c.done }

// Reached returns a channel closed as soon as the verdict reaches level
// (elevated or crisis); for none, a closed channel. It never closes if the
// level is not reached, so select on Done as well. This is how a late
// detection is noticed: wait on Reached(shown+1) while the reply streams.
func (c *Classification) Reached(level safety.Level) <-chan struct{} {
	switch level {
	case safety.LevelNone:
		return idleClassification.done
	case safety.LevelElevated:
		return c.reached[0]
	case safety.LevelCrisis:
		return c.reached[1]
	}
	return nil
}

// Stop cancels the calls still running and waits for them to return.
// Idempotent; the verdict stays readable.
func (c *Classification) Stop() {
	if c.cancel == nil {
		return
	}
	c.cancel(errClassifyStopped)
	<-c.done
}

// record folds one call's result into the verdict and counts it.
func (c *Classification) record(r *Router, m *model, level safety.Level, reasons []string, outcome string) {
	c.mu.Lock()
	switch {
	case outcome == OutcomeOK && c.overBudget:
		outcome = OutcomeLate
	case outcome == OutcomeCanceled && c.overBudget:
		outcome = OutcomeOverBudget
	}
	c.v.Pending--
	if outcome == OutcomeOK || outcome == OutcomeLate {
		c.v.Answered++
		if level > c.v.Level {
			for l := c.v.Level + 1; l <= level; l++ {
				close(c.reached[l-1])
			}
			c.v.Level = level
		}
		for _, rs := range reasons {
			if !slices.Contains(c.v.Reasons, rs) {
				c.v.Reasons = append(c.v.Reasons, rs)
			}
		}
		slices.Sort(c.v.Reasons)
	} else {
		c.v.Failed++
	}
	last := c.v.Pending == 0
	c.mu.Unlock()
	r.metrics.classifier.WithLabelValues(m.cfg.Name, outcome).Inc()
	if outcome != OutcomeOK && outcome != OutcomeLate {
		r.log.Debug("router: safety classifier", "model", m.cfg.Name, "outcome", outcome)
	}
	if last {
		c.cancel(nil)
		close(c.done)
	}
}

// classifyOne runs one classifier under its breaker and timeout_ms. No
// retries: a retry would land after the budget, and a late detection is
// worth less than a quick one.
func (r *Router) classifyOne(ctx context.Context, m *model, text string) (safety.Level, []string, string) {
	if !m.breaker.allow(r.clock.Now()) {
		r.metrics.skips.WithLabelValues(m.cfg.Name, m.cfg.Provider, string(KindBreakerOpen)).Inc()
		return safety.LevelNone, nil, OutcomeBreakerOpen
	}
	mctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	t := r.clock.AfterFunc(m.timeout, func() { cancel(errTimeout) })
	defer t.Stop()
	start := r.clock.Now()
	r.metrics.attempts.WithLabelValues(m.cfg.Name, m.cfg.Provider, SlotSafety).Inc()
	level, reasons, err := m.classify.classify(mctx, text)
	r.metrics.duration.WithLabelValues(m.cfg.Name, m.cfg.Provider).Observe(r.clock.Now().Sub(start).Seconds())
	if err == nil {
		ok := true
		m.breaker.record(r.clock.Now(), &ok)
		return level, reasons, OutcomeOK
	}
	if ctx.Err() != nil {
		m.breaker.record(r.clock.Now(), nil) // the caller's doing, not the model's
		return safety.LevelNone, nil, OutcomeCanceled
	}
	failed := false
	m.breaker.record(r.clock.Now(), &failed)
	kind, _ := classify(mctx, err)
	switch {
	case errors.Is(context.Cause(mctx), errTimeout):
		kind = KindTimeout
	case kind == KindCanceled:
		kind = KindInternal
	}
	r.metrics.failures.WithLabelValues(m.cfg.Name, m.cfg.Provider, string(kind)).Inc()
	switch kind {
	case KindTimeout:
		return safety.LevelNone, nil, OutcomeTimeout
	case KindProtocol:
		return safety.LevelNone, nil, OutcomeMalformed
	}
	return safety.LevelNone, nil, OutcomeError
}
