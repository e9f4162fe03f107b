package voice

import (
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
