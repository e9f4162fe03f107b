package sphinx

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// Pool hands out decoders: at most Config.Pool to ordinary turns, and up
// to Config.SafetyReserve more to turns of raised priority (WithPriority).
// Decoders are created on demand up to that bound and reused; the first is
// created by NewPool so a bad model path fails at start-up. A full pool
// queues acquirers, raised priority first, then in arrival order. The
// decoders' heavy calls run on the process's shared workers (work.go).
type Pool struct {
	cfg  Config
	mk   func() (*Decoder, error)
	work *workers

	mu      sync.Mutex // mu guards the fields below
	closed  bool
	idle    []*Decoder
	made    int // decoders created or being created, and not yet freed
	busy    int // decoders handed out
	waiters []*waiter
}

// waiter is one Acquire queued on a full pool.
type waiter struct {
	prio Priority
	got  chan *Decoder // 1-buffered: the decoder handed over, or nil to retry
}

// Stats is a snapshot of a pool's use.
type Stats struct {
	Busy    int // decoders handed out
	Waiting int // acquirers queued
	Size    int // Config.Pool
}

// NewPool validates cfg and loads the first decoder.
func NewPool(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newPool(cfg, func() (*Decoder, error) { return newDecoder(cfg) })
}

// NewSpotPool validates cfg and loads the first key-phrase spotter: its
// decoders have the single search SearchSpot over cfg.Spot's phrases.
func NewSpotPool(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Spot.Validate(); err != nil {
		return nil, err
	}
	phrases := cfg.Spot.phrases()
	if cfg.Spot.KeyphraseFile != "" {
		b, err := os.ReadFile(cfg.Spot.KeyphraseFile)
		if err != nil {
			return nil, fmt.Errorf("sphinx.spot.keyphrase_file: %w", err)
		}
		if phrases, err = ParseKeyphrases(string(b)); err != nil {
			return nil, fmt.Errorf("sphinx.spot.keyphrase_file: %w", err)
		}
	}
	if len(phrases) == 0 {
		return nil, fmt.Errorf("%w: built-in list", ErrKeyphrase)
	}
	return newPool(cfg, func() (*Decoder, error) { return newSpotDecoder(cfg, phrases) })
}

func newPool(cfg Config, mk func() (*Decoder, error)) (*Pool, error) {
	p := &Pool{cfg: cfg, mk: mk, work: acquireWorkers(cfg.Workers, cfg.Nice)}
	d, err := p.create(PriorityNormal)
	if err != nil {
		releaseWorkers()
		return nil, err
	}
	p.made = 1
	p.idle = append(p.idle, d)
	return p, nil
}

// create loads a decoder on a worker (loading the models is CPU-heavy too).
func (p *Pool) create(prio Priority) (*Decoder, error) {
	var d *Decoder
	var err error
	j := newJob(func() { d, err = p.mk() })
	j.prio = prio
	p.work.do(j)
	if err != nil {
		return nil, err
	}
	d.attach(p.work)
	return d, nil
}

// limit is how many decoders acquirers of prio may hold between them.
func (p *Pool) limit(prio Priority) int {
	if prio >= PriorityRaised {
		return p.cfg.Pool + p.cfg.SafetyReserve
	}
	return p.cfg.Pool
}

