package router

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ListenRequest opens a listen session.
type ListenRequest struct {
	// Slot defaults to "listen".
	Slot string
	// Language hint (ISO-639-1), optional.
	Language string
	// KeywordSpotting asks for the keyphrase search instead of open
	// transcription: Final's text holds the key phrases heard (e.g. crisis
	// phrases). Only pocketsphinx models with router.sphinx.keyphrase_file
	// can; the others of the slot are passed over (KindRejected).
	KeywordSpotting bool
	// NoSpot skips the crisis key-phrase spotter (router.sphinx.spot) for
	// this session; it never runs with KeywordSpotting.
	NoSpot bool
}

// Transcript is the final text of a turn and who recognised it.
type Transcript struct {
	Text     string
	Model    string
	Provider string
	// Spotted are the crisis key phrases the spotter heard in the turn's
	// audio (router.sphinx.spot), whatever Text says. They are for the
	// safety detector only: never shown as what the person said.
	Spotted []string
}

// ListenSession recognises one turn of 16 kHz mono PCM. Frames are fed to
// the first available model of the slot as they arrive (Write), partial
// text is available at any time (Partial) and the final text right after
// the end of the turn (Final). The turn's audio is also kept (up to
// router.max_turn_seconds) so that, if that model fails at Final, the next
// models of the slot get the whole turn. Methods are safe for concurrent
// use; Close releases the recogniser and must always be called.
type ListenSession struct {
	r      *Router
	req    ListenRequest
	models []*model

	mu       sync.Mutex // mu guards the fields below
	audio    []int16
	maxAudio int
	overflow bool
	stream   listenStream // open on models[cur], nil once spent or broken
	cur      int
	skipped  []Attempt
	done     bool

	spotMu sync.Mutex  // spotMu guards spot; held apart from mu so that Partial never waits on the spotter
	spot   *spotStream // nil when not spotting, or after the spotter failed
}

// Listen opens a session on the slot's first model that is not behind an
// open breaker and that starts (an embedded decoder may wait in its pool
// until ctx ends).
func (r *Router) Listen(ctx context.Context, req ListenRequest) (*ListenSession, error) {
	if req.Slot == "" {
		req.Slot = SlotListen
	}
	models, err := r.slot(req.Slot)
	if err != nil {
		return nil, err
	}
	for _, m := range models {
		if m.listen == nil {
			return nil, fmt.Errorf("%w: slot %q model %q (%s) cannot listen", ErrUnsupported, req.Slot, m.cfg.Name, m.cfg.Provider)
		}
	}
	s := &ListenSession{r: r, req: req, models: models, maxAudio: r.cfg.MaxTurnSeconds * 16000}
	for i, m := range models {
		if !m.breaker.peek(r.clock.Now()) {
			s.skipped = append(s.skipped, Attempt{Model: m.cfg.Name, Provider: m.cfg.Provider, Kind: KindBreakerOpen, Err: errors.New("circuit breaker open")})
			continue
		}
		// Starting may wait for a pooled decoder; waiting longer than the
		// model's TTFT budget would lose the start of the turn, so move on.
		sctx, cancel := context.WithCancelCause(ctx)
		timer := r.clock.AfterFunc(m.ttft, func() { cancel(errTTFT) })
		st, err := m.listen.startListen(sctx, req)
		timer.Stop()
		cancel(nil)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("router: slot %q: %w", req.Slot, context.Cause(ctx))
			}
			kind, _ := classify(ctx, err)
			if errors.Is(context.Cause(sctx), errTTFT) {
				kind, err = KindTTFT, fmt.Errorf("no recogniser free within %s: %w", m.ttft, err)
			}
			r.metrics.failures.With(prometheus.Labels{"model": m.cfg.Name, "provider": m.cfg.Provider, "kind": string(kind)}).Inc()
			s.skipped = append(s.skipped, Attempt{Model: m.cfg.Name, Provider: m.cfg.Provider, Kind: kind, Err: err})
			continue
		}
		s.stream, s.cur = st, i
		s.startSpot(ctx, m.ttft)
		return s, nil
	}
	return nil, &NoModelError{Slot: req.Slot, Attempts: s.skipped}
}

