package turn

import (
	"errors"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/audio/vad"
)

// voicedFrame fills f as the VAD would describe 10 ms of voiced speech at
// pitch hz and level lv (share of the floor-to-peak range, 40 dB SNR).
func voicedFrame(f *vad.Features, hz, lv float32) {
	*f = vad.Features{Raw: 0.95, Pitch: hz}
	f.X[4], f.X[8], f.X[9] = 0.9, lv, 40
}

// feedTurn plays 1 s of silence, then speech whose pitch goes from hz0 to
// hz1 over its last 0.4 s (1.2 s at hz0 before), then silence, through a
// detector built from cfg, calling words (if set) when the speech ends;
// it returns the SpeechStopped event's delay after the speech in ms, or
// -1 when none came within 4 s.
func feedTurn(t *testing.T, cfg Config, hz0, hz1 float32, words string) int {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, vad.FrameSamples)
	var f vad.Features
	step := func(p float32) []Event {
		evs, err := d.ProcessFeatures(frame, p, &f)
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	for range 100 {
		f = vad.Features{}
		step(0)
	}
	for i := range 160 {
		hz := hz0
		if i >= 120 {
			hz = hz0 + (hz1-hz0)*float32(i-120)/40
		}
		voicedFrame(&f, hz, 0.8)
		step(0.95)
	}
	end := d.Now()
	for i := range 400 {
		if i == 20 && words != "" {
			d.SetTranscript(words)
		}
		f = vad.Features{}
		for _, e := range step(0) {
			if e.Type == SpeechStopped {
				if e.SpeechEnd != end {
					t.Fatalf("speech end %d, want %d", e.SpeechEnd, end)
				}
				return int((e.At - end) * 1000 / SampleRate)
			}
		}
	}
	return -1
}

// The adaptive wait follows the evidence and stays inside
// [silence_duration_ms, max_silence_ms]; the fixed one does not move.
func TestAdaptiveWaitFollowsEvidence(t *testing.T) {
	cfg := AdaptiveConfig()
	fall := feedTurn(t, cfg, 140, 100, "")
	rise := feedTurn(t, cfg, 110, 150, "")
	if !(rise > fall) {
		t.Errorf("rising contour waits %d ms, falling %d ms: want the rise to wait longer", rise, fall)
	}
	hold := feedTurn(t, cfg, 140, 100, "i went to the store and")
	end := feedTurn(t, cfg, 140, 100, "that's all thank you")
	if !(hold > fall && end <= fall) {
		t.Errorf("trailing \"and\" waits %d ms, closing formula %d ms, no words %d ms", hold, end, fall)
	}
	t.Logf("waits: falling %d ms, rising %d ms, trailing \"and\" %d ms, closing %d ms", fall, rise, hold, end)
	for name, ms := range map[string]int{"fall": fall, "rise": rise, "hold": hold, "end": end} {
		if ms < cfg.SilenceDurationMs || ms > cfg.MaxSilenceMs+10 {
			t.Errorf("%s: waited %d ms, outside [%d, %d]", name, ms, cfg.SilenceDurationMs, cfg.MaxSilenceMs)
		}
	}
	// Certain evidence either way hits the bounds, never past them.
	sure := DefaultWeights()
	sure.Bias, sure.W[EvWordsEnd] = 20, 20
	c := cfg
	c.Weights = &sure
	if ms := feedTurn(t, c, 140, 100, "thank you"); ms < cfg.SilenceDurationMs || ms > cfg.SilenceDurationMs+10 {
		t.Errorf("certain end waited %d ms, want %d", ms, cfg.SilenceDurationMs)
	}
	sure.Bias, sure.W[EvWordsHold] = -40, -20
	if ms := feedTurn(t, c, 140, 100, "and"); ms < cfg.MaxSilenceMs || ms > cfg.MaxSilenceMs+10 {
		t.Errorf("certain hold waited %d ms, want %d", ms, cfg.MaxSilenceMs)
	}
	fixed := FixedConfig()
	for _, w := range []string{"", "and", "thank you"} {
		if ms := feedTurn(t, fixed, 140, 100, w); ms != fixed.SilenceDurationMs {
			t.Errorf("fixed policy, words %q: waited %d ms, want %d", w, ms, fixed.SilenceDurationMs)
		}
	}
}

