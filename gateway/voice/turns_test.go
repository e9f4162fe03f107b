package voice

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// multiTurn is two labelled turns with a 1.5 s pause between them and a
// second of trailing silence.
func multiTurn(t testing.TB) (*fixtures.Audio, int) {
	pause := fixtures.Silence(16000, 1500*time.Millisecond)
	return concat(t, fixture(t, "gohome.16k.wav"), pause, fixture(t, "lights.16k.wav"), fixtures.Silence(16000, time.Second)), 2
}

func checkTurns(t *testing.T, res *fixtures.Result, want int) {
	t.Helper()
	evs := res.Events
	started, stopped := len(ofType(evs, "input.speech_started")), len(ofType(evs, "input.speech_stopped"))
	trs := transcripts(t, evs)
	if started != want || stopped != want || len(trs) != want {
		t.Fatalf("speech_started %d, speech_stopped %d, transcripts %q; want %d turns\n%s",
			started, stopped, trs, want, dumpEvents(evs))
	}
	for i, tr := range trs {
		if strings.TrimSpace(tr) == "" {
			t.Errorf("turn %d: empty transcript", i+1)
		}
	}
}

// TestMultiTurnWithPauses: speech, 1.5 s of silence, speech → two turns.
func TestMultiTurnWithPauses(t *testing.T) {
	st := newStack(t, stackOptions{})
	a, want := multiTurn(t)
	res := runScenario(t, st, encode(t, a), repliesEnded(want), 120*time.Second)
	checkTurns(t, res, want)
	trs := transcripts(t, res.Events)
	// The second turn starts over the first reply (a barge-in), and the
	// pooled decoder's state makes espeak's voice come out differently from
	// run to run, so only the first turn's words are asserted.
	if !strings.Contains(trs[0], "would like to go") {
		t.Errorf("transcripts %q: first lacks %q", trs, "would like to go")
	}
}

// TestImpairedNetworkSameTurns: loss, jitter and reordering (deterministic
// by seed) do not change the turns the gateway detects.
func TestImpairedNetworkSameTurns(t *testing.T) {
	st := newStack(t, stackOptions{})
	a, want := multiTurn(t)
	clean := encode(t, a)
	for _, im := range []fixtures.Impairment{
		{Seed: 1, LossPct: 5},
		{Seed: 2, LossPct: 10},
		{Seed: 3, Jitter: 30 * time.Millisecond},
		{Seed: 4, Jitter: 60 * time.Millisecond},
		{Seed: 5, ReorderPct: 10},
	} {
		t.Run(fmt.Sprintf("loss%.0f_jitter%v_reorder%.0f", im.LossPct, im.Jitter, im.ReorderPct), func(t *testing.T) {
			res := runScenario(t, st, fixtures.Impair(clean, im), repliesEnded(want), 120*time.Second)
			checkTurns(t, res, want)
			t.Logf("transcripts %q", transcripts(t, res.Events))
		})
	}
}

// TestRealSpeechTranscript: a human recording from the shared fixtures is
// transcribed exactly through the whole live path.
func TestRealSpeechTranscript(t *testing.T) {
	dir := fixtures.SharedAudioDir(t)
	path := filepath.Join(dir, "en_cmu_goforward.16k.wav")
	a, err := fixtures.LoadWAV(path)
	if err != nil {
		t.Skipf("shared speech fixture absent (%v): set VERA_SHARED_DIR or check out ../shared", err)
	}
	st := newStack(t, stackOptions{freshRouter: true})
	a = concat(t, a, fixtures.Silence(a.Rate, time.Second))
	res := runScenario(t, st, encode(t, a), nil, 90*time.Second)
	trs := transcripts(t, res.Events)
	if len(trs) != 1 || trs[0] != "go forward ten meters" {
		t.Fatalf("transcripts %q, want [\"go forward ten meters\"]\n%s", trs, dumpEvents(res.Events))
	}
}
