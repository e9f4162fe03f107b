//go:build !noembedded

package sphinx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// newSizedPool is a pool of size decoders plus reserve for raised turns.
func newSizedPool(t *testing.T, size, reserve int) *Pool {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Pool, cfg.SafetyReserve = size, reserve
	if _, err := os.Stat(cfg.HMM); err != nil {
		t.Skipf("pocketsphinx-en-us model not installed (%v)", err)
	}
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waitQueued polls until n acquirers are queued (a hang guard, not a timing
// assertion).
func waitQueued(t *testing.T, p *Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for p.Stats().Waiting != n {
		if time.Now().After(deadline) {
			t.Fatalf("queued acquirers: %d, want %d", p.Stats().Waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}

type acquired struct {
	who string
	d   *Decoder
	err error
}

func acquireAsync(p *Pool, ctx context.Context, who string, out chan<- acquired) {
	go func() {
		d, err := p.Acquire(ctx)
		out <- acquired{who, d, err}
	}()
}

// A turn of a session with raised safety queued behind an ordinary one
// gets the next decoder first.
func TestPoolRaisedJumpsQueue(t *testing.T) {
	p := newSizedPool(t, 1, 0)
	held, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan acquired, 2)
	acquireAsync(p, context.Background(), "normal", got)
	waitQueued(t, p, 1)
	acquireAsync(p, WithPriority(context.Background(), PriorityRaised), "raised", got)
	waitQueued(t, p, 2)
	p.Release(held)
	first := <-got
	if first.err != nil || first.who != "raised" {
		t.Fatalf("first served: %s (%v), want the raised turn", first.who, first.err)
	}
	p.Release(first.d)
	second := <-got
	if second.err != nil || second.who != "normal" {
		t.Fatalf("second served: %s (%v), want the ordinary turn", second.who, second.err)
	}
	p.Release(second.d)
}

// The safety reserve serves a raised turn at once on a pool full of
// ordinary turns, and is not handed to ordinary ones.
func TestPoolSafetyReserve(t *testing.T) {
	p := newSizedPool(t, 1, 1)
	d1, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raised, err := p.Acquire(WithPriority(context.Background(), PriorityRaised))
	if err != nil {
		t.Fatalf("raised turn on a full pool with a reserve: %v", err)
	}
	if raised == d1 {
		t.Fatal("the reserve handed out a decoder already in use")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if d, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		p.Release(d)
		t.Fatalf("ordinary turn beyond the pool: got %v, want to wait until its deadline", err)
	}
	// A released reserve decoder does not let an ordinary turn past Pool.
	got := make(chan acquired, 1)
	acquireAsync(p, context.Background(), "normal", got)
	waitQueued(t, p, 1)
	p.Release(raised)
	if st := p.Stats(); st.Waiting != 1 || st.Busy != 1 {
		t.Fatalf("after the reserve came back: %+v, want 1 busy and the ordinary turn still queued", st)
	}
	p.Release(d1)
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	p.Release(a.d)
}

func TestPoolCloseWakesWaiters(t *testing.T) {
	p := newSizedPool(t, 1, 0)
	d, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan acquired, 1)
	acquireAsync(p, context.Background(), "normal", got)
	waitQueued(t, p, 1)
	p.Close()
	if a := <-got; !errors.Is(a.err, ErrClosed) {
		t.Fatalf("queued acquire at close: %v, want ErrClosed", a.err)
	}
	p.Release(d) // frees it, and the workers with the pool's last decoder
}

// threadNice reads a thread's nice value from /proc.
func threadNice(tid int) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc/self/task", strconv.Itoa(tid), "stat"))
	if err != nil {
		return 0, err
	}
	// Fields after the ")" that ends the command name; nice is field 19.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return strconv.Atoi(f[16])
}

// The workers decode on threads of lowered priority; the caller's thread
// keeps its own.
func TestWorkersRunNiced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread nice is Linux-only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base, err := threadNice(syscall.Gettid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	cfg := DefaultConfig()
	cfg.Pool, cfg.SafetyReserve, cfg.Nice = 1, 0, 10
	if _, err := os.Stat(cfg.HMM); err != nil {
		t.Skipf("pocketsphinx-en-us model not installed (%v)", err)
	}
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w := p.work
	if int(w.niced.Load()) != w.n {
		t.Fatalf("%d of %d worker threads niced", w.niced.Load(), w.n)
	}
	var workerNice int
	var werr error
	w.do(newJob(func() { workerNice, werr = threadNice(syscall.Gettid()) }))
	if werr != nil {
		t.Fatal(werr)
	}
	if want := min(19, base+w.nice); workerNice != want {
		t.Fatalf("worker thread nice %d, want %d (process %d + %d)", workerNice, want, base, w.nice)
	}
	if got, _ := threadNice(syscall.Gettid()); got != base {
		t.Fatalf("caller's thread nice changed to %d from %d", got, base)
	}
	// Threads the runtime starts while a worker runs (here: to run the
	// goroutines a job wakes) must not inherit its priority.
	var wg sync.WaitGroup
	for range 64 {
		w.do(newJob(func() {
			for range 8 {
				wg.Go(func() { time.Sleep(time.Millisecond) })
			}
		}))
	}
	wg.Wait()
	// Worker threads of pools closed by earlier tests end just after their
	// goroutines, so the count may need a moment to settle.
	var niced, tasks int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		niced, tasks = nicedThreads(base)
		if niced == w.n || time.Now().After(deadline) {
			break
		}
	}
	if niced != w.n {
		t.Fatalf("%d threads of %d run niced, want only the %d workers", niced, tasks, w.n)
	}
}

// nicedThreads counts this process's threads whose nice is above base.
func nicedThreads(base int) (niced, all int) {
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, e := range tasks {
		tid, _ := strconv.Atoi(e.Name())
		if n, err := threadNice(tid); err == nil && n > base {
			niced++
		}
	}
	return niced, len(tasks)
}
