package voice

import "testing"

// TestBargeInResumeWaitsForTheRecogniser: paused playout resumes ResumeAfterMs
// after the pause only once the recogniser has heard that much of the
// speech that paused it with no words, or that turn ended without words: a
// recogniser seconds behind the media (a loaded machine) has not heard the
// words that are about to confirm the interruption.
func TestBargeInResumeWaitsForTheRecogniser(t *testing.T) {
	const pausedAt = 16000 * 10 // 10 s into the stream
	after := int64(2000 * 16)
	fed := func(ms int64) int64 { return ms*16/320 + 1 } // 20 ms frames written for ms of audio since feedBase
	cases := []struct {
		name     string
		now      int64
		heardMs  int64 // audio the recogniser was given, from feedBase (-1: the turn has ended)
		turn     string
		lastPart string
		wordless bool
		want     bool
	}{
		{"recogniser caught up, no words", pausedAt + after, 2000 + 800, "v2", "", false, true},
		{"recogniser 800 ms behind", pausedAt + after, 2000, "v2", "", false, false},
		{"recogniser caught up later", pausedAt + after + 16*900, 2000 + 800 + 200, "v2", "", false, true},
		{"too soon, however heard", pausedAt + after - 16, 5000, "v2", "", false, false},
		{"words came", pausedAt + after, 5000, "v2", "stop", false, false},
		{"turn ended, final pending", pausedAt + after, -1, "v2", "", false, false},
		{"turn ended without words", pausedAt + after, -1, "v2", "", true, true},
		{"a newer turn's recogniser", pausedAt + after, 5000, "v3", "", false, false},
	}
	for _, c := range cases {
		s := &voiceSession{cfg: Config{ResumeAfterMs: 2000}, turnID: c.turn, lastPart: c.lastPart}
		// The turn began 800 ms before the pause; its recogniser got audio from there.
		s.feedBase = pausedAt - 800*16
		if c.heardMs >= 0 {
			s.feed = &feeder{}
			s.feed.written.Store(fed(c.heardMs))
		}
		s.pausedAt, s.bargeTurn, s.pausedBy = pausedAt, "r1", "v2"
		if c.wordless {
			s.turnWithoutWords("v2")
		}
		if got := s.resumeDue(c.now); got != c.want {
			t.Errorf("%s: resume %v, want %v", c.name, got, c.want)
		}
	}
	// A turn without words that did not pause playout resumes nothing.
	s := &voiceSession{cfg: Config{ResumeAfterMs: 2000}}
	s.pausedAt, s.pausedBy = pausedAt, "v2"
	s.turnWithoutWords("v1")
	if s.resumeDue(pausedAt + 10*after) {
		t.Errorf("turn v1 without words resumed playout paused by v2")
	}
}
