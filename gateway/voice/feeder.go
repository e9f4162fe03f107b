package voice

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
)

// errListenBusy: no recogniser was free within voice.listen_wait_ms; the
// turn is answered as busy.
var errListenBusy = errors.New("voice: no recogniser free within voice.listen_wait_ms")

// feeder opens a turn's listen session and hands it the turn's frames on
// its own goroutine, so that neither a recogniser that is slow to start (the
// router waits for a pooled decoder) nor one slow to decode ever holds up the
// media loop, which must keep the jitter buffer drained on time. The media
// loop only appends to a queue and reads the partial hypothesis the feeder
// last stored: it never takes a lock the recogniser holds while it decodes.
// The queue is bounded by the turn detector's max_turn_ms: a turn ends
// before it grows further.
//
// The listen may wait at most the turn's listen wait for a recogniser; the
// turn's priority (a session whose safety level is raised) puts it at the
// front of the embedded recogniser's queue.
type feeder struct {
	done chan struct{} // closed when every queued frame was written (or the listen failed)

	aborted atomic.Bool                // hang-up: queued frames are dropped, not recognised
	written atomic.Int64               // frames given to the recogniser (tests)
	part    atomic.Pointer[fedPartial] // the recogniser's partial after the last batch
	askNow  atomic.Bool                // take a hypothesis after the next batch (askPartial)
	waited  atomic.Int64               // ns from start to the recogniser open (or giving up)
	opened  time.Time                  // when the recogniser opened (read after done)
	ls      atomic.Pointer[router.ListenSession]

	mu     sync.Mutex // mu guards the fields below
	cond   *sync.Cond
	frames [][]int16
	closed bool
	err    error // the listen could not be opened (errListenBusy: none free in time)
}

// listenOptions bound and order a turn's wait for a recogniser.
type listenOptions struct {
	wait     time.Duration // 0: as long as the router waits
	priority sphinx.Priority
	clock    clock.Clock // nil: the wall clock
	pressure *pressure   // told when the wait starts and ends; nil: nobody
	load     *talkLoad   // told when the turn starts; nil: nobody
	talker   *talker     // the session's talk in load
}

// newFeeder opens the listen session with l and starts feeding it.
func newFeeder(ctx context.Context, l Listener, req router.ListenRequest, o listenOptions) *feeder {
	f := &feeder{done: make(chan struct{})}
	f.cond = sync.NewCond(&f.mu)
	go f.run(ctx, l, req, o)
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

// fedPartial is a partial and, once a hypothesis was asked for
// (askPartial), the frames written when the last such one was taken: the
// current partial has heard at least those.
type fedPartial struct {
	text        string
	askedFrames int64
}

// partial is the recogniser's hypothesis as of the last batch it was fed
// ("" before it opened), and the frames the last asked-for hypothesis had
// heard (0: none). It takes no lock.
func (f *feeder) partial() (string, int64) {
	if p := f.part.Load(); p != nil {
		return p.text, p.askedFrames
	}
	return "", 0
}

// askPartial asks for a hypothesis over everything written once the batch
// in progress is written, instead of the recogniser's next periodic one
// (the end-of-turn decision of a pause waits on it).
func (f *feeder) askPartial() { f.askNow.Store(true) }

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
// session (which the caller must Close), or why it could not be opened
// (errListenBusy when no recogniser was free within the wait).
func (f *feeder) result() (*router.ListenSession, error) {
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ls.Load(), f.err
}

// open waits for a recogniser, at most o.wait.
func (f *feeder) open(ctx context.Context, l Listener, req router.ListenRequest, o listenOptions) (*router.ListenSession, error) {
	if o.clock == nil {
		o.clock = clock.Real{}
	}
	lctx, cancel := context.WithCancelCause(sphinx.WithPriority(ctx, o.priority))
	defer cancel(nil)
	if o.wait > 0 {
		t := o.clock.AfterFunc(o.wait, func() { cancel(errListenBusy) })
		defer t.Stop()
	}
	start := o.clock.Now()
	o.pressure.begin(f, start)
	o.load.started(o.talker, start)
	ls, err := l.Listen(lctx, req)
	f.opened = o.clock.Now()
	f.waited.Store(int64(f.opened.Sub(start)))
	if err != nil && ctx.Err() == nil && (errors.Is(context.Cause(lctx), errListenBusy) || allTTFT(err)) {
		err = errListenBusy
	}
	o.pressure.end(f, o.clock.Now(), errors.Is(err, errListenBusy))
	return ls, err
}

// allTTFT: the router gave up on every model of the slot for want of a
// recogniser in its own budget (router ttft_ms below listen_wait_ms).
func allTTFT(err error) bool {
	var nm *router.NoModelError
	if !errors.As(err, &nm) || len(nm.Attempts) == 0 {
		return false
	}
	for _, a := range nm.Attempts {
		if a.Kind != router.KindTTFT {
			return false
		}
	}
	return true
}

func (f *feeder) run(ctx context.Context, l Listener, req router.ListenRequest, o listenOptions) {
	defer close(f.done)
	ls, err := f.open(ctx, l, req, o)
	f.mu.Lock()
	f.err = err
	if err != nil {
		f.frames = nil
	}
	f.mu.Unlock()
	if err != nil {
		return
	}
	f.ls.Store(ls)
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
		if len(batch) > 0 {
			fp := fedPartial{}
			if old := f.part.Load(); old != nil {
				fp.askedFrames = old.askedFrames
			}
			if f.askNow.Swap(false) {
				fp.text, fp.askedFrames = ls.PartialNow(), f.written.Load()
			} else {
				fp.text = ls.Partial()
			}
			f.part.Store(&fp)
		}
		if (closed && len(batch) == 0) || f.aborted.Load() {
			return
		}
	}
}
