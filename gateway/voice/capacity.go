package voice

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway/router"
)

// playPhrase plays a fixed phrase (it.text, spoken alone) from the
// factory's phrase cache: synthesised and encoded once for every session,
// so a session start costs no espeak run and no Opus encoding. It reports
// false when the phrase could not be had from the cache (no cache, a
// speaker error, too long); the caller then speaks it the ordinary way, so
// the phrase is always spoken. The safety invariants do not depend on the
// cache: a card is sent on the events channel by the pump whatever the
// speaker is doing, and its spoken resources queue behind the phrase
// exactly as behind a phrase synthesised here.
func (s *voiceSession) playPhrase(it speakItem) bool {
	c := s.factory.phrases
	if c == nil || it.text == "" {
		return false
	}
	ph, err := c.get(s.ctx, it.text, s.conn.Sender().EncoderParams())
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Warn("voice: phrase cache; speaking it per session", "turn", it.turnID, "err", err)
		}
		return false
	}
	// Played through the same source bookkeeping as any speech: it waits
	// for the previous source and emits reply.audio_started/stopped; the
	// person may talk over it (disclosure.go).
	s.sourceFor(it.turnID, ph)
	return true
}

// phraseTap is the echo guard's reference for a pre-encoded phrase (the
// Sender taps only the PCM sources it encodes itself); nil when the guard
// is off.
func (s *voiceSession) phraseTap() func(pcm []int16, ts uint32) {
	if !s.cfg.EchoGuard {
		return nil
	}
	return s.echo.reference
}

// setupDone records the session's setup time: from the offer (the factory
// runs while the offer is answered) to the connection ready for media and
// events.
func (s *voiceSession) setupDone() {
	s.m.SessionSetup.Observe(time.Since(s.origin).Seconds())
}

// countSetupFailure counts a session that closes before its connection was
// ever ready.
func (s *voiceSession) countSetupFailure() {
	select {
	case <-s.conn.Ready():
	default:
		s.m.SessionSetupFailed.Inc()
	}
}

// timedListener measures how long opening a turn's recogniser takes: the
// router waits there for a pooled decoder, a queue otherwise invisible.
type timedListener struct {
	l    Listener
	wait prometheus.Histogram
}

func (t timedListener) Listen(ctx context.Context, req router.ListenRequest) (*router.ListenSession, error) {
	start := time.Now()
	ls, err := t.l.Listen(ctx, req)
	if err == nil {
		t.wait.Observe(time.Since(start).Seconds())
	}
	return ls, err
}
