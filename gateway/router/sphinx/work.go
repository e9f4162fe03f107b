package sphinx

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The decoders' CPU-heavy calls (pocketsphinx's frame processing, end of
// utterance, hypothesis and model loading) do not run on the caller's
// goroutine but on a few worker goroutines, each locked to its own OS
// thread whose scheduling priority is lowered (nice). Go runs a cgo call on
// an OS thread of its own; with one such thread per live turn, a dozen
// turns took every core from the media goroutines (frame p99 137 ms at 200
// talking sessions). Bounded to Config.Workers threads (by default one
// fewer than GOMAXPROCS) that the kernel schedules after the media threads,
// decoding never takes more than those cores, and never from the media path
// when it wants them. Threads the runtime creates on behalf of a locked
// thread come from its template thread, so the lowered priority stays on
// the workers.

// job is one call handed to a worker. Its owner, one decoder used by one
// goroutine at a time, reuses it for every call.
type job struct {
	run  func() // set once by the owner: reads and writes the owner's fields
	prio Priority
	done chan struct{} // 1-buffered
}

func newJob(run func()) *job { return &job{run: run, done: make(chan struct{}, 1)} }

// workers runs jobs, raised priority first.
type workers struct {
	n, nice      int
	high, normal chan *job
	quit         chan struct{}
	wg           sync.WaitGroup
	niced        atomic.Int32 // threads whose priority was lowered
}

func startWorkers(n, nice int) *workers {
	w := &workers{n: n, nice: nice, high: make(chan *job), normal: make(chan *job), quit: make(chan struct{})}
	w.wg.Add(n)
	for range n {
		go w.start()
	}
	return w
}

// start runs a worker off the process's main thread: a goroutine that ends
// locked ends its thread, except the main thread, which the runtime parks
// for good instead (at the workers' priority). On the main thread, this
// goroutine keeps it while the worker runs on another (the main thread,
// locked here, cannot run it) and gives it back afterwards.
func (w *workers) start() {
	runtime.LockOSThread()
	if !onMainThread() {
		w.loop()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.loop()
	}()
	<-done
	runtime.UnlockOSThread()
}

// do runs j on a worker and waits for it. Callers queue on the channel
// send, in arrival order within a priority.
func (w *workers) do(j *job) {
	q := w.normal
	if j.prio >= PriorityRaised {
		q = w.high
	}
	q <- j
	<-j.done
}

func (w *workers) loop() {
	defer w.wg.Done()
	// Never unlocked: when the goroutine returns, the runtime ends the
	// thread, and its lowered priority with it.
	runtime.LockOSThread()
	if w.nice > 0 && lowerThreadPriority(w.nice) == nil {
		w.niced.Add(1)
	}
	for {
		var j *job
		select {
		case j = <-w.high:
		default:
			select {
			case j = <-w.high:
			case j = <-w.normal:
			case <-w.quit:
				return
			}
		}
		j.run()
		j.done <- struct{}{}
	}
}

func (w *workers) stop() {
	close(w.quit)
	w.wg.Wait()
}

// shared is the process's one set of workers: the transcription and the
// spotter pools decode on the same cores, so they share the bound. It
// starts with the first pool (its Config's Workers and Nice) and stops
// when the last pool has closed and freed its decoders.
var shared struct {
	mu   sync.Mutex
	w    *workers
	refs int
}

func acquireWorkers(n, nice int) *workers {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.w == nil {
		shared.w = startWorkers(n, nice)
	}
	shared.refs++
	return shared.w
}

func releaseWorkers() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.refs--
	if shared.refs == 0 {
		shared.w.stop()
		shared.w = nil
	}
}

// defaultWorkers leaves one of GOMAXPROCS to the media path (at least one
// worker).
func defaultWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }
