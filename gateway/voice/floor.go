package voice

import (
	"context"
	"strings"

	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// A turn answered busy is the person's turn like any other: they spoke, so
// whatever VERA was saying or about to say before it yields, and the busy
// answer is the next thing they hear, not something queued behind a reply
// or the disclosure (BENCHMARKS.md, "every turn answered or told busy").
// takeFloor, on the turn's final-transcript goroutine before the busy notice
// is emitted:
//
//   - a reply this turn's speech paused (barge-in) stops, and the session
//     keeps only what was heard of it, as when words confirm the barge-in;
//   - the spoken AI disclosure stops, and those queued are dropped, each
//     counted as cut short (disclosure.go: shown on a screen, owed and
//     spoken again at the next pause on voice-only devices);
//   - a reply still playing stops the same way, and sentences queued or
//     being synthesised for earlier turns are dropped (their replies are
//     interrupted, reason barge_in);
//   - spoken safety resources are never cut or skipped (BRIEF §5: never
//     shortened or delayed): firm ones, and those of a turn of their own
//     ("safety:<card>") whether firm or not. The busy answer waits for them;
//   - nor are the replies of a session whose safety level is raised: what
//     VERA says there may be what the person most needs to hear, and a busy
//     turn has no words to say it was an interruption. Its busy answer
//     follows them (its turns go first to the recogniser, so it is seldom
//     busy). Only the disclosure yields there.
//
// A reply of an earlier turn generated after the busy answer still plays
// after it.

// synthItem is the speak item the speaker is synthesising now, and how to
// stop that synthesis (playMu).
type synthItem struct {
	it     speakItem
	cancel context.CancelFunc
}

// safetyTurn reports whether turnID is a safety card's own spoken turn.
func safetyTurn(turnID string) bool { return strings.HasPrefix(turnID, "safety:") }

// yieldsFloor reports whether it, queued up to the floor, gives way to a
// busy answer (playMu held): reply text of an earlier turn, or an earlier
// busy answer. The disclosure's own queue rule is disclosure.go's.
func (s *voiceSession) yieldsFloor(it speakItem) bool {
	return it.seq <= s.floorTo && !it.protected && !safetyTurn(it.turnID) && it.turnID != noticeTurn
}

// takeFloor makes way for the busy answer of turn id (see above).
func (s *voiceSession) takeFloor(id string) {
	if s.raised.Load() {
		s.disclosureYields()
		return
	}
	s.bargeMu.Lock()
	paused := s.pausedAt >= 0 && !safetyTurn(s.bargeTurn)
	s.bargeMu.Unlock()
	if paused {
		s.confirmBargeIn()
	}
	s.disclosureYields()
	s.playMu.Lock()
	s.floorTo = s.disc.queued.Load()
	var synth string
	if c := s.synth; c.cancel != nil && s.yieldsFloor(c.it) {
		c.cancel()
		synth = c.it.turnID
	}
	src, turn := s.play, s.playTurn
	s.playMu.Unlock()
	if synth != "" {
		s.yieldTurn(synth, "")
	}
	if src == nil || turn == id || turn == noticeTurn || safetyTurn(turn) {
		return
	}
	if src.protectedAt(int(s.conn.Sender().Position().Frames) * rtc.PCMFrame) {
		return // firm resources spoken in the reply's turn: the busy answer waits
	}
	pos := s.stopSource(src)
	s.yieldTurn(turn, src.heard(int(pos.Frames)*rtc.PCMFrame))
}

// yieldTurn drops the rest of turn's reply for a busy answer and tells the
// session what was heard of it (once per turn).
func (s *voiceSession) yieldTurn(turn, heard string) {
	s.playMu.Lock()
	done := s.cancelled[turn]
	s.cancelled[turn] = true
	s.playMu.Unlock()
	if !done && s.session().Interrupt(turn, heard, "barge_in") {
		s.m.BargeIns.WithLabelValues("busy").Inc()
	}
}

// synthesising registers it as the item being synthesised, unless it yields
// to a busy answer already; stop unregisters it. Speaker goroutine.
func (s *voiceSession) synthesising(it speakItem) (ctx context.Context, stop func(), yield bool) {
	s.playMu.Lock()
	defer s.playMu.Unlock()
	if s.yieldsFloor(it) {
		return nil, nil, true
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.synth = synthItem{it: it, cancel: cancel}
	return ctx, func() {
		s.playMu.Lock()
		s.synth = synthItem{}
		s.playMu.Unlock()
		cancel()
	}, false
}
