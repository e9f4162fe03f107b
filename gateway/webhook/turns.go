package webhook

import (
	"fmt"
	"sync"
)

// Turn outcomes of turn_finished.
const (
	OutcomeCompleted   = "completed"
	OutcomeCancelled   = "cancelled"
	OutcomeInterrupted = "interrupted"
	OutcomeFailed      = "failed"
)

// TurnReporter turns finished turns into turn_finished events: it counts
// each session's turns and publishes through a Dispatcher. cmd calls
// Finished from the session's TurnObserver (ReplyDone) and Forget from
// Deps.OnClosed.
type TurnReporter struct {
	d *Dispatcher

	mu    sync.Mutex // mu guards turns
	turns map[string]int
}

// NewTurnReporter returns a reporter publishing through d.
func NewTurnReporter(d *Dispatcher) *TurnReporter {
	return &TurnReporter{d: d, turns: map[string]int{}}
}

// Finished publishes one turn_finished for partner. t.Turns is filled in
// (the session's count, this turn included); prompt and reply must hold no
// tool calls or thinking, and prompt is empty for a spawned turn.
func (r *TurnReporter) Finished(partner string, t TurnFinished) error {
	switch t.Outcome {
	case OutcomeCompleted, OutcomeCancelled, OutcomeInterrupted, OutcomeFailed:
	default:
		return fmt.Errorf("webhook: turn outcome %q is not one of completed, cancelled, interrupted, failed", t.Outcome)
	}
	if t.Spawned {
		t.Prompt = ""
	}
	r.mu.Lock()
	r.turns[t.SessionID]++
	t.Turns = r.turns[t.SessionID]
	r.mu.Unlock()
	ev, err := NewEvent(TypeTurnFinished, r.d.clock.Now(), t)
	if err != nil {
		return err
	}
	_, err = r.d.Publish(partner, ev)
	return err
}

// Forget drops a closed session's turn count.
func (r *TurnReporter) Forget(sessionID string) {
	r.mu.Lock()
	delete(r.turns, sessionID)
	r.mu.Unlock()
}
