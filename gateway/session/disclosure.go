package session

import (
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/safety"
)

// disclosureNotice is the AI-disclosure notice for the negotiated device:
// Text for its display (the full text on a screen, the one line on a HUD,
// the spoken text on a voice-only device) and Spoken, the short text every
// voice session says. Config.Disclosure, when set, is both.
func (s *Session) disclosureNotice() event.Notice {
	n := event.Notice{Kind: event.NoticeAIDisclosure,
		Text: safety.DisclosureText(s.device().surfaceKind()), Spoken: safety.DisclosureVoice}
	if s.cfg.Disclosure != "" {
		n.Text, n.Spoken = s.cfg.Disclosure, s.cfg.Disclosure
	}
	return n
}

// discloseIfDue emits the disclosure notice when the schedule says it is
// due (session start, then every Config.DisclosureEvery) and records it as
// delivered. Callers hold whatever orders it among their events.
func (s *Session) discloseIfDue() {
	if _, ok := s.disclosure.Take(s.device().surfaceKind()); ok {
		s.ev.emit(event.TypeNotice, s.disclosureNotice())
	}
}

// RepeatDisclosure emits the AI-disclosure notice again without moving
// the schedule: a voice transport calls it when the spoken disclosure was
// cut short on a device that shows no text of it, at the conversation's
// next pause, so the person hears it whole.
func (s *Session) RepeatDisclosure() {
	if s.ev.isClosed() {
		return
	}
	s.ev.emit(event.TypeNotice, s.disclosureNotice())
}
