package voice

import (
	"log/slog"

	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// pauseForBargeIn: user speech has overlapped playout for Turn.BargeInMs.
// Playout pauses at once, unless what is playing is firm spoken safety
// resources (a device that must speak safety), which are never cut short
// (the AI disclosure may be: disclosure.go). Resources spoken where the
// person also has a screen can be talked over like a reply: the card
// stays on the screen.
func (s *voiceSession) pauseForBargeIn(at int64) {
	snd := s.conn.Sender()
	if !snd.Active() {
		s.log.Debug("voice: barge-in with nothing playing", "at_ms", sampleMs(at))
		return
	}
	s.playMu.Lock()
	src, id := s.play, s.playTurn
	s.playMu.Unlock()
	if src == nil {
		s.log.Debug("voice: barge-in as the source finished", "at_ms", sampleMs(at))
		return // the source finished between the check and now
	}
	if src.protectedAt(int(snd.Position().Frames) * rtc.PCMFrame) {
		s.log.Debug("voice: barge-in over protected speech", "turn", id)
		s.m.BargeIns.WithLabelValues("protected").Inc()
		return
	}
	s.bargeMu.Lock()
	defer s.bargeMu.Unlock()
	if s.pausedAt >= 0 {
		return
	}
	snd.Pause()
	s.pausedAt, s.bargeTurn, s.pausedBy, s.wordless = at, id, s.turnID, false
	s.log.Debug("voice: barge-in paused playout", "turn", id, "at_ms", sampleMs(at))
}

// duckGain is the reply's gain while the person speaks over it (−12 dB):
// a backchannel ("mm-hm", "yeah") is heard over it, and the reply goes on.
const duckGain = 0.25

// duckReply lowers the reply's voice at the start of speech over it
// (OverlapStarted), before anyone knows whether it is a backchannel or an
// interruption; unduckReply restores it when the speech ended as a
// backchannel (OverlapEnded), or when a paused reply resumes. Firm spoken
// safety resources are not ducked, as they are not paused.
func (s *voiceSession) duckReply() {
	snd := s.conn.Sender()
	if !snd.Active() {
		return
	}
	s.playMu.Lock()
	src := s.play
	s.playMu.Unlock()
	if src == nil || src.protectedAt(int(snd.Position().Frames)*rtc.PCMFrame) {
		return
	}
	snd.Duck(duckGain)
	s.ducked = true
}

// unduckReply: see duckReply. backchannel says the speech over the reply
// ended without interrupting it (counted as a ducked barge-in).
func (s *voiceSession) unduckReply(backchannel bool) {
	if !s.ducked {
		return
	}
	s.ducked = false
	s.conn.Sender().Duck(1)
	if backchannel {
		s.m.BargeIns.WithLabelValues("ducked").Inc()
	}
}

// logOverlap logs an overlap event with the barge-in judgement's levels
// (dBFS; turn.Detector.OverlapLevels): no text, only levels and times.
func (s *voiceSession) logOverlap(msg string, ev *turn.Event) {
	if !s.log.Enabled(s.ctx, slog.LevelDebug) {
		return
	}
	peak, echo, user, n := s.in.Turn().OverlapLevels()
	s.log.Debug(msg, "turn", s.turnID, "at_ms", sampleMs(ev.At), "start_ms", sampleMs(ev.SpeechStart),
		"peak_dbfs", peak, "echo_dbfs", echo, "user_loud_dbfs", user, "user_frames", n)
}

// checkBargeIn resumes paused playout when no words came in time (a false
// interruption: a cough, a door, a word to someone else too short to
// transcribe): ResumeAfterMs after the pause, once the recogniser has heard
// that much of the speech that paused it without words, or that speech's
// turn ended without any. Time alone is not enough: a recogniser behind the
// media (a loaded machine: frames queue while it decodes; the turn's words
// then come seconds late) has not yet heard the words, and their absence
// so far would resume what they were about to stop. Media loop only.
func (s *voiceSession) checkBargeIn() {
	now := s.in.Now()
	s.bargeMu.Lock()
	resume := s.resumeDue(now)
	if resume {
		s.clearPause()
	}
	s.bargeMu.Unlock()
	if resume {
		s.log.Debug("voice: barge-in resumed: no words", "turn", s.turnID, "at_ms", sampleMs(now))
		s.unduckReply(false)
		s.conn.Sender().Resume()
		s.m.BargeIns.WithLabelValues("resumed").Inc()
	}
}

// resumeDue: at sample time now, paused playout is to resume (see
// checkBargeIn); bargeMu held, media loop only.
func (s *voiceSession) resumeDue(now int64) bool {
	after := int64(s.cfg.ResumeAfterMs) * 16
	if s.pausedAt < 0 || now-s.pausedAt < after || s.lastPart != "" {
		return false
	}
	if s.wordless {
		return true
	}
	// The turn that paused it is still going: has its recogniser heard
	// ResumeAfterMs past the pause?
	if s.feed == nil || s.turnID != s.pausedBy {
		return false
	}
	heard, _ := s.heardTo() // not heard: the partials' poll keeps its own count
	return heard >= s.pausedAt+after
}

// turnWithoutWords: the person's turn id ended without words (nothing
// heard, not transcribed, no recogniser free). Playout its speech paused
// resumes (checkBargeIn).
func (s *voiceSession) turnWithoutWords(id string) {
	s.bargeMu.Lock()
	if s.pausedAt >= 0 && s.pausedBy == id {
		s.wordless = true
	}
	s.bargeMu.Unlock()
}

// clearPause forgets the barge-in pause; bargeMu held.
func (s *voiceSession) clearPause() {
	s.pausedAt, s.bargeTurn, s.pausedBy, s.wordless = -1, "", "", false
}

// confirmBargeIn: the person said words over paused playout. Playout stops,
// the reply is cancelled, and the history keeps only what was heard. It does
// nothing when no barge-in is pending.
func (s *voiceSession) confirmBargeIn() {
	s.bargeMu.Lock()
	id := s.bargeTurn
	pending := s.pausedAt >= 0
	s.clearPause()
	s.bargeMu.Unlock()
	if !pending {
		return
	}
	s.log.Debug("voice: barge-in confirmed by words", "turn", id)
	// nil when that reply already ended: a newer one is not the one interrupted
	src := s.playingFor(id)
	if src == nil {
		s.conn.Sender().Resume()
		return
	}
	pos := s.stopSource(src)
	if id == noticeTurn {
		s.disclosureCut(pos)
		return
	}
	s.cancelTurn(id)
	s.m.BargeIns.WithLabelValues("interrupted").Inc()
	// The session cancels a reply still being generated, or truncates the
	// finished one in its history, to what was heard.
	s.session().Interrupt(id, src.heard(int(pos.Frames)*rtc.PCMFrame), "barge_in")
}

// cancelTurn makes the speaker drop the turn's queued and future sentences.
func (s *voiceSession) cancelTurn(id string) {
	s.playMu.Lock()
	s.cancelled[id] = true
	s.playMu.Unlock()
}

// backchannel reports whether text is only listening words ("mm-hm",
// "yeah", "right"; turn.IsBackchannel in the session's language).
func (s *voiceSession) backchannel(text string) bool { return turn.IsBackchannel(s.cfg.Language, text) }

// cutForSafety stops the reply of turnID at once for a late crisis card:
// its playout stops, its queued sentences are dropped, and, when its text
// was already complete (the session no longer writes it, so it reports
// nothing itself), the session is told what was heard (reply.interrupted,
// reason safety). A reply already played out is left alone.
func (s *voiceSession) cutForSafety(turnID string, textDone bool) {
	s.cancelTurn(turnID)
	src := s.playingFor(turnID)
	if src == nil {
		return
	}
	s.bargeMu.Lock()
	if s.bargeTurn == turnID {
		s.clearPause()
	}
	s.bargeMu.Unlock()
	pos := s.stopSource(src)
	if textDone {
		s.session().Interrupt(turnID, src.heard(int(pos.Frames)*rtc.PCMFrame), session.ReasonSafety)
	}
}
