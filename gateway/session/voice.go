package session

// SubmitTurn starts a turn for text under a turn id the transport already
// used (a voice session's input.speech_started and transcript events), with
// the same busy policy as input.text.
func (s *Session) SubmitTurn(turnID, text string) {
	s.submitInput(turnInput{text: text, id: turnID})
}

// Propose offers actions that did not come from a converse reply (an
// inbox admission prompt) exactly as a reply's proposed actions are
// offered: an action.proposed event each, settled by action.approve or
// action.decline through Deps.Actions.
func (s *Session) Propose(turnID string, acts ...Action) { s.propose(turnID, acts) }
