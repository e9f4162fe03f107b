package voice

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/fixtures"
)

// policyConfig is testConfig with the turn policy p at its defaults (the
// fixed one as before issue 18: 500 ms).
func policyConfig(p string) *Config {
	c := testConfig()
	if p == turn.PolicyFixed {
		c.Turn = turn.FixedConfig()
	} else {
		c.Turn = turn.AdaptiveConfig()
	}
	return &c
}

// needLiveEOT skips the adaptive policy's live comparisons unless
// VERA_EOT_LIVE=1: the policy is opt-in (fixed is the default), and on a
// shared 2-core machine the recogniser's lag, which both comparisons hinge
// on, decides them about one run in three (issue 18 is open on it). The
// policy's decisions are tested deterministically in audio/turn.
func needLiveEOT(t *testing.T) {
	t.Helper()
	if os.Getenv("VERA_EOT_LIVE") == "" {
		t.Skip("set VERA_EOT_LIVE=1 to compare the adaptive and fixed policies live")
	}
}

// eventAt is the arrival of the first event of type typ, and whether
// there was one.
func eventAt(evs []fixtures.Event, typ string) (time.Time, bool) {
	for _, e := range evs {
		if e.Type == typ {
			return e.At, true
		}
	}
	return time.Time{}, false
}

// turnsSettled (checked only once the whole stream has played): every
// detected turn has its final transcript or failed (a recogniser error on
// a loaded machine is not what these tests judge), and no reply audio is
// playing.
func turnsSettled(evs []fixtures.Event) bool {
	stopped := len(ofType(evs, "input.speech_stopped"))
	done := len(ofType(evs, "transcript.final")) + len(ofType(evs, "error"))
	playing := map[string]bool{}
	for _, e := range evs {
		var p struct {
			TurnID string `json:"turn_id"`
		}
		_ = json.Unmarshal(e.Data, &p)
		switch e.Type {
		case "reply.audio_started":
			playing[p.TurnID] = true
		case "reply.audio_stopped", "reply.interrupted":
			delete(playing, p.TurnID)
		}
	}
	return stopped >= 1 && done >= stopped && len(playing) == 0
}

// TestAdaptivePauseAfterAndStaysOneTurn: over a real pion peer, "I went to
// the store and", a 1 s pause, "I bought some bread" is one turn under the
// adaptive policy (the recogniser's partial ends on "and": hold), and two
// under the fixed 500 ms one, from the same audio in the same run.
func TestAdaptivePauseAfterAndStaysOneTurn(t *testing.T) {
	needLiveEOT(t)
	// Each clip carries 300 ms of silence either side: 300 + 400 + 300 ms.
	a := concat(t, fixture(t, "and_store.16k.wav"), fixtures.Silence(16000, 400*time.Millisecond),
		fixture(t, "and_bread.16k.wav"), fixtures.Silence(16000, 3*time.Second))
	s := encode(t, a)
	turns := map[string]int{}
	for _, p := range []string{turn.PolicyAdaptive, turn.PolicyFixed} {
		st := newStack(t, stackOptions{cfg: policyConfig(p), freshRouter: true})
		res := runScenario(t, st, s, turnsSettled, 120*time.Second)
		evs := res.Events
		turns[p] = len(ofType(evs, "input.speech_stopped"))
		t.Logf("%s: %d turns, transcripts %q, partials:", p, turns[p], transcripts(t, evs))
		for _, e := range ofType(evs, "transcript.partial") {
			t.Logf("  %s", decode(t, e).Text)
		}
	}
	if turns[turn.PolicyAdaptive] != 1 {
		t.Errorf("adaptive: %d turns, want one (the pause after \"and\" is a hold)", turns[turn.PolicyAdaptive])
	}
	// The fixed policy cuts at 500 ms: the same audio is two turns, so the
	// pause really is long enough to split a turn.
	if turns[turn.PolicyFixed] != 2 {
		t.Errorf("fixed: %d turns, want two (the 1 s pause exceeds its 500 ms)", turns[turn.PolicyFixed])
	}
}

