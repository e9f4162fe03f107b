package voice

import (
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// TestTurnTranscribedAndAnswered: one committed espeak turn over a real
// pion peer is detected, transcribed and answered with text and audio.
func TestTurnTranscribedAndAnswered(t *testing.T) {
	st := newStack(t, stackOptions{})
	a := concat(t, fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, time.Second))
	res := runScenario(t, st, encode(t, a), nil, 90*time.Second)
	evs := res.Events
	t.Logf("events:\n%s", dumpEvents(evs))

	for _, typ := range []string{"session.created", "notice", "input.speech_started", "input.speech_stopped",
		"transcript.final", "reply.delta", "reply.done", "reply.audio_started", "reply.audio_stopped"} {
		if len(ofType(evs, typ)) == 0 {
			t.Errorf("no %s", typ)
		}
	}
	trs := transcripts(t, evs)
	if len(trs) != 1 {
		t.Fatalf("transcripts %q, want one turn", trs)
	}
	// pocketsphinx on espeak: the words it reliably gets (testdata/voice/README.md).
	if !strings.Contains(trs[0], "would like to go") {
		t.Errorf("transcript %q lacks %q", trs[0], "would like to go")
	}
	if cards := ofType(evs, "safety.card"); len(cards) != 0 {
		t.Errorf("a safety card for a harmless turn: %s", cards[0].Data)
	}
	// The reply's audio: RTP packets after reply.audio_started of the turn.
	turnID := decode(t, ofType(evs, "transcript.final")[0]).TurnID
	var started time.Time
	for _, e := range ofType(evs, "reply.audio_started") {
		if decode(t, e).TurnID == turnID {
			started = e.At
		}
	}
	if started.IsZero() {
		t.Fatalf("no reply.audio_started for turn %s", turnID)
	}
	n := 0
	for _, p := range res.Audio {
		if !p.At.Before(started.Add(-100*time.Millisecond)) && len(p.Payload) > 3 {
			n++
		}
	}
	if n < 25 {
		t.Errorf("%d reply audio packets after reply.audio_started, want at least 25 (0.5 s)", n)
	}
}
