package voice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/router"
)

// False alarms on real voices (issue 13 item 2): every recording of
// ../shared/fixtures/audio and its benign/ folder is benign (read speech,
// meetings with overlap and room tone, other languages, background noise),
// so a safety card in a live voice session playing one is a false alarm,
// whether the transcript or the audio spotter raised it.

// benignDefault are the clips of the default run: a LibriVox sentence
// (read narration, the kind that raised crisis cards before the spotter's
// agreement gate) and a CMU ARCTIC sentence.
var benignDefault = []string{"en_librivox_sense_sensibility_0870", "benign/en_cmuarctic_aew_a0001"}

// benignOutcome is what one live session made of a clip.
type benignOutcome struct {
	cards       []string // level of each safety.card
	transcripts []string
	speech      int // turns the turn detector closed (input.speech_stopped)
	failed      int // turns whose recognition failed (error events)
	incomplete  error
	events      string // the session's events, kept when it raised a card
}

// slackStack is a stack whose recogniser may take minutes over a turn:
// on a loaded machine the default budget fails turns ("could not hear"),
// and a turn not heard cannot show whether it would raise a card.
func slackStack(t testing.TB) *stack {
	t.Helper()
	rc := router.DefaultConfig()
	rc.Models = append(rc.Models, router.ModelConfig{Name: router.EmbeddedListen, Provider: router.ProviderPocketsphinx, TTFTMs: 120000, TimeoutMs: 300000})
	rc.Slots = map[string][]string{router.SlotListen: {router.EmbeddedListen}}
	return newStack(t, stackOptions{routerCfg: &rc})
}

// benignStream is clip a with a second of silence after it, as a client
// sends it.
func benignStream(t testing.TB, a *fixtures.Audio) (*fixtures.Stream, time.Duration) {
	t.Helper()
	a = concat(t, a, fixtures.Silence(a.Rate, time.Second))
	return encode(t, a), time.Duration(len(a.Samples)) * time.Second / time.Duration(a.Rate)
}

