package voice

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// TestVoiceTurnEventsAsDocumented holds a voice session to docs/events.md,
// read here: every event the client receives has a documented type and
// only documented fields; the turn's last event is the one the document's
// table names for a reply played to its end ("voice, played to its end":
// reply.audio_stopped, after reply.done), and it is sent after the reply's
// last packet — when the client sees it, the gateway has sent every frame
// it will send; reply.audio_started precedes it; and the reply's text
// arrives in a few sentence deltas, not one per word.
func TestVoiceTurnEventsAsDocumented(t *testing.T) {
	const row = "voice, played to its end"
	last := fixtures.ReadEventDocs(t).LastEvent[row]
	if last.Type != "reply.audio_stopped" {
		// The frame count below is what reply.audio_stopped promises.
		t.Fatalf("docs/events.md's last-event table says %+v for %q; this test checks reply.audio_stopped", last, row)
	}
	st := newStack(t, stackOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Speech after the disclosure has played whole, so the reply's audio
	// is the last the gateway sends.
	stream := encode(t, concat(t, fixtures.Silence(16000, 5*time.Second), fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, 2*time.Second)))
	var atStop atomic.Int64 // frames sent when the client saw the reply's audio_stopped
	atStop.Store(-1)
	onEvent := func(e fixtures.Event) {
		if e.Type == "reply.audio_stopped" && decode(t, e).TurnID == "v1" {
			st.mu.Lock()
			v := st.voices[0]
			st.mu.Unlock()
			atStop.Store(v.conn.Sender().SentFrames())
		}
	}
	res, err := fixtures.Run(ctx, fixtures.Scenario{
		Client: fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "phone", OnEvent: onEvent},
		Stream: stream, Complete: repliesEnded(1),
	})
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	evs := res.Events
	checkLastEvent(t, row, evs, "v1")
	idx := map[string][]int{} // event type → indexes, for turn v1
	for i, e := range evs {
		if decode(t, e).TurnID == "v1" {
			idx[e.Type] = append(idx[e.Type], i)
		}
	}
	one := func(typ string) int {
		if len(idx[typ]) != 1 {
			t.Fatalf("turn v1 has %d %s events, want 1\n%s", len(idx[typ]), typ, dumpEvents(evs))
		}
		return idx[typ][0]
	}
	final, done, started, stopped := one("transcript.final"), one("reply.done"), one("reply.audio_started"), one(last.Type)
	if !(final < started && started < stopped) {
		t.Fatalf("order: final %d started %d stopped %d\n%s", final, started, stopped, dumpEvents(evs))
	}
	// A few deltas: at most one per sentence of the reply.
	text := decode(t, evs[done]).Text
	sentences := 1 + strings.Count(text, ". ") + strings.Count(text, "? ") + strings.Count(text, "! ")
	if n := len(idx["reply.delta"]); n == 0 || n > sentences {
		t.Fatalf("%d reply.delta events for %d sentences (%q)", n, sentences, text)
	}
	// Nothing was sent after the event: the gateway idled until hang-up.
	st.mu.Lock()
	v := st.voices[0]
	st.mu.Unlock()
	if got, end := atStop.Load(), v.conn.Sender().SentFrames(); got <= 0 || got != end {
		t.Fatalf("frames sent when reply.audio_stopped arrived %d, at the end %d: audio left after the event", got, end)
	}
}
