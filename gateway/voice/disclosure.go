package voice

import (
	"sync/atomic"

	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// noticeTurn is the turn id of the spoken AI disclosure's audio events.
const noticeTurn = "notice"

// The spoken AI disclosure informs without blocking. Every voice session
// opens with the short spoken text (safety.DisclosureVoice, under 4 s) and
// the notice event carries the full text for screens. The person may talk
// over it like over any reply: barge-in pauses it, and words confirm the
// interruption and stop it, so the first reply never waits behind it.
//
//   - Where the device shows the disclosure — a display that confirms what
//     it draws, the same devices whose safety cards count as shown — the
//     text on the display is the disclosure: cut short, it counts as given.
//   - Where nothing is shown for sure (voice-only, and displays that cannot
//     confirm renders), a disclosure cut short is owed: it is spoken again,
//     whole, at the next pause — once the next reply has played to its
//     end — and again if that one is cut short too.
//
// The schedule (session start, then every session.disclosure_every) is the
// session's and does not move.
//
// Nor does the disclosure ever hold up a reply when no barge-in stopped it
// (speech too short to be one, a pause taken for a false interruption on a
// busy machine, a resumed connection still playing the disclosure its own
// session opened with): a turn with words stops the disclosure playing and
// drops the ones still queued for the speaker, each counted as cut short.

// disclosureQueue orders the spoken disclosure against the turns: every
// speak item gets a sequence number as the event pump queues it, and a turn
// with words drops the disclosure items queued up to then.
type disclosureQueue struct {
	queued  atomic.Uint64 // sequence number of the newest speak item queued
	yieldTo atomic.Uint64 // disclosure items numbered up to this are dropped
}

// disclosureYields stops the spoken disclosure for a turn with words, so
// the reply never waits behind it: the one playing stops, those still
// queued are dropped, each counted as cut short (given on a screen, owed on
// voice-only). Final-transcript goroutine, before the turn is submitted.
func (s *voiceSession) disclosureYields() {
	s.disc.yieldTo.Store(s.disc.queued.Load())
	src := s.playingFor(noticeTurn)
	if src == nil {
		return
	}
	s.disclosureCut(s.stopSource(src))
}

// disclosureDropped reports whether it is a spoken disclosure a turn has
// overtaken (disclosureYields); the speaker then skips it, cut short before
// its first word. Speaker goroutine.
func (s *voiceSession) disclosureDropped(it speakItem) bool {
	if it.turnID != noticeTurn || !it.phrase || it.seq > s.disc.yieldTo.Load() {
		return false
	}
	s.disclosureCut(rtc.Playout{Stopped: true})
	return true
}

// disclosureCut records that barge-in stopped the spoken disclosure after
// pos of it had played. Media loop or final-transcript goroutine.
func (s *voiceSession) disclosureCut(pos rtc.Playout) {
	if s.session().Profile().MustSpeakSafety() {
		s.disclosureOwed.Store(true)
		s.m.BargeIns.WithLabelValues("disclosure_owed").Inc()
		s.log.Debug("voice: disclosure cut short; spoken again at the next pause", "played_ms", pos.Played().Milliseconds())
		return
	}
	s.m.BargeIns.WithLabelValues("disclosure_shown").Inc()
	s.log.Debug("voice: disclosure cut short; shown on the display", "played_ms", pos.Played().Milliseconds())
}

// afterPlayout runs when a source of turnID has left the sender (sender
// goroutine, must not block): a reply that played to its end is the next
// pause, where an owed disclosure is spoken again (the session emits its
// notice; the pump queues its speech).
func (s *voiceSession) afterPlayout(turnID string, p rtc.Playout) {
	if turnID == noticeTurn || p.Stopped || p.Err != nil {
		return
	}
	if s.disclosureOwed.CompareAndSwap(true, false) {
		s.session().RepeatDisclosure()
	}
}
