package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

// TestWordPointsAndRTTMPoints: the labels' decision points, by hand.
func TestWordPointsAndRTTMPoints(t *testing.T) {
	ms := func(v int64) int64 { return v * msSamples }
	ws := []word{{ms(0), ms(300), "i"}, {ms(350), ms(700), "went"}, {ms(900), ms(1200), "home"}}
	got := wordPoints(ws, ms(2000))
	want := []eotPoint{{S: ms(700), E: ms(900)}, {S: ms(1200), E: ms(2000), End: true}}
	if !slices.Equal(got, want) {
		t.Fatalf("word points %+v, want %+v (the 50 ms gap is no point)", got, want)
	}
	ts := []rttmTurn{{ms(0), ms(1000), "A"}, {ms(1500), ms(2000), "A"}, {ms(2300), ms(3000), "B"}}
	pts := rttmPoints(ts, make([]int16, ms(4000)))
	var holds, ends int
	for _, p := range pts {
		if p.End {
			ends++
		} else {
			holds++
		}
	}
	// A→A gap: hold; A→B: end (another speaker follows); B to the clip's
	// end: end. Digital silence has no quiet runs inside a turn to add.
	if holds != 1 || ends != 2 || !pts[1].Next || pts[2].Next {
		t.Fatalf("rttm points %+v: want 1 hold, 2 ends, the first followed by another speaker", pts)
	}
}

