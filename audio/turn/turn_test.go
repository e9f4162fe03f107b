package turn

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const f10 = 160 // 10 ms

// run feeds 10 ms frames whose samples count up from 0 (so audio can be
// checked by value) with probabilities ps and collects copies of the events.
func run(t *testing.T, d *Detector, ps []float32, raws []float32) []Event {
	t.Helper()
	var out []Event
	frame := make([]int16, f10)
	for i, p := range ps {
		for j := range frame {
			frame[j] = int16((i*f10 + j) % 30000)
		}
		raw := p
		if raws != nil {
			raw = raws[i]
		}
		evs, err := d.ProcessRaw(frame, p, raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			e.Audio = append([]int16(nil), e.Audio...)
			out = append(out, e)
		}
	}
	return out
}

func seq(parts ...any) []float32 {
	var out []float32
	for i := 0; i < len(parts); i += 2 {
		for range parts[i+1].(int) {
			out = append(out, parts[i].(float32))
		}
	}
	return out
}

func newDet(t *testing.T) *Detector {
	t.Helper()
	d, err := New(FixedConfig())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTurnLifecycle(t *testing.T) {
	d := newDet(t)
	// 1 s silence, 1 s speech (one 200 ms dip to 0.4 stays in the turn), 1 s silence.
	ps := seq(float32(0), 100, float32(0.9), 40, float32(0.4), 20, float32(0.9), 40, float32(0.1), 100)
	evs := run(t, d, ps, nil)
	if len(evs) != 2 || evs[0].Type != SpeechStarted || evs[1].Type != SpeechStopped {
		t.Fatalf("events %+v", evs)
	}
	st, sp := evs[0], evs[1]
	if st.SpeechStart != 100*f10 || st.AudioStart != 100*f10-4800 || st.At != 110*f10 {
		t.Fatalf("start %+v: want speech at 16000, audio at 11200 (300 ms prefix), decided after 100 ms", st)
	}
	// True end: end of the last frame >= exit threshold, i.e. 2 s.
	if sp.SpeechEnd != 200*f10 || sp.MaxTurn {
		t.Fatalf("stop %+v: want SpeechEnd 32000", sp)
	}
	if sp.At != 200*f10+8000 {
		t.Fatalf("stop decided at %d, want 500 ms after the end (%d)", sp.At, 200*f10+8000)
	}
	if int64(len(sp.Audio)) != sp.SpeechEnd-sp.AudioStart {
		t.Fatalf("audio %d samples, want %d", len(sp.Audio), sp.SpeechEnd-sp.AudioStart)
	}
	for i, s := range sp.Audio {
		if want := int16((int(sp.AudioStart) + i) % 30000); s != want {
			t.Fatalf("audio sample %d = %d, want %d (prefix/turn audio out of order)", i, s, want)
		}
	}
	if d.Speaking() || d.Now() != int64(len(ps)*f10) {
		t.Fatalf("speaking %v now %d", d.Speaking(), d.Now())
	}
}

func TestShortBlipIsNotATurn(t *testing.T) {
	d := newDet(t)
	evs := run(t, d, seq(float32(0), 50, float32(0.9), 5, float32(0), 100), nil)
	if len(evs) != 0 {
		t.Fatalf("50 ms blip made events %+v", evs)
	}
}

func TestPrefixAtStreamStart(t *testing.T) {
	d := newDet(t)
	evs := run(t, d, seq(float32(0), 10, float32(0.9), 30, float32(0), 60), nil)
	if len(evs) != 2 || evs[0].AudioStart != 0 || evs[1].Audio[0] != 0 {
		t.Fatalf("events %+v", evs)
	}
}

func TestRawPlacesTrueEnd(t *testing.T) {
	d := newDet(t)
	ps := seq(float32(0), 10, float32(0.9), 100, float32(0.6), 10, float32(0), 60)
	raws := seq(float32(0), 10, float32(0.9), 95, float32(0.1), 15, float32(0), 60)
	evs := run(t, d, ps, raws)
	if len(evs) != 2 || evs[1].SpeechEnd != 105*f10 {
		t.Fatalf("events %+v: want SpeechEnd at the raw end 16800", evs)
	}
}

func TestMaxTurn(t *testing.T) {
	cfg := FixedConfig()
	cfg.MaxTurnMs = 2000
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	evs := run(t, d, seq(float32(0.9), 450), nil)
	var stops, starts int
	for _, e := range evs {
		switch e.Type {
		case SpeechStopped:
			stops++
			if !e.MaxTurn || e.SpeechEnd-e.SpeechStart != 2000*16 {
				t.Fatalf("max-turn stop %+v", e)
			}
			if int64(len(e.Audio)) > (2000+300)*16 {
				t.Fatalf("turn audio %d samples exceeds the bound", len(e.Audio))
			}
		case SpeechStarted:
			starts++
		}
	}
	if stops != 2 || starts != 3 {
		t.Fatalf("4.5 s of speech with a 2 s max: %d stops %d starts", stops, starts)
	}
}

func TestOverlapSpeech(t *testing.T) {
	d := newDet(t)
	d.SetAssistantSpeaking(true)
	evs := run(t, d, seq(float32(0), 10, float32(0.9), 60, float32(0), 60), nil)
	var ov []Event
	for _, e := range evs {
		if e.Type == OverlapSpeech {
			ov = append(ov, e)
		}
	}
	if want := int64(10*f10 + d.cfg.BargeInMs*16); len(ov) != 1 || ov[0].At != want {
		t.Fatalf("overlap events %+v: want one at barge_in_ms of speech (sample %d)", ov, want)
	}
	// Without the assistant speaking there is no overlap event.
	d2 := newDet(t)
	for _, e := range run(t, d2, seq(float32(0.9), 60), nil) {
		if e.Type == OverlapSpeech {
			t.Fatal("overlap reported while the assistant is silent")
		}
	}
	// User speech shorter than barge_in_ms during playout is not a barge-in.
	d3 := newDet(t)
	d3.SetAssistantSpeaking(true)
	short := d3.cfg.BargeInMs/10 - 5
	for _, e := range run(t, d3, seq(float32(0.9), short, float32(0), 80), nil) {
		if e.Type == OverlapSpeech {
			t.Fatalf("%d ms of speech reported as barge-in", short*10)
		}
	}
}

func TestBadInput(t *testing.T) {
	d := newDet(t)
	if _, err := d.Process(nil, 0.5); !errors.Is(err, ErrFrame) {
		t.Fatalf("empty: %v", err)
	}
	if _, err := d.Process(make([]int16, 2000), 0.5); !errors.Is(err, ErrFrame) {
		t.Fatalf("oversized: %v", err)
	}
	if _, err := d.Process(make([]int16, 160), float32(math.NaN())); !errors.Is(err, ErrFrame) {
		t.Fatalf("NaN: %v", err)
	}
	if d.Now() != 0 {
		t.Fatal("rejected frames advanced the clock")
	}
}

func TestConfigValidate(t *testing.T) {
	cases := map[string]func(*Config){
		"threshold":           func(c *Config) { c.Threshold = 1 },
		"exit_threshold":      func(c *Config) { c.ExitThreshold = 0.6 },
		"prefix_padding_ms":   func(c *Config) { c.PrefixPaddingMs = -1 },
		"min_speech_ms":       func(c *Config) { c.MinSpeechMs = 9000 },
		"silence_duration_ms": func(c *Config) { c.SilenceDurationMs = 0 },
		"max_turn_ms":         func(c *Config) { c.MaxTurnMs = 10 },
		"barge_in_ms":         func(c *Config) { c.BargeInMs = -5 },
		"end_run_ms":          func(c *Config) { c.EndRunMs = c.SilenceDurationMs },
	}
	for key, f := range cases {
		c := FixedConfig()
		f(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "turn."+key) {
			t.Errorf("%s: %v", key, err)
		}
	}
}

func TestNoAllocsSteadyState(t *testing.T) {
	d := newDet(t)
	frame := make([]int16, f10)
	ps := seq(float32(0), 50, float32(0.9), 100, float32(0), 60)
	for _, p := range ps { // warm: the turn buffer reaches its size
		d.Process(frame, p)
	}
	i := 0
	allocs := testing.AllocsPerRun(len(ps), func() {
		d.Process(frame, ps[i%len(ps)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per frame", allocs)
	}
}

func BenchmarkProcess10ms(b *testing.B) {
	d, _ := New(FixedConfig())
	frame := make([]int16, f10)
	ps := seq(float32(0), 50, float32(0.9), 100, float32(0.2), 60)
	b.ReportAllocs()
	i := 0
	cpu := cpuTime()
	for b.Loop() {
		if _, err := d.Process(frame, ps[i%len(ps)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportCPU(b, cpu)
}
