package session

import (
	"github.com/veraneural/vera-gateway/gateway/consent"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/glasses"
)

// Prompt control ids on the last page of every prompt.
const (
	ControlApprove = glasses.ControlApprove
	ControlDecline = glasses.ControlDecline
)

// promptText is the prompt of an action: its title (glasses.PromptTitle
// when it has none) and summary, normalised as titles are.
func promptText(a Action) (title, body string) {
	title = NormalizeTitle(a.Title)
	if title == "" {
		title = glasses.PromptTitle
	}
	return title, NormalizeTitle(a.Summary)
}

// showPromptLocked shows the offer's prompt on surface with display.card
// (kind "prompt") unless a safety card is on it: a prompt never covers a
// safety card; it shows once the card is closed. offers.mu and cards.mu
// held.
func (s *Session) showPromptLocked(o *offer, surface string) {
	if s.cards.coversLocked(surface) {
		return
	}
	pages := o.st.promptPages(surface)
	if len(pages) == 0 {
		return
	}
	n := min(max(o.shown[surface], 1), len(pages))
	o.shown[surface] = n
	s.ev.emit(event.TypeDisplayCard, event.DisplayCard{CardID: promptCardID(o.st.a.ID), Kind: "prompt", Surface: surface,
		Page: pages[n-1].WithFocus(focusControl(o.ap))})
}

func (st *actionState) promptPages(surface string) []glasses.OpsPage {
	for _, cs := range st.prompt {
		if cs.Surface == surface {
			return cs.Pages
		}
	}
	return nil
}

func cardOn(c event.SafetyCard, surface string) bool {
	for _, cs := range c.Surfaces {
		if cs.Surface == surface {
			return true
		}
	}
	return false
}

func focusControl(ap *consent.Approval) string {
	if ap.Focus() == consent.FocusApprove {
		return ControlApprove
	}
	return ControlDecline
}

// transportEventLocked follows what a voice transport reports through
// Emit (transportEvent types only; offers.mu held): speech and reply
// audio mark the session as spoken, and the offer's answer window waits
// while the person speaks (until their words are known) or the question
// is still playing, and restarts when it has been heard.
func (s *Session) transportEventLocked(t event.Type, payload any) {
	var turnID string
	switch p := payload.(type) {
	case event.ReplyAudio:
		turnID = p.TurnID
	case *event.ReplyAudio:
		turnID = p.TurnID
	}
	s.acts.audio = true
	o := s.acts.offer
	if o == nil {
		return
	}
	switch {
	case t == event.TypeSpeechStarted, t == event.TypeReplyAudioStarted && turnID == o.turnID:
		o.ap.Hold()
		s.timers.stop(o.silence)
		o.silence = nil
	case t == event.TypeSpeechStopped:
		// The person spoke: the window stays held until their words are
		// known (SubmitVoiceTurn) or the transport says there were none
		// (NothingHeard). A recogniser slower than the window must not
		// turn a timely yes into silence.
	case t == event.TypeReplyAudioStopped && turnID == o.turnID:
		o.ap.Heard()
		s.armSilenceLocked(o)
	}
}

// transportEvent reports whether t is speech or reply audio, the events
// that move an offer's answer window.
func transportEvent(t event.Type) bool {
	switch t {
	case event.TypeSpeechStarted, event.TypeSpeechStopped, event.TypeReplyAudioStarted, event.TypeReplyAudioStopped:
		return true
	}
	return false
}

// NothingHeard tells the session that the person's speech in turnID gave
// no words (an empty or failed transcript): an offer's answer window,
// held since the speech started, restarts from now. Voice transports call
// it for every speech turn they do not submit.
func (s *Session) NothingHeard(turnID string) {
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	o := s.acts.offer
	if o == nil {
		return
	}
	o.ap.Heard()
	s.armSilenceLocked(o)
}