// Patience widens every wait, the bounds included, by its factor.
// A recogniser that has not heard the speech to its end (behind a busy
// machine) keeps the adaptive policy waiting for its words, never past
// max_silence_ms; once they come, the wait is what they say. Without a
// recogniser the policy does not wait for words.
func TestAdaptiveWaitsForLaggingWords(t *testing.T) {
	cfg := AdaptiveConfig()
	run := func(lagFrames int, words string) int {
		d, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		frame := make([]int16, vad.FrameSamples)
		var f vad.Features
		step := func(p float32) []Event {
			evs, err := d.ProcessFeatures(frame, p, &f)
			if err != nil {
				t.Fatal(err)
			}
			return evs
		}
		for range 100 {
			f = vad.Features{}
			step(0)
		}
		for i := range 160 {
			voicedFrame(&f, 140-float32(max(i-120, 0)), 0.8)
			step(0.95)
			if i == 10 && lagFrames >= 0 {
				d.SetTranscriptHeard("", d.Now()-20*vad.FrameSamples) // a recogniser listens
			}
		}
		end := d.Now()
		for i := range 400 {
			if lagFrames >= 0 && i == lagFrames {
				d.SetTranscriptHeard(words, end+int64(settleSamples))
			}
			f = vad.Features{}
			for _, e := range step(0) {
				if e.Type == SpeechStopped {
					return int((e.At - end) * 1000 / SampleRate)
				}
			}
		}
		return -1
	}
	alone := run(-1, "")
	soon := run(25, "what time is it")
	late := run(120, "what time is it")
	never := run(1000, "")
	t.Logf("no recogniser %d ms; question heard after 250 ms: %d ms, after 1.2 s: %d ms; never: %d ms", alone, soon, late, never)
	if !(soon >= 250 && soon <= 260) || !(late >= 1200 && late <= 1210) {
		t.Errorf("the turn ended %d and %d ms after the speech, want as soon as the question's words came (250, 1200 ms)", soon, late)
	}
	if never < cfg.MaxSilenceMs || never > cfg.MaxSilenceMs+10 {
		t.Errorf("words that never come: ended after %d ms, want max_silence_ms %d", never, cfg.MaxSilenceMs)
	}
	if alone < cfg.SilenceDurationMs || alone >= cfg.MaxSilenceMs {
		t.Errorf("no recogniser: ended after %d ms, want the prosody's wait, under max_silence_ms", alone)
	}
}

func TestPatienceWidensWaits(t *testing.T) {
	fixed := FixedConfig()
	d, err := New(fixed)
	if err != nil {
		t.Fatal(err)
	}
	d.SetPatience(2)
	if got := d.MaxWaitMs(); got != 2*fixed.SilenceDurationMs {
		t.Fatalf("fixed, patience 2: max wait %d ms, want %d", got, 2*fixed.SilenceDurationMs)
	}
	d.SetPatience(10)
	if got := d.MaxWaitMs(); got != MaxPatience*fixed.SilenceDurationMs {
		t.Fatalf("patience 10: max wait %d ms, want it clamped to %d", got, MaxPatience*fixed.SilenceDurationMs)
	}
	d.SetPatience(float32(math.NaN()))
	if got := d.MaxWaitMs(); got != fixed.SilenceDurationMs {
		t.Fatalf("patience NaN: max wait %d ms, want %d", got, fixed.SilenceDurationMs)
	}
	cfg := AdaptiveConfig()
	base := feedTurn(t, cfg, 140, 100, "")
	d2, _ := New(cfg)
	d2.SetPatience(1.5)
	if got := d2.MaxWaitMs(); got != cfg.MaxSilenceMs*3/2 {
		t.Fatalf("adaptive, patience 1.5: max wait %d, want %d", got, cfg.MaxSilenceMs*3/2)
	}
	// A patient detector waits longer on the same pause.
	patient := feedTurnPatient(t, cfg, 1.5)
	if !(patient > base) {
		t.Errorf("patience 1.5 waited %d ms, 1 waited %d ms", patient, base)
	}
}