// playBenign plays s through a live voice session as device and returns
// its cards and transcripts. It may run on any goroutine.
func playBenign(st *stack, s *fixtures.Stream, length time.Duration, device string) (benignOutcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), length+5*time.Minute)
	defer cancel()
	res, err := fixtures.Run(ctx, fixtures.Scenario{
		Client: fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: device},
		Stream: s, Settle: 3 * time.Second, Complete: finalsAnswered,
	})
	var out benignOutcome
	if os.Getenv("VERA_BENIGN_DEBUG") != "" && res != nil {
		fmt.Fprintln(os.Stderr, dumpEvents(res.Events))
	}
	if err != nil {
		if res == nil || !errors.Is(err, fixtures.ErrIncomplete) {
			return out, fmt.Errorf("%s: scenario: %w", device, err)
		}
		out.incomplete = err
	}
	for _, e := range res.Events {
		var p struct {
			Type  string `json:"type"`
			Level string `json:"level"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(e.Data, &p); err != nil {
			return out, fmt.Errorf("%s: event %s: %w", device, e.Data, err)
		}
		switch p.Type {
		case "safety.card":
			out.cards = append(out.cards, p.Level)
		case "transcript.final":
			out.transcripts = append(out.transcripts, p.Text)
		case "input.speech_stopped":
			out.speech++
		case "error":
			out.failed++
		}
	}
	if len(out.cards) > 0 {
		// what raised it (the card's source and the turns around it),
		// since a loaded machine seldom hears a clip the same way twice
		out.events = dumpEvents(res.Events)
	}
	return out, nil
}

// finalsAnswered: every turn has its final transcript or a turn error.
// A turn's card goes out right after its transcript, before any reply, so
// replies need not end. A turn with no words sends neither; the
// scenario's deadline ends such a session.
func finalsAnswered(evs []fixtures.Event) bool {
	stopped := len(ofType(evs, "input.speech_stopped"))
	return len(ofType(evs, "transcript.final"))+len(ofType(evs, "error")) >= stopped
}

// TestBenignRealSpeechNoCard: a real recorded sentence played through a
// live voice session (real pion peer, embedded recogniser, spotter and
// local detector) raises no safety card, on the phone and on the glasses
// (VERA_BENIGN_CLIPS: other comma-separated NAMEs, alternating devices).
func TestBenignRealSpeechNoCard(t *testing.T) {
	dir := fixtures.SharedAudioDir(t)
	st := slackStack(t)
	clips := benignDefault
	if v := os.Getenv("VERA_BENIGN_CLIPS"); v != "" {
		clips = strings.Split(v, ",")
	}
	for i, name := range clips {
		a, err := fixtures.LoadWAV(filepath.Join(dir, name+".16k.wav"))
		if err != nil {
			t.Skipf("shared clip %s absent (%v)", name, err)
		}
		device := []string{"phone", "meta-rayban-display"}[i%2]
		s, length := benignStream(t, a)
		o, err := playBenign(st, s, length, device)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.cards) > 0 {
			t.Errorf("%s on %s: safety cards %v on benign speech (transcripts %q)", name, device, o.cards, o.transcripts)
		}
		if len(o.transcripts) == 0 {
			t.Errorf("%s on %s: no transcript; the clip was not heard, so no card proves nothing", name, device)
		}
	}
}

// TestBenignRealSpeechSweep plays every shared real clip through live voice
// sessions, on the phone and the glasses at once, VERA_BENIGN_RUNS times
// (default 3), and fails on any card, with the session's events. Heavy
// (about 8.5 min of audio a run): set VERA_BENIGN_SWEEP=1; VERA_BENIGN_OUT
// names a file for the per-clip table, VERA_BENIGN_CLIPS the clips to play
// instead of all.
//
//	VERA_SHARED_DIR=/work/shared VERA_BENIGN_SWEEP=1 go test -tags nolibopusfile -run TestBenignRealSpeechSweep -timeout 90m -v ./gateway/voice/
func TestBenignRealSpeechSweep(t *testing.T) {
	if os.Getenv("VERA_BENIGN_SWEEP") == "" {
		t.Skip("heavy sweep; set VERA_BENIGN_SWEEP=1")
	}
	dir := fixtures.SharedAudioDir(t)
	var names []string
	for _, pat := range []string{"*.16k.wav", "benign/*.16k.wav"} {
		files, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range files {
			rel, _ := filepath.Rel(dir, f)
			names = append(names, strings.TrimSuffix(rel, ".16k.wav"))
		}
	}
	// Shortest first, so that a sweep cut short has covered the most clips.
	size := func(n string) int64 {
		fi, err := os.Stat(filepath.Join(dir, n+".16k.wav"))
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	sort.Slice(names, func(i, j int) bool { return size(names[i]) < size(names[j]) })
	if v := os.Getenv("VERA_BENIGN_CLIPS"); v != "" {
		names = strings.Split(v, ",") // a re-run of the clips that raised a card
	}
	runs := 3
	if v := os.Getenv("VERA_BENIGN_RUNS"); v != "" {
		if _, err := fmt.Sscan(v, &runs); err != nil || runs < 1 {
			t.Fatalf("VERA_BENIGN_RUNS=%q", v)
		}
	}
	st := slackStack(t)
	devices := []string{"phone", "meta-rayban-display"}
	var table strings.Builder
	cards, heard, speech := map[string]int{}, map[string]int{}, map[string]int{}
	for run := 1; run <= runs; run++ {
		for _, name := range names {
			s, length := benignStream(t, loadWAV(t, filepath.Join(dir, name+".16k.wav")))
			outs := make([]benignOutcome, len(devices))
			errs := make([]error, len(devices))
			var wg sync.WaitGroup
			for i, dev := range devices {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i], errs[i] = playBenign(st, s, length, dev)
				}()
			}
			wg.Wait()
			for i, dev := range devices {
				if errs[i] != nil {
					t.Fatalf("run %d %s: %v", run, name, errs[i])
				}
				o := outs[i]
				cards[dev] += len(o.cards)
				heard[dev] += len(o.transcripts)
				speech[dev] += o.speech
				line := fmt.Sprintf("run %d\t%s\t%s\tcards %v\tspeech %d\theard %d\tfailed %d\tincomplete %v\t%q\n",
					run, dev, name, o.cards, o.speech, len(o.transcripts), o.failed, o.incomplete != nil, o.transcripts)
				table.WriteString(line)
				t.Log(strings.TrimSpace(line))
				if len(o.cards) > 0 {
					t.Errorf("run %d %s on %s: safety cards %v on benign speech (transcripts %q); events:\n%s", run, name, dev, o.cards, o.transcripts, o.events)
				}
			}
		}
	}
	t.Logf("%d clips x %d runs: cards %v, speech turns %v, heard (final transcript) %v", len(names), runs, cards, speech, heard)
	if p := os.Getenv("VERA_BENIGN_OUT"); p != "" {
		if err := writeFile(p, table.String()); err != nil {
			t.Fatal(err)
		}
	}
}