// startSpot opens the key-phrase spotter beside the recogniser. A spotter
// that cannot start within the budget is logged and the turn goes on
// without it: the transcript still reaches the safety detector.
func (s *ListenSession) startSpot(ctx context.Context, budget time.Duration) {
	if s.r.spot == nil || s.req.NoSpot || s.req.KeywordSpotting {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	sp, err := s.r.spot.start(sctx)
	if err != nil {
		s.r.log.Warn("router spotter unavailable for this turn", "err", err)
		return
	}
	s.spot = sp
}

// writeSpot feeds the spotter; on failure it is dropped for the turn.
func (s *ListenSession) writeSpot(frame []int16) {
	s.spotMu.Lock()
	defer s.spotMu.Unlock()
	if s.spot == nil {
		return
	}
	if err := s.spot.write(frame); err != nil {
		s.r.log.Warn("router spotter write failed", "err", err)
		s.spot.close()
		s.spot = nil
	}
}

// endSpot returns the phrases the spotter heard and releases it.
func (s *ListenSession) endSpot() []string {
	s.spotMu.Lock()
	defer s.spotMu.Unlock()
	if s.spot == nil {
		return nil
	}
	defer func() { s.spot.close(); s.spot = nil }()
	out, err := s.spot.end()
	if err != nil {
		s.r.log.Warn("router spotter failed", "err", err)
		return nil
	}
	return out
}

// Write feeds one frame of 16 kHz mono PCM. The decoding work of an
// embedded recogniser happens in the caller's goroutine, as the audio
// arrives, so that Final has little left to do.
func (s *ListenSession) Write(frame []int16) error {
	if err := s.write(frame); err != nil {
		return err
	}
	s.writeSpot(frame)
	return nil
}

func (s *ListenSession) write(frame []int16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return ErrClosed
	}
	if len(s.audio)+len(frame) <= s.maxAudio {
		s.audio = append(s.audio, frame...)
	} else {
		s.overflow = true
	}
	if s.stream != nil {
		if err := s.stream.write(frame); err != nil {
			// Keep buffering: Final retries the turn from the kept audio.
			s.r.log.Warn("router listen write failed", "model", s.models[s.cur].cfg.Name, "err", err)
			s.stream.close()
			s.stream = nil
		}
	}
	return nil
}

// Partial returns the current partial hypothesis ("" when none, or when
// the model does not produce partials).
func (s *ListenSession) Partial() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream == nil {
		return ""
	}
	return s.stream.partial()
}

// partialNower is a listen stream that can take a hypothesis on demand.
type partialNower interface{ partialNow() string }

// PartialNow returns a hypothesis over the audio written so far: a fresh
// one from a recogniser that can take one on demand (the embedded
// pocketsphinx), else Partial.
func (s *ListenSession) PartialNow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream == nil {
		return ""
	}
	if pn, ok := s.stream.(partialNower); ok {
		return pn.partialNow()
	}
	return s.stream.partial()
}

// Final ends the turn and returns its text and the key phrases spotted in
// it. It may be called once.
func (s *ListenSession) Final(ctx context.Context) (Transcript, error) {
	spotted := s.endSpot()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return Transcript{}, ErrClosed
	}
	s.done = true
	var text string
	m, err := s.r.run(ctx, plan{slot: s.req.Slot, models: s.models[s.cur:]},
		func(ctx context.Context, m *model, c *call) error {
			st := s.stream
			s.stream = nil
			if st == nil || m != s.models[s.cur] {
				if st != nil {
					st.close()
				}
				if s.overflow {
					return perr(KindInternal, "turn longer than router.max_turn_seconds cannot be replayed")
				}
				var err error
				if st, err = m.listen.startListen(ctx, s.req); err != nil {
					return err
				}
				if err := st.write(s.audio); err != nil {
					st.close()
					return err
				}
			}
			defer st.close()
			t, err := st.final(ctx, c)
			if err != nil {
				return err
			}
			text = t
			return nil
		})
	s.audio = nil
	if err != nil {
		var nm *NoModelError
		if errors.As(err, &nm) {
			nm.Attempts = append(append([]Attempt(nil), s.skipped...), nm.Attempts...)
		}
		if len(spotted) > 0 {
			// The words were heard even though no transcript came.
			return Transcript{Spotted: spotted}, err
		}
		return Transcript{}, err
	}
	return Transcript{Text: text, Model: m.cfg.Name, Provider: m.cfg.Provider, Spotted: spotted}, nil
}

// Close releases the recogniser. Safe to call more than once and after Final.
func (s *ListenSession) Close() error {
	s.spotMu.Lock()
	if s.spot != nil {
		s.spot.close()
		s.spot = nil
	}
	s.spotMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.stream != nil {
		s.stream.close()
		s.stream = nil
	}
	s.audio = nil
	return nil
}