// TestEOTCommandOnTinySet runs "vera-eval eot -json" on a two-point set
// made from committed clips (a 700 ms mid-turn pause, then the end): the
// JSON has exactly the shape, the rates are fractions, the Pareto
// PNG decodes. The figures are recomputed, only checked for sanity.
func TestEOTCommandOnTinySet(t *testing.T) {
	a, b := twoCommittedClips(t)
	// Each clip has 300 ms of silence either side: the pause is 300 + 100
	// + 300 ms, the end's silence 300 + 2000 ms.
	pcm := append(append(append(append([]int16(nil), a...), make([]int16, 100*msSamples)...), b...), make([]int16, 2000*msSamples)...)
	dir := t.TempDir()
	if err := wavio.WriteWAVFile(filepath.Join(dir, "tiny.16k.wav"), 16000, pcm); err != nil {
		t.Fatal(err)
	}
	la, lb := int64(len(a)/msSamples), int64(len(b)/msSamples)
	labels := eotLabels{Language: "en", Points: []eotLabelPoint{
		{StartMs: la - 300, EndMs: la + 100 + 300, Label: "hold"},
		{StartMs: la + 100 + lb - 300, EndMs: int64(len(pcm) / msSamples), Label: "end"},
	}}
	raw, _ := json.Marshal(labels)
	if err := os.WriteFile(filepath.Join(dir, "tiny.eot.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "pareto.png")
	var out, errOut bytes.Buffer
	args := []string{"-json", "-words=false", "-asr-cache", "", "-context-ms", "1500", "-tail-ms", "3100", "-workers", "2", "-png", img, dir}
	if err := runEOT(args, &out, &errOut); err != nil {
		t.Fatalf("eot: %v\n%s", err, errOut.String())
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &top); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	if len(top) != 2 || top["decision_points"] == nil || top["policies"] == nil {
		t.Fatalf("top-level keys of %s: want exactly decision_points and policies", out.String())
	}
	var n int
	var pols []map[string]*float64
	var names []struct{ Name string }
	if json.Unmarshal(top["decision_points"], &n) != nil || n != 2 {
		t.Fatalf("decision_points %s, want 2", top["decision_points"])
	}
	if err := json.Unmarshal(top["policies"], &names); err != nil || len(names) != 2 || names[0].Name != "fixed" || names[1].Name != "adaptive" {
		t.Fatalf("policies %s: want fixed (the baseline) then adaptive", top["policies"])
	}
	var rawPols []map[string]json.RawMessage
	_ = json.Unmarshal(top["policies"], &rawPols)
	for i, p := range rawPols {
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"fcr_300", "fcr_600", "latency_ms_at_10", "latency_ms_at_5", "name"}) {
			t.Fatalf("policy %d keys %v", i, keys)
		}
		delete(p, "name")
		m := map[string]*float64{}
		for k, v := range p {
			var f *float64
			if err := json.Unmarshal(v, &f); err != nil {
				t.Fatalf("policy %d %s = %s: not a number or null", i, k, v)
			}
			m[k] = f
		}
		pols = append(pols, m)
	}
	for i, p := range pols {
		for _, k := range []string{"fcr_300", "fcr_600"} {
			if v := p[k]; v != nil && (*v < 0 || *v > 1) {
				t.Errorf("policy %d %s = %v: not a fraction", i, k, *v)
			}
		}
		// One hold: a cutoff budget of 5 % means no cutoff at all. The
		// fixed sweep's longest silence (3 s) waits the 700 ms pause out.
		if v := p["latency_ms_at_5"]; i == 0 && (v == nil || *v < 700 || *v > 3100) {
			t.Errorf("fixed latency at 5 %% = %v, want the first silence past the 700 ms pause", v)
		}
		if a, b := p["fcr_300"], p["fcr_600"]; a != nil && b != nil && *b > *a {
			t.Errorf("policy %d: more cutoffs with 600 ms than with 300 ms (%v > %v)", i, *b, *a)
		}
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatalf("no PNG: %v", err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("PNG: %v", err)
	}
}

// TestFlushPoints: the eval asks for a hypothesis where the live session
// would, once per pause that lasts 100 ms, from the real pipeline: two
// committed clips (each one phrase with silence around it) give one ask in
// the pause between them and one after the second, at frame ends.
func TestFlushPoints(t *testing.T) {
	a, b := twoCommittedClips(t)
	gap := make([]int16, 100*msSamples)
	pcm := append(append(append(append([]int16(nil), a...), gap...), b...), make([]int16, 1000*msSamples)...)
	got, err := flushPoints(pcm)
	if err != nil {
		t.Fatal(err)
	}
	second := int64(len(a) + len(gap))
	if len(got) != 2 || got[0] >= second || got[1] <= second {
		t.Fatalf("asks at %v (clip b from %d, total %d): want one before b, one after b's speech", got, second, len(pcm))
	}
	for _, at := range got {
		if at%320 != 0 {
			t.Errorf("ask at %d: not the end of a 20 ms frame", at)
		}
	}
}

// twoCommittedClips reads the committed "go home" and "lights" phrases
// (each with 300 ms of silence either side), skipping without them.
func twoCommittedClips(t *testing.T) (a, b []int16) {
	t.Helper()
	var clips [2][]int16
	for i, name := range []string{"gohome", "lights"} {
		c, err := wavio.ReadWAVFile(filepath.Join("..", "..", "testdata", "voice", name+".16k.wav"), 16000)
		if err != nil {
			t.Skipf("no committed clip: %v", err)
		}
		clips[i] = c
	}
	return clips[0], clips[1]
}

// TestEOTMakeRecordedVoices makes one clip with each recorded-voice engine
// (Flite, Festival; skipped where not installed): the labels cover the
// clip in order, holds then one end, with the voice's split, and the clip
// is the same when made twice (no dither, seeded pauses and noise).
func TestEOTMakeRecordedVoices(t *testing.T) {
	if _, err := exec.LookPath("sox"); err != nil {
		t.Skip("sox not installed")
	}
	for _, c := range []struct{ engine, tool, voice, split string }{
		{"flite", "flite", "rms", "test-natural"},
		{"festival", "text2wave", "kal_diphone", "train"},
	} {
		t.Run(c.engine, func(t *testing.T) {
			if _, err := exec.LookPath(c.tool); err != nil {
				t.Skipf("%s not installed", c.tool)
			}
			var wavs [2][]byte
			var lab eotLabels
			var durMs int64
			for i := range wavs {
				dir := t.TempDir()
				var out, errOut bytes.Buffer
				if err := runEOTMake([]string{"-turns", "1", "-seed", "3", "-engines", c.engine, "-voices", c.voice, dir}, &out, &errOut); err != nil {
					t.Fatalf("eot-make: %v\n%s", err, errOut.String())
				}
				base := filepath.Join(dir, c.engine+"_"+c.voice+"_00")
				var err error
				if wavs[i], err = os.ReadFile(base + ".16k.wav"); err != nil {
					t.Fatalf("%v (wrote: %s)", err, out.String())
				}
				pcm, err := wavio.ReadWAVFile(base+".16k.wav", 16000)
				if err != nil {
					t.Fatal(err)
				}
				durMs = int64(len(pcm) / msSamples)
				raw, err := os.ReadFile(base + ".eot.json")
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, &lab); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(wavs[0], wavs[1]) {
				t.Errorf("two runs with one seed made different audio")
			}
			if lab.Split != c.split || lab.Voice != c.engine+":"+c.voice {
				t.Errorf("split %q voice %q, want %q %q", lab.Split, lab.Voice, c.split, c.engine+":"+c.voice)
			}
			n := len(lab.Points)
			if n == 0 || lab.Points[n-1].Label != "end" {
				t.Fatalf("points %+v: want holds then the end", lab.Points)
			}
			var prev int64 = 600 // the clip's lead-in
			for i, p := range lab.Points {
				if p.StartMs < prev || p.EndMs-p.StartMs < minSilenceMs || p.EndMs > durMs+1 {
					t.Errorf("point %d %+v: out of order, shorter than %d ms or past the clip (%d ms)", i, p, minSilenceMs, durMs)
				}
				if (p.Label == "end") != (i == n-1) {
					t.Errorf("point %d is %q: only the last is the end", i, p.Label)
				}
				prev = p.EndMs
			}
		})
	}
}

// TestEnginesDisagree: a cue that says end on one synthesiser's clips and
// hold on another's is left out; one that says the same on both is kept.
func TestEnginesDisagree(t *testing.T) {
	var ss []eotSample
	var streams []eotStream
	add := func(clip string, end bool, agree, split float64) {
		var s eotSample
		s.point = len(streams)
		if end {
			s.y = 1
		}
		s.x[turn.EvPitchSlope] = agree
		s.x[turn.EvFinalEnergy] = split
		ss = append(ss, s)
		streams = append(streams, eotStream{clip: clip, end: end})
	}
	// espeak: ends have the higher pitch_slope and the higher final_energy;
	// flite: the higher pitch_slope but the lower final_energy.
	for i := range 10 {
		v := float64(i)
		add("espeak_en_us_00", true, 10+v, 10+v)
		add("espeak_en_us_00", false, v, v)
	}
	for i := range 10 {
		v := float64(i)
		add("flite_awb_00", true, 10+v, v)
		add("flite_awb_00", false, v, 10+v)
	}
	off := disagree(ss, streams, 0.05)
	if off[turn.EvPitchSlope] {
		t.Errorf("pitch_slope agrees on both engines (AUC 1, 1) but is left out")
	}
	if !off[turn.EvFinalEnergy] {
		t.Errorf("final_energy disagrees (AUC 1 vs 0) but is kept")
	}
	if got := disagree(ss[:20], streams[:20], 0.05); got != ([turn.NumEvidence]bool{}) {
		t.Errorf("one engine: nothing can disagree, got %v", got)
	}
}
