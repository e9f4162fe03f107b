package turn

import (
	"testing"

	"github.com/veraneural/vera-gateway/audio/vad"
)

// overlapRun: 1 s of silence, 1.5 s of the person's own speech at level
// 0.8 (32 dB over the floor), 1 s of silence; then the assistant speaks
// and the person says something of ms at level lv, with transcript text
// given after wordsAt ms (never if negative), then 1 s of silence. It
// returns the events from the assistant's start, with At relative to the
// overlapping speech's start in ms.
func overlapRun(t *testing.T, ms int, lv float32, text string, wordsAt int) (evs []Event, rel func(Event) int) {
	t.Helper()
	d, err := New(AdaptiveConfig())
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, vad.FrameSamples)
	var f vad.Features
	step := func(p float32) []Event {
		e, err := d.ProcessFeatures(frame, p, &f)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	silence := func(n int) {
		for range n {
			f = vad.Features{}
			step(0)
		}
	}
	silence(100)
	for range 150 {
		voicedFrame(&f, 120, 0.8)
		step(0.95)
	}
	silence(300)
	d.SetAssistantSpeaking(true)
	start := d.Now()
	for i := range ms / 10 {
		if wordsAt >= 0 && i == wordsAt/10 {
			d.SetTranscript(text)
		}
		voicedFrame(&f, 130, lv)
		for _, e := range step(0.95) {
			evs = append(evs, e)
		}
	}
	for range 100 {
		f = vad.Features{}
		for _, e := range step(0) {
			evs = append(evs, e)
		}
	}
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
	cases := []struct {
		name      string
		ms        int
		lv        float32
		text      string
		wordsAt   int
		interrupt bool
		atMs      [2]int // OverlapSpeech's time after the speech's start, when it is one
	}{
		{"loud, long: an interruption at barge_in_ms", 700, 0.8, "", -1, true, [2]int{cfg.BargeInMs, cfg.BargeInMs + 20}},
		{"soft, short: a backchannel", 400, 0.15, "", -1, false, [2]int{}},
		{"loud but short: over before barge_in_ms", 180, 0.8, "", -1, false, [2]int{}},
		{"loud, backchannel words first", 450, 0.8, "yeah", 100, false, [2]int{}},
		{"soft, but words that are no backchannel", 600, 0.15, "wait stop", 350, true, [2]int{350, 370}},
		{"soft and long: an interruption at backchannel_ms", 1500, 0.15, "", -1, true, [2]int{cfg.BackchannelMs, cfg.BackchannelMs + 20}},
	}
	for _, c := range cases {
		evs, rel := overlapRun(t, c.ms, c.lv, c.text, c.wordsAt)
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
