package session

// SubmitTurn starts a turn for the person's transcribed speech under a
// turn id the transport already used (a voice session's
// input.speech_started and transcript events), with the same busy policy
// as input.text. While an action is offered, the transcript may answer it
// (Decision.Via speech).
func (s *Session) SubmitTurn(turnID, text string) {
	s.submitInput(turnInput{text: text, id: turnID, via: ViaSpeech})
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