// Acquire returns an idle decoder, creates one if the pool is below its
// bound, or waits for one to be released until ctx ends. ctx's priority
// (WithPriority) places it in the queue and allows the safety reserve.
func (p *Pool) Acquire(ctx context.Context) (*Decoder, error) {
	prio := PriorityOf(ctx)
	woken := false // a waiter told to retry keeps its place ahead of the queue
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if p.busy < p.limit(prio) && (woken || !p.queuedAhead(prio)) {
			if n := len(p.idle); n > 0 {
				d := p.idle[n-1]
				p.idle = p.idle[:n-1]
				p.busy++
				p.mu.Unlock()
				d.setPriority(prio)
				return d, nil
			}
			if p.made < p.cfg.Pool+p.cfg.SafetyReserve {
				p.made++
				p.busy++
				p.mu.Unlock()
				return p.grow(prio)
			}
		}
		woken = false
		w := &waiter{prio: prio, got: make(chan *Decoder, 1)}
		p.enqueue(w)
		p.mu.Unlock()
		select {
		case d := <-w.got:
			if d != nil {
				d.setPriority(prio)
				return d, nil
			}
			woken = true // a decoder may be created now
		case <-ctx.Done():
			p.mu.Lock()
			p.dequeue(w)
			p.mu.Unlock()
			select {
			case d := <-w.got: // handed over as ctx ended: pass it on
				if d != nil {
					p.Release(d)
				} else {
					p.wakeNext()
				}
			default:
			}
			return nil, fmt.Errorf("sphinx: acquire decoder: %w", context.Cause(ctx))
		}
	}
}

// grow creates a decoder for an acquirer that already counts in made and
// busy.
func (p *Pool) grow(prio Priority) (*Decoder, error) {
	d, err := p.create(prio)
	p.mu.Lock()
	if err != nil {
		p.made--
		p.busy--
		p.mu.Unlock()
		p.wakeNext()
		return nil, err
	}
	if p.closed {
		p.busy--
		p.made--
		last := p.made == 0
		p.mu.Unlock()
		d.Close()
		if last {
			releaseWorkers()
		}
		return nil, ErrClosed
	}
	p.mu.Unlock()
	d.setPriority(prio)
	return d, nil
}

// queuedAhead reports whether an acquirer of prio must queue behind those
// already waiting (mu held).
func (p *Pool) queuedAhead(prio Priority) bool {
	for _, w := range p.waiters {
		if w.prio >= prio {
			return true
		}
	}
	return false
}

// enqueue places w after every waiter of its priority or higher (mu held).
func (p *Pool) enqueue(w *waiter) {
	i := len(p.waiters)
	for i > 0 && p.waiters[i-1].prio < w.prio {
		i--
	}
	p.waiters = append(p.waiters, nil)
	copy(p.waiters[i+1:], p.waiters[i:])
	p.waiters[i] = w
}

func (p *Pool) dequeue(w *waiter) {
	for i, x := range p.waiters {
		if x == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return
		}
	}
}

// next removes and returns the first waiter allowed a decoder now (mu
// held); nil when none is.
func (p *Pool) next() *waiter {
	for i, w := range p.waiters {
		if p.busy < p.limit(w.prio) {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return w
		}
	}
	return nil
}

// wakeNext lets the first waiter allowed a decoder retry (after a failed
// creation, or a wake-up that came too late).
func (p *Pool) wakeNext() {
	p.mu.Lock()
	w := p.next()
	p.mu.Unlock()
	if w != nil {
		w.got <- nil
	}
}

// Release gives a decoder back; an utterance left open is aborted. The
// decoder goes to the first waiter allowed it, or back to the idle list.
func (p *Pool) Release(d *Decoder) {
	if d == nil {
		return
	}
	d.Abort()
	d.setPriority(PriorityNormal)
	p.mu.Lock()
	p.busy--
	if p.closed {
		p.made--
		last := p.made == 0
		p.mu.Unlock()
		d.Close()
		if last {
			releaseWorkers()
		}
		return
	}
	if w := p.next(); w != nil {
		p.busy++
		p.mu.Unlock()
		w.got <- d // never blocks: got is buffered and w was dequeued
		return
	}
	p.idle = append(p.idle, d)
	p.mu.Unlock()
}

// Stats reports the pool's use now.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Busy: p.busy, Waiting: len(p.waiters), Size: p.cfg.Pool}
}

// Close frees idle decoders now and the others when they are released;
// queued acquirers get ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.made -= len(idle)
	last := p.made == 0
	waiters := p.waiters
	p.waiters = nil
	p.mu.Unlock()
	for _, d := range idle {
		d.Close()
	}
	for _, w := range waiters {
		w.got <- nil // retries, and finds the pool closed
	}
	if last {
		releaseWorkers()
	}
	return nil
}
