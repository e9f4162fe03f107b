package turn

import (
	"math"
	"testing"

	"github.com/veraneural/vera-gateway/audio/vad"
)

// overlapRun: 1 s of silence, 1.5 s of the person's own speech (a 200 Hz
// tone at −15 dBFS), 1 s of silence; then the assistant speaks (its echo, a
// 400 Hz tone echoDb under the person's level, −∞: none, which the echo
// guard keeps from the detector: probability 0) for 0.5 s, and the person
// says something of ms (the echo ducked by DuckDb from 100 ms in), underDb under their level, with transcript text
// given after wordsAt ms (never if negative), then 1 s of silence. It
// returns the events from the assistant's start, with At relative to the
// overlapping speech's start in ms.
func overlapRun(t *testing.T, ms int, underDb, echoDb float64, text string, wordsAt int) (evs []Event, rel func(Event) int) {
	t.Helper()
	d, err := New(AdaptiveConfig())
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, vad.FrameSamples)
	var f vad.Features
	n := 0 // samples so far: the tones' phase
	const amp = 0.25 * 32768
	fill := func(speechDb, echo float64) {
		sa, ea := amp*math.Pow(10, speechDb/20), amp*math.Pow(10, echo/20)
		for i := range frame {
			x := float64(n+i) / SampleRate
			frame[i] = int16(sa*math.Sin(2*math.Pi*200*x) + ea*math.Sin(2*math.Pi*400*x))
		}
		n += len(frame)
	}
	step := func(p float32) []Event {
		e, err := d.ProcessFeatures(frame, p, &f)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	quiet := func(frames int, echo float64) (out []Event) {
		for range frames {
			f = vad.Features{}
			fill(math.Inf(-1), echo)
			out = append(out, step(0)...)
		}
		return out
	}
	quiet(100, math.Inf(-1))
	for range 150 {
		voicedFrame(&f, 120, 0.8)
		fill(0, math.Inf(-1))
		step(0.95)
	}
	quiet(100, math.Inf(-1))
	d.SetAssistantSpeaking(true)
	evs = append(evs, quiet(50, -echoDb)...)
	start := d.Now()
	for i := range ms / 10 {
		if wordsAt >= 0 && i == wordsAt/10 {
			d.SetTranscript(text)
		}
		voicedFrame(&f, 130, 0.8)
		echo := -echoDb
		if i >= 10 {
			echo -= DuckDb // the session ducks at OverlapStarted; the echo follows 100 ms later
		}
		fill(-underDb, echo)
		evs = append(evs, step(0.95)...)
	}
	evs = append(evs, quiet(100, -echoDb)...)
	return evs, func(e Event) int { return int((e.At - start) * 1000 / SampleRate) }
}

func find(evs []Event, typ EventType) (Event, bool) {
	for _, e := range evs {
		if e.Type == typ {
			return e, true
		}
	}
	return Event{}, false
}

func TestBargeInBackchannelOrInterruption(t *testing.T) {
	cfg := AdaptiveConfig()
	none := math.Inf(1) // no echo: infinitely far under the person's level
	cases := []struct {
		name            string
		ms              int
		underDb, echoDb float64
		text            string
		wordsAt         int
		interrupt       bool
		atMs            [2]int // OverlapSpeech's time after the speech's start, when it is one
	}{
		{"loud, long: an interruption at barge_in_ms", 700, 0, none, "", -1, true, [2]int{cfg.BargeInMs, cfg.BargeInMs + 20}},
		{"loud over the echo: an interruption at barge_in_ms", 700, 2, 14, "", -1, true, [2]int{cfg.BargeInMs, cfg.BargeInMs + 20}},
		{"soft, short: a backchannel", 400, 12, none, "", -1, false, [2]int{}},
		{"soft, short, over an echo as loud: a backchannel (its sum is not soft)", 400, 6, 6, "", -1, false, [2]int{}},
		{"loud but short: over before barge_in_ms", cfg.BargeInMs - 50, 0, 14, "", -1, false, [2]int{}},
		{"loud, backchannel words first", 450, 0, 14, "yeah", 100, false, [2]int{}},
		{"soft, short, words that are no backchannel: a backchannel still", 450, 12, 14, "what do you", 100, false, [2]int{}},
		{"soft, long, words that are no backchannel: an interruption at 600 ms", 900, 12, 14, "wait stop", 350, true, [2]int{600, 620}},
		{"soft and long: an interruption at backchannel_ms", 1500, 12, 14, "", -1, true, [2]int{cfg.BackchannelMs, cfg.BackchannelMs + 20}},
	}
	for _, c := range cases {
		evs, rel := overlapRun(t, c.ms, c.underDb, c.echoDb, c.text, c.wordsAt)
		st, ok := find(evs, OverlapStarted)
		if !ok || rel(st) > 20 {
			t.Errorf("%s: OverlapStarted %v at %d ms, want at once", c.name, ok, rel(st))
			continue
		}
		ov, got := find(evs, OverlapSpeech)
		_, ended := find(evs, OverlapEnded)
		switch {
		case got != c.interrupt:
			t.Errorf("%s: interruption %v, want %v (events %v)", c.name, got, c.interrupt, evs)
		case got && (rel(ov) < c.atMs[0] || rel(ov) > c.atMs[1]):
			t.Errorf("%s: OverlapSpeech at %d ms, want in %v", c.name, rel(ov), c.atMs)
		case got == ended:
			t.Errorf("%s: OverlapSpeech %v and OverlapEnded %v: want exactly one", c.name, got, ended)
		}
		if stop, ok := find(evs, SpeechStopped); ok && !stop.Overlapped {
			t.Errorf("%s: the turn over the assistant's voice is not marked Overlapped", c.name)
		}
	}
}

// Without the assistant speaking there are no overlap events, and turns
// are not marked as overlapped.
func TestNoOverlapWithoutAssistant(t *testing.T) {
	d, _ := New(AdaptiveConfig())
	frame := make([]int16, vad.FrameSamples)
	var f vad.Features
	for i := range 400 {
		if i >= 50 && i < 150 {
			voicedFrame(&f, 120, 0.8)
		} else {
			f = vad.Features{}
		}
		p := float32(0)
		if i >= 50 && i < 150 {
			p = 0.95
		}
		evs, _ := d.ProcessFeatures(frame, p, &f)
		for _, e := range evs {
			if e.Type == OverlapStarted || e.Type == OverlapSpeech || e.Type == OverlapEnded || e.Overlapped {
				t.Fatalf("event %+v without the assistant speaking", e)
			}
		}
	}
}
