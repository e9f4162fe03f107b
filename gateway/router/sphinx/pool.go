package sphinx

import (
	"context"
	"fmt"
	"sync"
)

// Pool hands out decoders, at most Config.Pool at a time. Decoders are
// created on demand up to the bound and reused; the first is created by
// NewPool so a bad model path fails at start-up.
type Pool struct {
	cfg  Config
	idle chan *Decoder // idle decoders, capacity cfg.Pool
	slot chan struct{} // one token per decoder that may still be created

	mu     sync.Mutex // mu guards closed and all
	closed bool
	all    []*Decoder
}

// NewPool validates cfg and loads the first decoder.
func NewPool(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pool{cfg: cfg, idle: make(chan *Decoder, cfg.Pool), slot: make(chan struct{}, cfg.Pool)}
	for range cfg.Pool - 1 {
		p.slot <- struct{}{}
	}
	d, err := newDecoder(cfg)
	if err != nil {
		return nil, err
	}
	p.all = append(p.all, d)
	p.idle <- d
	return p, nil
}

// Acquire returns an idle decoder, creates one if the pool is below its
// bound, or waits for one to be released until ctx ends.
func (p *Pool) Acquire(ctx context.Context) (*Decoder, error) {
	if p.isClosed() {
		return nil, ErrClosed
	}
	select {
	case d := <-p.idle:
		return d, nil
	default:
	}
	select {
	case d := <-p.idle:
		return d, nil
	case <-p.slot:
		d, err := newDecoder(p.cfg)
		if err != nil {
			p.slot <- struct{}{}
			return nil, err
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			d.Close()
			return nil, ErrClosed
		}
		p.all = append(p.all, d)
		p.mu.Unlock()
		return d, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("sphinx: acquire decoder: %w", context.Cause(ctx))
	}
}

// Release gives a decoder back; an utterance left open is aborted.
func (p *Pool) Release(d *Decoder) {
	if d == nil {
		return
	}
	d.Abort()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		d.Close()
		return
	}
	p.idle <- d // never blocks: idle holds every decoder the pool made
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Close frees idle decoders now and the others when they are released.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	defer p.mu.Unlock()
	for {
		select {
		case d := <-p.idle:
			d.Close()
		default:
			return nil
		}
	}
}