func feedTurnPatient(t *testing.T, cfg Config, p float32) int {
	t.Helper()
	w := DefaultWeights()
	c := cfg
	c.Weights = &w
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	d.SetPatience(p)
	frame := make([]int16, vad.FrameSamples)
	var f vad.Features
	for range 100 {
		f = vad.Features{}
		if _, err := d.ProcessFeatures(frame, 0, &f); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 160 {
		voicedFrame(&f, 140-40*float32(max(i-120, 0))/40, 0.8)
		if _, err := d.ProcessFeatures(frame, 0.95, &f); err != nil {
			t.Fatal(err)
		}
	}
	end := d.Now()
	for range 600 {
		f = vad.Features{}
		evs, _ := d.ProcessFeatures(frame, 0, &f)
		for _, e := range evs {
			if e.Type == SpeechStopped {
				return int((e.At - end) * 1000 / SampleRate)
			}
		}
	}
	return -1
}

func TestAdaptiveConfigValidate(t *testing.T) {
	cases := map[string]func(*Config){
		"policy":         func(c *Config) { c.Policy = "psychic" },
		"max_silence_ms": func(c *Config) { c.MaxSilenceMs = c.SilenceDurationMs - 1 },
		"backchannel_ms": func(c *Config) { c.BackchannelMs = c.BargeInMs - 1 },
		"weights_file":   func(c *Config) { c.WeightsFile = "/nonexistent/weights.json" },
		"weights":        func(c *Config) { w := DefaultWeights(); w.W[EvSilence] = -1; c.Weights = &w },
	}
	for key, f := range cases {
		c := AdaptiveConfig()
		f(&c)
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "turn."+key) {
			t.Errorf("%s: %v", key, err)
		}
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: New accepted it: %v", key, err)
		}
	}
}

func TestDefaultWeights(t *testing.T) {
	w, err := ParseWeights(defaultWeightsJSON)
	if err != nil {
		t.Fatalf("weights.json: %v", err)
	}
	if w.About == "" || strings.HasPrefix(DefaultWeights().About, "fallback") {
		t.Fatalf("weights.json has no provenance: %+v", w)
	}
	b, err := w.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	w2, err := ParseWeights(b)
	if err != nil || w2 != w {
		t.Fatalf("round trip: %+v, %v", w2, err)
	}
	for _, bad := range []string{
		`{"bias":0,"threshold":0.5,"weights":{}}`,
		`{"bias":0,"threshold":0.5,"weights":{"silence":1,"nonsense":2}}`,
		`{"bias":0,"threshold":1.5}`,
		`not json`,
	} {
		if _, err := ParseWeights([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// Frames and decisions allocate nothing, the transcript included.
func TestAdaptiveNoAllocs(t *testing.T) {
	d, err := New(AdaptiveConfig())
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]int16, vad.FrameSamples)
	var f vad.Features
	i := 0
	step := func() {
		k := i % 300
		switch {
		case k < 50:
			f = vad.Features{}
			d.ProcessFeatures(frame, 0, &f)
		case k < 200:
			voicedFrame(&f, 120+float32(k%20), 0.7)
			d.ProcessFeatures(frame, 0.9, &f)
		default:
			if k == 210 {
				d.SetTranscript("i went to the store and")
			}
			f = vad.Features{}
			d.ProcessFeatures(frame, 0, &f)
		}
		i++
	}
	for range 600 {
		step()
	}
	if n := testing.AllocsPerRun(900, step); n != 0 {
		t.Fatalf("%v allocations per frame", n)
	}
}

// BenchmarkAdaptiveFrame is the detector's cost per 10 ms frame with the
// adaptive policy over a turn cycle (0.5 s silence, 2.5 s speech, then 3 s
// of silence with a transcript ending on "and" every 300 ms, so the pause
// waits to max_silence_ms and the turn ends), against the fixed policy on
// the same frames. cpu-ns/op is the process's CPU time per frame: on the
// shared machine ns/op also counts the time the benchmark waited for a core.
func BenchmarkAdaptiveFrame(b *testing.B) {
	for _, pol := range []string{PolicyFixed, PolicyAdaptive} {
		b.Run(pol, func(b *testing.B) {
			cfg := AdaptiveConfig()
			cfg.Policy = pol
			d, _ := New(cfg)
			frame := make([]int16, vad.FrameSamples)
			var f vad.Features
			i := 0
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				k := i % 600
				switch {
				case k < 50:
					f = vad.Features{}
					d.ProcessFeatures(frame, 0, &f)
				case k < 300:
					voicedFrame(&f, 120+float32(k%25), 0.7)
					d.ProcessFeatures(frame, 0.9, &f)
				default:
					if k%30 == 0 {
						d.SetTranscript("so i went to the store and")
					}
					f = vad.Features{}
					d.ProcessFeatures(frame, 0, &f)
				}
				i++
			}
			reportCPU(b, cpu)
		})
	}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start (cpu-ns/op).
func reportCPU(b *testing.B, start time.Duration) {
	if n := b.N; n > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(n), "cpu-ns/op")
	}
}

