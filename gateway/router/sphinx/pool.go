package sphinx

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// Pool hands out decoders, at most Config.Pool at a time. Decoders are
// created on demand up to the bound and reused; the first is created by
// NewPool so a bad model path fails at start-up.
type Pool struct {
	cfg  Config
	mk   func() (*Decoder, error)
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
	p := &Pool{cfg: cfg, mk: mk, idle: make(chan *Decoder, cfg.Pool), slot: make(chan struct{}, cfg.Pool)}
	for range cfg.Pool - 1 {
		p.slot <- struct{}{}
	}
	d, err := mk()
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
		d, err := p.mk()
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