// TestAdaptiveQuestionAnsweredSooner: "what time is it" gets its first
// reply text sooner after the speech started under the adaptive policy
// than under the fixed one: the same audio, both sessions in the same run,
// compared by the order of event times (no budget). The turn's end is only
// logged: the adaptive policy waits for a recogniser that has not heard
// the speech to its end, so on a loaded machine its end moves with the
// recogniser's lag, which the reply waits for under either policy.
func TestAdaptiveQuestionAnsweredSooner(t *testing.T) {
	needLiveEOT(t)
	s := encode(t, concat(t, fixture(t, "question.16k.wav"), fixtures.Silence(16000, 3*time.Second)))
	stopped, replied := map[string]time.Duration{}, map[string]time.Duration{}
	for _, p := range []string{turn.PolicyFixed, turn.PolicyAdaptive} {
		st := newStack(t, stackOptions{cfg: policyConfig(p), freshRouter: true})
		res := runScenario(t, st, s, repliesEnded(1), 120*time.Second)
		evs := res.Events
		started, ok1 := eventAt(evs, "input.speech_started")
		stop, ok2 := eventAt(evs, "input.speech_stopped")
		reply, ok3 := eventAt(evs, "reply.delta")
		if !ok1 || !ok2 || !ok3 || len(ofType(evs, "input.speech_stopped")) != 1 {
			t.Fatalf("%s: want one turn with a reply\n%s", p, dumpEvents(evs))
		}
		stopped[p], replied[p] = stop.Sub(started), reply.Sub(started)
		t.Logf("%s: transcripts %q; speech_started → speech_stopped %v, → first reply.delta %v",
			p, transcripts(t, evs), stopped[p], replied[p])
	}
	if replied[turn.PolicyAdaptive] >= replied[turn.PolicyFixed] {
		t.Errorf("adaptive's first reply text came %v after the speech started, fixed's %v: want adaptive sooner",
			replied[turn.PolicyAdaptive], replied[turn.PolicyFixed])
	}
}

// TestPatientSessionWaitsLonger: over a real pion peer, the same audio
// ("I went to the store and", a 1.15 s pause, "I bought some bread") under the
// fixed 500 ms policy is two turns for a session without a patience hint
// and one turn for a session whose hello asks for patience 3 (a 1.5 s
// wait), whose end of turn then comes at least 1.5 s of audio after the
// speech. Sample time only: the fixed policy does not wait on the
// recogniser.
func TestPatientSessionWaitsLonger(t *testing.T) {
	// The clips' own silences make the pause: 0.85 s after "and", 0.3 s
	// before "I bought".
	a := concat(t, fixture(t, "and_store.16k.wav"), fixture(t, "and_bread.16k.wav"), fixtures.Silence(16000, 3*time.Second))
	s := encode(t, a)
	st := newStack(t, stackOptions{cfg: policyConfig(turn.PolicyFixed)})
	turns := map[string][]int64{}
	for _, hello := range []string{"", `{"type":"hello","device":"meta-rayban-display","patience":3}`} {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		sc := fixtures.Scenario{
			Client: fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"},
			Stream: s, Complete: turnsSettled,
		}
		if hello != "" {
			sc.Hello = []byte(hello)
		}
		res, err := fixtures.Run(ctx, sc)
		cancel()
		if err != nil {
			if res != nil {
				t.Logf("events so far:\n%s", dumpEvents(res.Events))
			}
			t.Fatalf("scenario (hello %q): %v", hello, err)
		}
		name := map[bool]string{true: "patience 3", false: "no hint"}[hello != ""]
		for _, e := range ofType(res.Events, "input.speech_stopped") {
			var p struct {
				EndOfTurnMS int64 `json:"end_of_turn_ms"`
			}
			if err := json.Unmarshal(e.Data, &p); err != nil {
				t.Fatal(err)
			}
			turns[name] = append(turns[name], p.EndOfTurnMS)
		}
		t.Logf("%s: end_of_turn_ms %v, transcripts %q", name, turns[name], transcripts(t, res.Events))
	}
	if n := len(turns["no hint"]); n != 2 {
		t.Errorf("no patience hint: %d turns, want two (the 1.15 s pause exceeds the fixed 500 ms)", n)
	}
	if got := turns["patience 3"]; len(got) != 1 {
		t.Errorf("patience 3: %d turns, want one (the wait is 1.5 s)", len(got))
	} else if got[0] < 1500 {
		t.Errorf("patience 3: the turn ended %d ms after the speech, want at least 1500", got[0])
	}
}
