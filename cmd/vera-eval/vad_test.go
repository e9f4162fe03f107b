package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/audio/wavio"
	"github.com/veraneural/vera-gateway/fixtures"
)

func TestFrameLabels(t *testing.T) {
	// 1 s clip, speech 200-600 ms; collar 0 then 50 ms.
	segs := []segment{{200, 600}}
	l := frameLabels(16000, segs, 0)
	if len(l) != 100 {
		t.Fatalf("%d frames", len(l))
	}
	for i, v := range l {
		c := i*10 + 5
		want := int8(0)
		if c >= 200 && c < 600 {
			want = 1
		}
		if v != want {
			t.Fatalf("frame %d (centre %d ms): %d want %d", i, c, v, want)
		}
	}
	l = frameLabels(16000, segs, 50)
	// Centres within 50 ms of 200 or 600 are not scored: 155..245 and 555..645.
	for i, v := range l {
		c := i*10 + 5
		excluded := math.Abs(float64(c-200)) < 50 || math.Abs(float64(c-600)) < 50
		if excluded != (v == -1) {
			t.Fatalf("frame %d centre %d: label %d, excluded %v", i, c, v, excluded)
		}
	}
}

func TestScoreAndMetrics(t *testing.T) {
	labels := []int8{1, 1, 1, 1, 0, 0, 0, -1, 1, 0}
	probs := []float32{0.9, 0.6, 0.2, 0.5, 0.7, 0.1, 0.49, 0.99, 0.8, 0.3}
	got, always := scoreFrames(probs, labels, 0.5)
	if got != (counts{tp: 4, fn: 1, fp: 1, tn: 3}) {
		t.Fatalf("counts %+v", got)
	}
	if always != (counts{tp: 5, fp: 4}) {
		t.Fatalf("always-speech %+v", always)
	}
	r := result("x", got)
	if r.Frames != 9 || math.Abs(r.Precision-0.8) > 1e-9 || math.Abs(r.Recall-0.8) > 1e-9 ||
		math.Abs(r.F1-0.8) > 1e-9 || math.Abs(r.FAR-0.25) > 1e-9 {
		t.Fatalf("metrics %+v", r)
	}
	a := result("a", always)
	if math.Abs(a.FAR-1) > 1e-9 || math.Abs(a.Recall-1) > 1e-9 || math.Abs(a.Precision-5.0/9) > 1e-9 {
		t.Fatalf("always-speech metrics %+v", a)
	}
	if z := result("z", counts{}); z.F1 != 0 || z.FAR != 0 {
		t.Fatalf("empty metrics %+v", z)
	}
}

func TestMixAtSNR(t *testing.T) {
	// Clean: 0.5 s silence then a 0.5 s tone; speech label on the tone.
	clean := make([]int16, 16000)
	for i := 8000; i < 16000; i++ {
		clean[i] = int16(8000 * math.Sin(float64(i)*0.2))
	}
	segs := []segment{{500, 1000}}
	noise := make([]int16, 3001) // shorter than the clip: must loop from its start
	for i := range noise {
		noise[i] = int16((i*7919)%2001 - 1000)
	}
	for _, snr := range []float64{10, 0, -5} {
		mixed := mixAt(clean, segs, noise, snr)
		var ps, pn float64
		for i := 8000; i < 16000; i++ {
			ps += float64(clean[i]) * float64(clean[i])
		}
		ps /= 8000
		for i := range clean {
			d := float64(mixed[i]) - float64(clean[i])
			pn += d * d
		}
		pn /= float64(len(clean))
		if got := 10 * math.Log10(ps/pn); math.Abs(got-snr) > 0.05 {
			t.Fatalf("SNR %v: mixed at %.3f dB", snr, got)
		}
		// Looping: the added noise at i and i+3001 has the same shape.
		r := (float64(mixed[100]) - float64(clean[100])) / float64(noise[100])
		r2 := (float64(mixed[3101]) - float64(clean[3101])) / float64(noise[100])
		if math.Abs(r-r2) > 0.01*math.Abs(r)+0.01 {
			t.Fatalf("noise not looped from its start: %v vs %v", r, r2)
		}
	}
}

func TestParseSNRs(t *testing.T) {
	v, err := parseSNRs("10, 0,-5")
	if err != nil || len(v) != 3 || v[2] != -5 {
		t.Fatalf("%v %v", v, err)
	}
	if v, err := parseSNRs(""); err != nil || len(v) != 0 {
		t.Fatalf("empty: %v %v", v, err)
	}
	if _, err := parseSNRs("10,x"); err == nil {
		t.Fatal("bad SNR accepted")
	}
}

