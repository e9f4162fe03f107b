package session

import "strings"

// SubmitTurn starts a turn for the person's transcribed speech under a
// turn id the transport already used (a voice session's
// input.speech_started and transcript events), with the same busy policy
// as input.text. While an action is offered, the transcript may answer it
// (Decision.Via speech).
func (s *Session) SubmitTurn(turnID, text string) {
	s.submitInput(turnInput{text: text, id: turnID, via: ViaSpeech})
}

// SubmitVoiceTurn is SubmitTurn with the crisis key phrases a spotter
// heard in the turn's audio. The local safety detector assesses the
// transcript together with them, so crisis words reach it even when the
// transcript garbles them; the transcript shown, sent to the engine and
// kept in history is text alone.
func (s *Session) SubmitVoiceTurn(turnID, text string, spotted []string) {
	s.submitInput(turnInput{text: text, id: turnID, via: ViaSpeech, spotted: spotted})
}

// safetyText is what the local detector assesses for the turn.
func (in turnInput) safetyText() string {
	if len(in.spotted) == 0 {
		return in.text
	}
	return in.text + ". " + strings.Join(in.spotted, ". ")
}

// Propose offers actions that did not come from a converse reply (an
// inbox admission prompt) exactly as a reply's proposed actions are
// offered: an action.proposed event each with its prompt pages, and — when
// nothing else is offered — the first one asked in a reply of its own;
// settled by a tap, a key, a clear spoken or typed answer, or expiry,
// through Deps.Actions.
func (s *Session) Propose(turnID string, acts ...Action) {
	s.propose(turnID, acts)
	s.generate(s.offerNext)
}
