package session

// SubmitTurn starts a turn for text under a turn id the transport already
// used (a voice session's input.speech_started and transcript events), with
// the same busy policy as input.text.
func (s *Session) SubmitTurn(turnID, text string) {
	s.submitInput(turnInput{text: text, id: turnID})
}
