package voice

import "github.com/veraneural/vera-gateway/gateway/router/sphinx"

// SpotGate decides which crisis phrases the audio spotter heard in a turn
// count for the local safety detector: those the turn's transcript agrees
// with (sphinx.Gate). On real voices the spotter alone raised cards on
// ordinary speech (issue 13); behind the gate it only adds phrases the
// recogniser garbled into words that sound like them.
type SpotGate interface {
	Filter(transcript string, spotted []string) []string
}

// dropSpots is the gate when no dictionary could be read: no spotted
// phrase counts, so the transcript alone is assessed.
type dropSpots struct{}

func (dropSpots) Filter(string, []string) []string { return nil }

// defaultSpotGate is sphinx.DefaultGate, or dropSpots when the
// dictionary cannot be read.
func defaultSpotGate() (SpotGate, error) {
	g, err := sphinx.DefaultGate()
	if err != nil {
		return dropSpots{}, err
	}
	return g, nil
}

// agreeingSpots is the spotted phrases that count for a turn whose
// transcript is text. Only counts are logged: the phrases came from the
// person's speech.
func (s *voiceSession) agreeingSpots(text string, spotted []string) []string {
	if len(spotted) == 0 || s.deps.SpotGate == nil {
		return nil
	}
	kept := s.deps.SpotGate.Filter(text, spotted)
	if len(kept) < len(spotted) {
		s.log.Debug("voice: spotted phrases the transcript does not agree with were dropped", "spotted", len(spotted), "kept", len(kept))
	}
	return kept
}