// BenchmarkAdaptiveDecision is one pause's decision: the prosody summary
// of the speech before it, the evidence and the wait (what the detector
// does on the first silent frame after speech), plus a transcript update.
func BenchmarkAdaptiveDecision(b *testing.B) {
	d, _ := New(AdaptiveConfig())
	frame := make([]int16, vad.FrameSamples)
	var f vad.Features
	for i := range 200 {
		voicedFrame(&f, 100+float32(i%30), 0.5+float32(i%7)/10)
		d.ProcessFeatures(frame, 0.9, &f)
	}
	d.st, d.lastSpeechEnd = speaking, d.now
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		d.pol.pause(d)
		d.pol.setWords(d.pol.lex.classify("i went to the store and"), d.now, d.now, d)
	}
	reportCPU(b, cpu)
}

// TestProsodyNewCues: the final pitch slope is negative for a fall and
// positive for a rise, and octave errors (a halved pitch in the last
// frames) are folded, not read as a fall; a quiet final segment has
// negative final energy; a long final segment positive syllable length; a
// fall ends near the speaker's pitch floor, a rise above it; a level final
// segment is flat.
func TestProsodyNewCues(t *testing.T) {
	run := func(hz func(i int) float32, lv func(i int) float32, seg int) prosodic {
		var pr prosody
		var f vad.Features
		const n = 120
		for i := range n {
			// Syllables of seg voiced frames, two unvoiced between, the last
			// segment (the final 20 frames) whole.
			if i < n-20 && i%(seg+2) >= seg {
				f = vad.Features{Raw: 0.95, Pitch: 0}
				f.X[8], f.X[9] = lv(i), 40
			} else {
				voicedFrame(&f, hz(i), lv(i))
			}
			pr.push(true, &f)
		}
		return pr.summarise(pr.n)
	}
	flat := func(int) float32 { return 0.5 }
	fall := run(func(i int) float32 { return 200 - float32(max(i-90, 0))*2 }, flat, 6)
	rise := run(func(i int) float32 { return 200 + float32(max(i-90, 0))*2 }, flat, 6)
	if !(fall.pitchSlope < -2 && rise.pitchSlope > 2) {
		t.Errorf("pitch slope: fall %.2f, rise %.2f semitones over 0.3 s", fall.pitchSlope, rise.pitchSlope)
	}
	octave := run(func(i int) float32 {
		if i >= 110 {
			return 100 // a halved period: 12 semitones down
		}
		return 200
	}, flat, 6)
	if octave.pitchSlope < -1 {
		t.Errorf("octave error read as a fall: slope %.2f", octave.pitchSlope)
	}
	quiet := run(func(int) float32 { return 200 }, func(i int) float32 {
		if i >= 100 {
			return 0.25
		}
		return 0.5
	}, 6)
	if !(quiet.finalEnergy < -5) {
		t.Errorf("final energy of a quiet last segment: %.1f dB", quiet.finalEnergy)
	}
	if !(fall.syllableLength > 0.5) {
		t.Errorf("a 200 ms final segment after 80 ms syllables: syllable length %.2f", fall.syllableLength)
	}
	// A fall ends at the bottom of the speaker's range, a rise above it.
	if !(fall.pitchFloor < 1 && rise.pitchFloor > 2) {
		t.Errorf("pitch above the floor: fall %.2f, rise %.2f semitones", fall.pitchFloor, rise.pitchFloor)
	}
	// A level 200 ms final segment is flat; one falling 4 semitones is not.
	if !(quiet.finalFlat == 1 && fall.finalFlat == 0) {
		t.Errorf("final flatness: level %.2f, falling %.2f", quiet.finalFlat, fall.finalFlat)
	}
}
