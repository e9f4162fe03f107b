package voice

import (
	"sync"

	"github.com/veraneural/vera-gateway/gateway/router"
)

// feeder hands a turn's frames to the recogniser on its own goroutine, so
// that a slow recogniser never holds up the media loop (which must keep the
// jitter buffer drained on time). The queue is bounded by the turn detector's
// max_turn_ms: a turn ends before it grows further.
type feeder struct {
	ls   *router.ListenSession
	done chan struct{}

	mu     sync.Mutex // mu guards frames and closed
	cond   *sync.Cond
	frames [][]int16
	closed bool
}

func newFeeder(ls *router.ListenSession) *feeder {
	f := &feeder{ls: ls, done: make(chan struct{})}
	f.cond = sync.NewCond(&f.mu)
	go f.run()
	return f
}

// write queues a copy of frame.
func (f *feeder) write(frame []int16) {
	c := append([]int16(nil), frame...)
	f.mu.Lock()
	f.frames = append(f.frames, c)
	f.mu.Unlock()
	f.cond.Signal()
}

// close ends the turn: the goroutine writes what is queued and exits.
func (f *feeder) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.cond.Signal()
}

func (f *feeder) run() {
	defer close(f.done)
	for {
		f.mu.Lock()
		for len(f.frames) == 0 && !f.closed {
			f.cond.Wait()
		}
		batch := f.frames
		f.frames = nil
		closed := f.closed
		f.mu.Unlock()
		for _, fr := range batch {
			if err := f.ls.Write(fr); err != nil {
				break
			}
		}
		if closed && len(batch) == 0 {
			return
		}
	}
}
