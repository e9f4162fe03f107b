package voice

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
	"github.com/veraneural/vera-gateway/safety"
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
	if s.disclosureDropped(it) { // a turn overtook it while it was synthesised
		return true
	}
	// Played through the same source bookkeeping as any speech: it waits
	// for the previous source and emits reply.audio_started/stopped; the
	// person may talk over it (disclosure.go), and over the busy answer
	// (the person talking again is what it asks for).
	s.sourceFor(it.turnID, ph, it.protected)
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

// admitHold is how long one slow wait for a recogniser keeps new voice
// sessions out: the recogniser stays the bottleneck for at least the turns
// already queued.
const admitHold = 10 * time.Second

// pressure is the recogniser's recent queueing as the voice sessions see
// it (whatever the listen slot's models are): the turns waiting for one now
// and when a turn last waited voice.admit_listen_wait_ms or more. Admission
// reads it.
type pressure struct {
	admitWait time.Duration // 0: never refuse

	mu       sync.Mutex // mu guards the fields below
	waiting  map[*feeder]time.Time
	lastSlow time.Time // zero: never
}

func newPressure(admitWait time.Duration) *pressure {
	return &pressure{admitWait: admitWait, waiting: map[*feeder]time.Time{}}
}

// begin: f waits for a recogniser from now.
func (p *pressure) begin(f *feeder, now time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.waiting[f] = now
	p.mu.Unlock()
}

// end: f got a recogniser, or gave up (busy).
func (p *pressure) end(f *feeder, now time.Time, busy bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	since, ok := p.waiting[f]
	delete(p.waiting, f)
	if busy || (ok && p.admitWait > 0 && now.Sub(since) >= p.admitWait) {
		p.lastSlow = now
	}
}

// saturated reports whether a turn is waiting, or waited within admitHold,
// admitWait or more.
func (p *pressure) saturated(now time.Time) bool {
	if p == nil || p.admitWait <= 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.lastSlow.IsZero() && now.Sub(p.lastSlow) < admitHold {
		return true
	}
	for _, since := range p.waiting {
		if now.Sub(since) >= p.admitWait {
			return true
		}
	}
	return false
}

// ErrRecogniserSaturated refuses a new voice session (rtc's admission hook:
// 503 with Retry-After) while turns queue for a recogniser, so that the
// sessions already live are answered rather than told they were not heard.
var ErrRecogniserSaturated = errors.New("the speech recogniser is at capacity; retry later")

// Admit is the rtc handler's admission hook for new voice sessions: it
// refuses one while the recogniser is saturated (a turn has waited
// voice.admit_listen_wait_ms for one, now or within the last 10 s), or when
// one more talking session would make turns wait that long on average
// (admit.go). Chat is not affected.
func (f *Factory) Admit() error {
	if now := f.clock.Now(); f.pressure.saturated(now) || !f.load.admit(now) {
		f.deps.Metrics.AdmissionRefused.Inc()
		return ErrRecogniserSaturated
	}
	return nil
}

// busyText is the busy answer, spoken and shown.
const busyText = "I'm a little busy — could you say that again?"

// noticeBusy is the notice kind of the busy answer (docs/events.md).
const noticeBusy = "busy"

// answerBusy tells the person, at once and in words, that their turn was
// not heard because no recogniser was free: a notice the client shows,
// spoken by the event pump from the phrase cache (encoded once for all
// sessions: when the recogniser is saturated, answering costs no
// synthesis). The session hears nothing, as for a turn without words.
func (s *voiceSession) answerBusy(id string) {
	s.m.ListenBusy.Inc()
	s.factory.load.ended(s.talk, s.factory.clock.Now(), 0)
	s.tellBusy(id, "voice: no recogniser free; turn answered busy")
}

// tellBusy gives turn id the busy answer (notice, spoken) and the session
// nothing: answerBusy's, and finalLate's for a final not ready in time.
func (s *voiceSession) tellBusy(id, why string) {
	s.turnWithoutWords(id)
	s.log.Debug(why, "turn", id)
	s.takeFloor(id) // the busy answer is heard next, not behind earlier speech (floor.go)
	s.session().Emit(event.TypeNotice, event.Notice{Kind: noticeBusy, Text: busyText, TurnID: id})
	s.session().NothingHeard(id)
}

// warmBusy puts the busy answer into the phrase cache while the session
// starts, so that the first turn answered busy plays at once rather than
// after an espeak run: when the recogniser is saturated, so is the machine,
// and the synthesiser runs at a lower priority (router.espeak.nice). Runs on
// its own goroutine (s.wg) until the phrase is cached or the session ends.
func (s *voiceSession) warmBusy() {
	defer s.wg.Done()
	if err := s.factory.phrases.warm(s.ctx, busyText, s.conn.Sender().EncoderParams()); err == nil {
		s.factory.busyReady.Store(true)
	} else if s.ctx.Err() == nil {
		s.log.Warn("voice: busy answer not cached; it is synthesised when needed", "err", err)
	}
}

// listenOptions are the wait bound and priority of a new turn's listen.
func (s *voiceSession) listenOptions() listenOptions {
	prio := sphinx.PriorityNormal
	if s.raised.Load() {
		prio = sphinx.PriorityRaised
	}
	o := s.factory.turnOptions(prio)
	o.load, o.talker = s.factory.load, s.talk
	return o
}

// turnOptions are a turn's listen options at priority prio.
func (f *Factory) turnOptions(prio sphinx.Priority) listenOptions {
	return listenOptions{wait: time.Duration(f.cfg.ListenWaitMs) * time.Millisecond, priority: prio,
		clock: f.clock, pressure: f.pressure}
}

// raiseLevel marks the session's safety level raised (elevated or crisis)
// for the rest of the connection: its turns go first to the recogniser.
func (s *voiceSession) raiseLevel(l safety.Level) {
	if l >= safety.LevelElevated {
		s.raised.Store(true)
	}
}
