package router

import (
	"context"
	"errors"
	"fmt"

	"github.com/veraneural/vera-gateway/gateway/router/espeak"
)

// espeakProvider speaks with espeak-ng, sentence by sentence.
type espeakProvider struct {
	synth *espeak.Synth
}

func newEspeakProvider(cfg espeak.Config) (*espeakProvider, error) {
	s, err := espeak.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("espeak: %w", err)
	}
	return &espeakProvider{synth: s}, nil
}

func (p *espeakProvider) speak(ctx context.Context, c *call, req SpeakRequest, emit func(AudioChunk) error) error {
	err := p.synth.Speak(ctx, req.Text, req.Voice, req.SampleRate, func(pcm []int16) error {
		if !c.first() {
			return errAbandoned
		}
		return emit(AudioChunk{Codec: CodecPCM, SampleRate: req.SampleRate, PCM: pcm})
	})
	switch {
	case err == nil, ctx.Err() != nil, errors.Is(err, errAbandoned):
		return err
	case errors.Is(err, espeak.ErrEmpty):
		return &ProviderError{Kind: KindRejected, Err: err}
	case errors.Is(err, espeak.ErrOutput), errors.Is(err, espeak.ErrRun):
		return &ProviderError{Kind: KindInternal, Err: err}
	}
	return err // the caller's emit error, unchanged
}
