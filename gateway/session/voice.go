package session

import (
	"strings"

	"github.com/veraneural/vera-gateway/gateway/event"
)

// SubmitTurn starts a turn for text under a turn id the transport already
// used (a voice session's input.speech_started and transcript events), with
// the same busy policy as input.text.
func (s *Session) SubmitTurn(turnID, text string) {
	s.submitInput(turnInput{text: text, id: turnID})
}

// CancelTurn cancels the reply in progress if it is turnID ("" = whichever
// is running) and reports whether one was cancelled. Barge-in uses it when
// the person speaks over a reply that is still being generated.
func (s *Session) CancelTurn(turnID string) bool { return s.cancelTurn(turnID) }

// ReplyInterrupted records that a finished reply was cut short while it was
// being played: heard is the part the person actually heard (from the
// playout position). The history keeps only that, and clients get
// reply.interrupted. It changes the history only when the newest assistant
// message is the reply's text, so a late call cannot rewrite an older turn.
func (s *Session) ReplyInterrupted(turnID, full, heard, reason string) {
	s.mu.Lock()
	if n := len(s.history); n > 0 && s.history[n-1].Role == "assistant" && s.history[n-1].Text == full {
		s.history[n-1].Text = strings.TrimSpace(heard)
	}
	s.mu.Unlock()
	s.Emit(event.TypeReplyInterrupted, event.ReplyInterrupted{TurnID: turnID, Heard: strings.TrimSpace(heard), Reason: reason})
}
