//go:build !noembedded

package router

import (
	"context"
	"fmt"

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
