package router

import (
	"context"
	"fmt"
	"strings"
)

// SpeakRequest is text to synthesise.
type SpeakRequest struct {
	// Slot defaults to "speak".
	Slot string
	Text string
	// Voice overrides the model's configured voice.
	Voice string
	// SampleRate of PCM output: 48000 (default) or 16000 (any rate in
	// 8000..48000 works). Opus from a provider is passed through at 48 kHz.
	SampleRate int
	// PCMOnly asks providers to return PCM even when they could pass Opus.
	PCMOnly bool
}

// SpeakResult names the model that spoke.
type SpeakResult struct {
	Model    string
	Provider string
}

// Speak synthesises req.Text with the slot's models, streaming audio to
// onAudio. Like Converse, once audio reached the caller a failure ends the
// call (KindTruncated) rather than switching voices mid-sentence.
func (r *Router) Speak(ctx context.Context, req SpeakRequest, onAudio func(AudioChunk) error) (SpeakResult, error) {
	if req.Slot == "" {
		req.Slot = SlotSpeak
	}
	if req.SampleRate == 0 {
		req.SampleRate = 48000
	}
	if req.SampleRate < 8000 || req.SampleRate > 48000 {
		return SpeakResult{}, fmt.Errorf("%w: sample rate %d: must be in [8000,48000]", ErrBadRequest, req.SampleRate)
	}
	if strings.TrimSpace(req.Text) == "" {
		return SpeakResult{}, fmt.Errorf("%w: text must not be blank", ErrBadRequest)
	}
	if onAudio == nil {
		return SpeakResult{}, fmt.Errorf("%w: onAudio is required", ErrBadRequest)
	}
	models, err := r.slot(req.Slot)
	if err != nil {
		return SpeakResult{}, err
	}
	for _, m := range models {
		if m.speak == nil {
			return SpeakResult{}, fmt.Errorf("%w: slot %q model %q (%s) cannot speak", ErrUnsupported, req.Slot, m.cfg.Name, m.cfg.Provider)
		}
	}
	audio := guard(onAudio)
	m, err := r.run(ctx, plan{slot: req.Slot, models: models, streamed: true},
		func(ctx context.Context, m *model, c *call) error {
			return m.speak.speak(ctx, c, req, audio)
		})
	if err != nil {
		return SpeakResult{}, err
	}
	return SpeakResult{Model: m.cfg.Name, Provider: m.cfg.Provider}, nil
}
