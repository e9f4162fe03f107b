//go:build !noembedded

package router

import (
	"context"
	"fmt"
	"slices"

	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
)

// sphinxBuilt says the pocketsphinx provider is in this binary.
const sphinxBuilt = true

// sphinxProvider listens with pooled pocketsphinx decoders.
type sphinxProvider struct {
	pool *sphinx.Pool
	kws  bool // a keyphrase file is loaded
}

func newSphinxProvider(cfg sphinx.Config) (*sphinxProvider, func() error, error) {
	pool, err := sphinx.NewPool(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("pocketsphinx: %w", err)
	}
	return &sphinxProvider{pool: pool, kws: cfg.KeyphraseFile != ""}, pool.Close, nil
}

// partialEvery is how much audio passes between partial hypotheses:
// ps_get_hyp walks the search lattice, too costly for every 20 ms frame.
const partialEvery = 16000 / 5 // 200 ms at 16 kHz

func (p *sphinxProvider) startListen(ctx context.Context, req ListenRequest) (listenStream, error) {
	search := sphinx.SearchLM
	if req.KeywordSpotting {
		if !p.kws {
			return nil, perr(KindRejected, "keyword spotting needs router.sphinx.keyphrase_file")
		}
		search = sphinx.SearchKeyphrase
	}
	d, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, &ProviderError{Kind: KindInternal, Err: err}
	}
	if err := d.Start(search); err != nil {
		p.pool.Release(d)
		return nil, &ProviderError{Kind: KindInternal, Err: err}
	}
	return &sphinxStream{pool: p.pool, d: d}, nil
}

// sphinxStream is one utterance on a pooled decoder.
type sphinxStream struct {
	pool       *sphinx.Pool
	d          *sphinx.Decoder
	since      int // samples since the last partial
	partialHyp string
}

func (s *sphinxStream) write(frame []int16) error {
	if s.d == nil {
		return ErrClosed
	}
	if err := s.d.Process(frame); err != nil {
		return &ProviderError{Kind: KindInternal, Err: err}
	}
	s.since += len(frame)
	if s.since >= partialEvery {
		s.since = 0
		s.partialHyp = s.d.Hypothesis()
	}
	return nil
}

func (s *sphinxStream) partial() string { return s.partialHyp }

// partialNow takes a hypothesis over the audio written so far (the voice
// session asks once per pause, so that the end-of-turn decision need not
// wait for the next periodic one); the cadence goes on unchanged.
func (s *sphinxStream) partialNow() string {
	if s.d != nil {
		s.partialHyp = s.d.Hypothesis()
	}
	return s.partialHyp
}

func (s *sphinxStream) final(ctx context.Context, c *call) (string, error) {
	if s.d == nil {
		return "", ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	text, err := s.d.End()
	if err != nil {
		return "", &ProviderError{Kind: KindInternal, Err: err}
	}
	if !c.first() {
		return "", errAbandoned
	}
	return text, nil
}

func (s *sphinxStream) close() {
	if s.d != nil {
		s.pool.Release(s.d)
		s.d = nil
	}
}

// spotter runs the crisis key-phrase search (router.sphinx.spot) on every
// listened turn, whichever model transcribes it.
type spotter struct {
	pool *sphinx.Pool
}

func newSpotter(cfg sphinx.Config) (*spotter, func() error, error) {
	pool, err := sphinx.NewSpotPool(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("pocketsphinx spotter: %w", err)
	}
	return &spotter{pool: pool}, pool.Close, nil
}

// start takes a spotter decoder and begins an utterance on it.
func (s *spotter) start(ctx context.Context) (*spotStream, error) {
	d, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.Start(sphinx.SearchSpot); err != nil {
		s.pool.Release(d)
		return nil, err
	}
	return &spotStream{pool: s.pool, d: d}, nil
}

// spotStream is one turn on a pooled spotter decoder.
type spotStream struct {
	pool *sphinx.Pool
	d    *sphinx.Decoder
}

func (s *spotStream) write(frame []int16) error { return s.d.Process(frame) }

// end finishes the turn and returns the distinct phrases heard, in order.
func (s *spotStream) end() ([]string, error) {
	if _, err := s.d.End(); err != nil {
		return nil, err
	}
	var out []string
	for _, sp := range s.d.Spots() {
		if !slices.Contains(out, sp.Phrase) {
			out = append(out, sp.Phrase)
		}
	}
	return out, nil
}

func (s *spotStream) close() {
	if s.d != nil {
		s.pool.Release(s.d)
		s.d = nil
	}
}
