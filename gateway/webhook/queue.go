package webhook

import (
	"container/heap"
	"sync"
	"time"
)

// queueKey names one delivery queue: a partner's endpoint. Each has its
// own pending cap and its own sender, so a slow or failing endpoint delays
// only itself.
type queueKey struct{ partner, url string }

// item is a pending delivery as its queue schedules it; the body stays in
// the store until the attempt.
type item struct {
	seq uint64
	at  time.Time
}

// queue is one endpoint's pending deliveries: those due now, oldest first,
// and those waiting for a retry, soonest first. A delivery waiting for its
// retry does not hold back newer events.
type queue struct {
	key  queueKey
	ep   Endpoint
	wake chan struct{} // a new delivery is due

	mu    sync.Mutex // mu guards due and later
	due   seqHeap
	later timeHeap
}

func newQueue(k queueKey, ep Endpoint) *queue {
	return &queue{key: k, ep: ep, wake: make(chan struct{}, 1)}
}

// push schedules it: due now, or later.
func (q *queue) push(it item, now time.Time) {
	q.mu.Lock()
	if it.at.After(now) {
		heap.Push(&q.later, it)
	} else {
		heap.Push(&q.due, it)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next pops the oldest delivery due at now; otherwise it returns how long
// until the next retry is due (0 when nothing waits).
func (q *queue) next(now time.Time) (item, bool, time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.later) > 0 && !q.later[0].at.After(now) {
		heap.Push(&q.due, heap.Pop(&q.later))
	}
	if len(q.due) > 0 {
		return heap.Pop(&q.due).(item), true, 0
	}
	if len(q.later) > 0 {
		return item{}, false, q.later[0].at.Sub(now)
	}
	return item{}, false, 0
}

// seqHeap orders items by sequence (age).
type seqHeap []item

func (h seqHeap) Len() int           { return len(h) }
func (h seqHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h seqHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *seqHeap) Push(x any)        { *h = append(*h, x.(item)) }
func (h *seqHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// timeHeap orders items by due time, then age.
type timeHeap []item

func (h timeHeap) Len() int { return len(h) }
func (h timeHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *timeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
