package voice

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// TestCrisisCardBeforeReplyAudio: a spoken crisis utterance puts the
// safety card on the client's data channel before the first packet of the
// reply's audio, every time (BRIEF §5.2). Times are client receive times.
func TestCrisisCardBeforeReplyAudio(t *testing.T) {
	st := newStack(t, stackOptions{})
	cases := []struct {
		file, heard string // heard: the crisis words pocketsphinx gets from this espeak voice
	}{
		{"crisis_kill.16k.wav", "kill myself"},
		{"crisis_end.16k.wav", "end my life"},
	}
	runs := 4
	if testing.Short() {
		runs = 2
	}
	cards := 0
	for run := 0; run < runs; run++ {
		c := cases[run%len(cases)]
		t.Run(fmt.Sprintf("%d_%s", run, strings.TrimSuffix(c.file, ".16k.wav")), func(t *testing.T) {
			a := concat(t, fixture(t, c.file), fixtures.Silence(16000, time.Second))
			res := runScenario(t, st, encode(t, a), nil, 90*time.Second)
			evs := res.Events
			trs := transcripts(t, evs)
			if len(trs) != 1 {
				t.Fatalf("transcripts %q, want one turn\n%s", trs, dumpEvents(evs))
			}
			if len(ofType(evs, "safety.card")) == 0 {
				// The recogniser missed the crisis words (issue 6 item 4:
				// the key-phrase spotter's job). Nothing to order; the
				// count below keeps the test from passing on misses alone.
				if strings.Contains(trs[0], c.heard) {
					t.Fatalf("transcript %q carries %q but no safety card came\n%s", trs[0], c.heard, dumpEvents(evs))
				}
				t.Logf("recogniser missed the crisis words: %q", trs[0])
				return
			}
			cards++
			final := ofType(evs, "transcript.final")[0]
			turnID := decode(t, final).TurnID
			var card, delta, audioStarted *fixtures.Event
			for i := range evs {
				e := &evs[i]
				p := decode(t, *e)
				if p.TurnID != turnID {
					continue
				}
				switch {
				case e.Type == "safety.card" && card == nil:
					card = e
					if !p.Required {
						t.Errorf("safety.card without requires_ack: %s", e.Data)
					}
				case e.Type == "reply.delta" && delta == nil:
					delta = e
				case e.Type == "reply.audio_started" && audioStarted == nil:
					audioStarted = e
				}
			}
			if card == nil || delta == nil || audioStarted == nil {
				t.Fatalf("card %v delta %v audio %v\n%s", card != nil, delta != nil, audioStarted != nil, dumpEvents(evs))
			}
			if card.Seq >= delta.Seq {
				t.Errorf("safety.card seq %d not before reply.delta seq %d", card.Seq, delta.Seq)
			}
			// Every packet of the reply's audio comes after its transcript;
			// the disclosure notice must have played out by then for the
			// first such packet to be the reply's.
			from := final.At
			for _, e := range ofType(evs, "reply.audio_stopped") {
				if decode(t, e).TurnID == "notice" && e.At.After(from) {
					from = e.At
				}
			}
			first, ok := firstPacketAfter(res.Audio, from)
			if !ok {
				t.Fatalf("no reply audio packet\n%s", dumpEvents(evs))
			}
			if !card.At.Before(first.At) {
				t.Errorf("safety.card received at %v, first reply audio packet at %v (card %v later)",
					card.At.Format("15:04:05.000"), first.At.Format("15:04:05.000"), card.At.Sub(first.At))
			}
			t.Logf("transcript %q; card %v before the first reply packet", trs[0], first.At.Sub(card.At))
		})
	}
	if cards < (runs+1)/2 {
		t.Errorf("a safety card in %d of %d crisis runs: the crisis words were heard too rarely to test the ordering", cards, runs)
	}
}