// TestVADCommandOnSyntheticDir runs the whole command on a directory laid out
// like the shared set: the project's espeak clip with energy-derived segments,
// one noise file, and a labels file without audio (ignored).
func TestVADCommandOnSyntheticDir(t *testing.T) {
	dir := t.TempDir()
	pcm, err := wavio.ReadWAVFile("../../testdata/audio/speech_en.16k.wav", 16000)
	if err != nil {
		t.Fatal(err)
	}
	if err := wavio.WriteWAVFile(filepath.Join(dir, "a.16k.wav"), 16000, pcm); err != nil {
		t.Fatal(err)
	}
	// Segments from the clip's own energy (it is noise-free).
	var segs []segment
	in := false
	for i := 0; i+160 <= len(pcm); i += 160 {
		var e float64
		for _, s := range pcm[i : i+160] {
			e += float64(s) * float64(s)
		}
		sp := 10*math.Log10(e/160/(32768*32768)+1e-12) > -45
		switch {
		case sp && !in:
			segs = append(segs, segment{StartMs: i / 16})
			in = true
		case !sp && in:
			segs[len(segs)-1].EndMs = i / 16
			in = false
		}
	}
	if in {
		segs[len(segs)-1].EndMs = len(pcm) / 16
	}
	raw, _ := json.Marshal(segs)
	os.WriteFile(filepath.Join(dir, "a.segments.json"), raw, 0o644)
	os.WriteFile(filepath.Join(dir, "orphan.segments.json"), raw, 0o644)
	noise := make([]int16, 16000)
	for i := range noise {
		noise[i] = int16((i*7919)%4001 - 2000)
	}
	if err := wavio.WriteWAVFile(filepath.Join(dir, "noise_test.16k.wav"), 16000, noise); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(t.TempDir(), "mix")
	var out, errb bytes.Buffer
	if err := runVAD([]string{"-json", "-snr", "10,0", "-collar-ms", "100", "-dump", dump, dir}, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var rep struct {
		Conditions []map[string]any `json:"conditions"`
		Overall    map[string]any   `json:"overall"`
		Always     []map[string]any `json:"always_speech"`
		EOS        map[string]any   `json:"end_of_speech_error_ms"`
		Start      map[string]any   `json:"speech_started_delay_ms"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	names := []string{"clean", "noise_test@10dB", "noise_test@0dB"}
	if len(rep.Conditions) != len(names) {
		t.Fatalf("conditions %v", rep.Conditions)
	}
	total := 0.0
	for i, c := range rep.Conditions {
		if c["name"] != names[i] {
			t.Fatalf("condition %d named %v, want %s", i, c["name"], names[i])
		}
		for _, k := range []string{"precision", "recall", "f1", "far", "frames", "tp", "fp", "fn", "tn"} {
			if _, ok := c[k]; !ok {
				t.Fatalf("condition %s lacks %q", names[i], k)
			}
		}
		if c["tp"].(float64)+c["fp"].(float64)+c["fn"].(float64)+c["tn"].(float64) != c["frames"].(float64) {
			t.Fatalf("counts do not add up in %v", c)
		}
		total += c["frames"].(float64)
	}
	if rep.Overall["frames"].(float64) != total || rep.Overall["name"] != "overall" {
		t.Fatalf("overall %v, want %v frames", rep.Overall, total)
	}
	// The espeak clip is one utterance: one end, one start, found.
	if rep.EOS["n"].(float64) != 1 || rep.EOS["missed"].(float64) != 0 || rep.Start["n"].(float64) < 1 {
		t.Fatalf("turn metrics: eos %v start %v", rep.EOS, rep.Start)
	}
	if rep.Conditions[0]["f1"].(float64) < 0.8 {
		t.Fatalf("clean synthetic speech F1 %v", rep.Conditions[0]["f1"])
	}
	if len(rep.Always) != 4 || rep.Always[0]["far"].(float64) != 1 {
		t.Fatalf("always-speech baseline %v", rep.Always)
	}
	for _, k := range []string{"p50", "p90"} {
		if _, ok := rep.EOS[k]; !ok {
			t.Fatalf("end_of_speech_error_ms lacks %s: %v", k, rep.EOS)
		}
		if _, ok := rep.Start[k]; !ok {
			t.Fatalf("speech_started_delay_ms lacks %s: %v", k, rep.Start)
		}
	}
	var m manifest
	mraw, err := os.ReadFile(filepath.Join(dump, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mraw, &m); err != nil || len(m.Conditions) != 3 || m.CollarMs != 100 {
		t.Fatalf("manifest %v %+v", err, m)
	}
	mixed, err := wavio.ReadWAVFile(filepath.Join(dump, m.Conditions[2].Clips[0].WAV), 16000)
	if err != nil || len(mixed) != len(pcm) || len(m.Conditions[2].Clips[0].Labels) != len(pcm)/160 {
		t.Fatalf("dumped mix: %v, %d samples", err, len(mixed))
	}

	out.Reset()
	if err := runVAD([]string{"-snr", "", dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "clean") || strings.Contains(out.String(), "noise_test") {
		t.Fatalf("table with -snr '': %s", out.String())
	}
	if err := runVAD([]string{t.TempDir()}, &out, &errb); err == nil {
		t.Fatal("empty dir accepted")
	}
}

// TestSharedFixtures guards the tuned VAD against regressions on the shared
// labelled set (clean condition) when it is present.
func TestSharedFixtures(t *testing.T) {
	dir := fixtures.SharedAudioDir(t)
	var out, errb bytes.Buffer
	if err := runVAD([]string{"-json", "-snr", "", dir}, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var rep vadReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Conditions[0]
	if c.F1 < 0.94 || c.FAR > 0.3 {
		t.Fatalf("clean shared set: F1 %.3f FAR %.3f (tuned: 0.967 / 0.171)", c.F1, c.FAR)
	}
}
