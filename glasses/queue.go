package glasses

import (
	"fmt"
	"sync"
	"time"
)

// Queue orders the cards bound for one device connection.
//
//   - Safety cards are released immediately, in arrival order, whatever the
//     throttle; they are never coalesced, replaced or dropped.
//   - While a safety card is shown (until Dismiss), no other card is
//     released: prompts and info queue behind it, captions are held and
//     keep coalescing.
//   - Captions coalesce per card id (last text wins) and, like prompts and
//     info, are released at most once per update throttle.
//
// Queue starts no goroutines: the session calls Next when Wait says a card
// is due (time comes from the injected clock). Safe for concurrent use.
type Queue struct {
	throttle time.Duration
	now      func() time.Time

	mu       sync.Mutex // mu guards the fields below
	safety   []Card     // pending safety cards, FIFO
	active   []string   // ids of safety cards shown and not dismissed
	others   []Card     // prompts and info, FIFO
	captions []Card     // pending captions, one per id, latest text
	lastSent time.Time
	sentAny  bool
}

// NewQueue returns a queue for a device with the given update throttle
// (devices.Profile.UpdateThrottleMS). now is the clock; nil means time.Now.
func NewQueue(throttle time.Duration, now func() time.Time) *Queue {
	if now == nil {
		now = time.Now
	}
	return &Queue{throttle: max(throttle, 0), now: now}
}

// Push enqueues a card. Cards must validate; a safety card needs an id so
// it can be dismissed.
func (q *Queue) Push(c Card) error {
	if err := c.Validate(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch c.Kind {
	case KindSafety:
		if c.ID == "" {
			return fmt.Errorf("glasses: queue: safety card needs an id: %w", ErrInvalidCard)
		}
		q.safety = append(q.safety, c)
	case KindCaption:
		for i := range q.captions {
			if q.captions[i].ID == c.ID {
				q.captions[i] = c // coalesce: latest text wins
				return nil
			}
		}
		q.captions = append(q.captions, c)
	default:
		q.others = append(q.others, c)
	}
	return nil
}

// Next returns the card to send now, if any.
func (q *Queue) Next() (Card, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	if len(q.safety) > 0 {
		c := q.safety[0]
		q.safety = q.safety[1:]
		q.active = append(q.active, c.ID)
		q.lastSent, q.sentAny = now, true
		return c, true
	}
	if len(q.active) > 0 || (q.sentAny && now.Sub(q.lastSent) < q.throttle) {
		return Card{}, false
	}
	var c Card
	switch {
	case len(q.others) > 0:
		c, q.others = q.others[0], q.others[1:]
	case len(q.captions) > 0:
		c, q.captions = q.captions[0], q.captions[1:]
	default:
		return Card{}, false
	}
	q.lastSent, q.sentAny = now, true
	return c, true
}

// Wait is how long until Next will release a card: 0 when one is due now,
// and ok=false when nothing can be released until Push or Dismiss.
func (q *Queue) Wait() (d time.Duration, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.safety) > 0 {
		return 0, true
	}
	if len(q.active) > 0 || (len(q.others) == 0 && len(q.captions) == 0) {
		return 0, false
	}
	if !q.sentAny {
		return 0, true
	}
	return max(q.throttle-q.now().Sub(q.lastSent), 0), true
}

// Dismiss records that the person closed the safety card id; held cards
// become releasable once no safety card is shown.
func (q *Queue) Dismiss(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, a := range q.active {
		if a == id {
			q.active = append(q.active[:i], q.active[i+1:]...)
			return
		}
	}
}

// SafetyActive reports whether a safety card is being shown.
func (q *Queue) SafetyActive() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.active) > 0 || len(q.safety) > 0
}
