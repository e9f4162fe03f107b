package voice

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/veraneural/vera-gateway/gateway/router"
)

// feeder opens a turn's listen session and hands it the turn's frames on
// its own goroutine, so that neither a recogniser that is slow to start (the
// router waits for a pooled decoder) nor one slow to decode ever holds up the
// media loop, which must keep the jitter buffer drained on time. The queue is
// bounded by the turn detector's max_turn_ms: a turn ends before it grows
// further.
type feeder struct {
	done chan struct{} // closed when every queued frame was written (or the listen failed)

	aborted atomic.Bool  // hang-up: queued frames are dropped, not recognised
	written atomic.Int64 // frames given to the recogniser (tests)

	mu     sync.Mutex // mu guards the fields below
	cond   *sync.Cond
	frames [][]int16
	closed bool
	ls     *router.ListenSession // nil until opened
	err    error                 // the listen could not be opened
}

// newFeeder opens the listen session with l and starts feeding it.
func newFeeder(ctx context.Context, l Listener, req router.ListenRequest) *feeder {
	f := &feeder{done: make(chan struct{})}
	f.cond = sync.NewCond(&f.mu)
	go f.run(ctx, l, req)
	return f
}

// write queues a copy of frame.
func (f *feeder) write(frame []int16) {
	c := append([]int16(nil), frame...)
	f.mu.Lock()
	if f.err == nil {
		f.frames = append(f.frames, c)
	}
	f.mu.Unlock()
	f.cond.Signal()
}

// partial is the recogniser's hypothesis so far ("" before it opened).
func (f *feeder) partial() string {
	f.mu.Lock()
	ls := f.ls
	f.mu.Unlock()
	if ls == nil {
		return ""
	}
	return ls.Partial()
}

// close ends the turn: the goroutine writes what is queued and exits.
func (f *feeder) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.cond.Signal()
}

// abort ends the turn without recognising what is still queued: a hang-up
// must not wait for the recogniser to work through audio nobody will read.
func (f *feeder) abort() {
	f.aborted.Store(true)
	f.mu.Lock()
	f.closed = true
	f.frames = nil
	f.mu.Unlock()
	f.cond.Signal()
}

// result waits until every frame was written and returns the listen
// session (which the caller must Close), or why it could not be opened.
func (f *feeder) result() (*router.ListenSession, error) {
	<-f.done
	return f.ls, f.err
}

func (f *feeder) run(ctx context.Context, l Listener, req router.ListenRequest) {
	defer close(f.done)
	ls, err := l.Listen(ctx, req)
	f.mu.Lock()
	f.ls, f.err = ls, err
	if err != nil {
		f.frames = nil
	}
	f.mu.Unlock()
	if err != nil {
		return
	}
	failed := false
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
			if failed {
				break
			}
			if f.aborted.Load() { // an atomic load: cheap beside a frame of decoding
				break
			}
			f.written.Add(1)
			if err := ls.Write(fr); err != nil {
				failed = true // Final reports the recogniser's error
			}
		}
		if (closed && len(batch) == 0) || f.aborted.Load() {
			return
		}
	}
}
