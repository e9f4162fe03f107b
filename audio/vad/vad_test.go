package vad

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/audio/wavio"
)

func speech(t testing.TB) []int16 {
	t.Helper()
	pcm, err := wavio.ReadWAVFile("../../testdata/audio/speech_en.16k.wav", 16000)
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

// probs runs a fresh VAD over pcm.
func probs(t testing.TB, pcm []int16) []float32 {
	t.Helper()
	v, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var out []float32
	for i := 0; i+FrameSamples <= len(pcm); i += FrameSamples {
		p, err := v.Process(pcm[i : i+FrameSamples])
		if err != nil {
			t.Fatal(err)
		}
		if p < 0 || p > 1 || p != p {
			t.Fatalf("frame %d: p=%v", i/FrameSamples, p)
		}
		out = append(out, p)
	}
	return out
}

// speechFrames marks frames of the espeak fixture that hold speech, from
// its own energy (the fixture is synthetic and noise-free: 0.3 s of digital
// silence, speech, 0.4 s of silence).
func speechFrames(pcm []int16) []bool {
	out := make([]bool, len(pcm)/FrameSamples)
	for i := range out {
		var e float64
		for _, s := range pcm[i*FrameSamples : (i+1)*FrameSamples] {
			e += float64(s) * float64(s)
		}
		out[i] = 10*math.Log10(e/FrameSamples/(32768*32768)+1e-12) > -45
	}
	return out
}

func withNoise(pcm []int16, snrDb float64, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 1))
	var ps float64
	for _, s := range pcm {
		ps += float64(s) * float64(s)
	}
	ps /= float64(len(pcm))
	g := math.Sqrt(ps / math.Pow(10, snrDb/10))
	out := make([]int16, len(pcm))
	for i, s := range pcm {
		out[i] = int16(max(-32768, min(32767, float64(s)+g*r.NormFloat64())))
	}
	return out
}

func agreement(p []float32, ref []bool) (recall, far float64) {
	var tp, fn, fp, tn float64
	for i, s := range ref {
		// Skip 100 ms around every change of the reference, like the eval's collar.
		edge := false
		for d := -10; d <= 10; d++ {
			if j := i + d; j >= 0 && j < len(ref) && ref[j] != s {
				edge = true
			}
		}
		if edge {
			continue
		}
		switch {
		case s && p[i] >= 0.5:
			tp++
		case s:
			fn++
		case p[i] >= 0.5:
			fp++
		default:
			tn++
		}
	}
	return tp / (tp + fn), fp / (fp + tn)
}

func TestSpeechAndSilence(t *testing.T) {
	pcm := speech(t)
	ref := speechFrames(pcm)
	p := probs(t, pcm)
	for i := range 25 { // leading digital silence
		if p[i] != 0 {
			t.Fatalf("frame %d of digital silence scored %v", i, p[i])
		}
	}
	recall, far := agreement(p, ref)
	if recall < 0.9 || far > 0.3 {
		t.Fatalf("clean speech: recall %.2f far %.2f", recall, far)
	}
}

func TestSpeechInWhiteNoise(t *testing.T) {
	pcm := speech(t)
	ref := speechFrames(pcm)
	// Two seconds of noise alone first, so the floor settles, then speech.
	lead := make([]int16, 32000)
	noisy := withNoise(append(lead, pcm...), 10, 7)
	p := probs(t, noisy)
	var fpLead int
	for _, v := range p[50:200] {
		if v >= 0.5 {
			fpLead++
		}
	}
	if fpLead > 15 {
		t.Fatalf("stationary white noise: %d of 150 frames called speech", fpLead)
	}
	recall, _ := agreement(p[200:], ref)
	if recall < 0.8 {
		t.Fatalf("speech at 10 dB SNR in white noise: recall %.2f", recall)
	}
}

func TestLevelInvariance(t *testing.T) {
	pcm := speech(t)
	quiet := make([]int16, len(pcm))
	for i, s := range pcm {
		quiet[i] = s / 16 // -24 dB
	}
	a, b := probs(t, withNoise(pcm, 20, 3)), probs(t, withNoise(quiet, 20, 3))
	differ := 0
	for i := range a {
		if (a[i] >= 0.5) != (b[i] >= 0.5) {
			differ++
		}
	}
	if differ > len(a)/20 {
		t.Fatalf("decisions differ on %d of %d frames after a 24 dB level change", differ, len(a))
	}
}

func TestResetAndErrors(t *testing.T) {
	v, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Process(make([]int16, 320)); !errors.Is(err, ErrFrameSize) {
		t.Fatalf("20 ms frame: %v", err)
	}
	if _, err := v.Process(nil); !errors.Is(err, ErrFrameSize) {
		t.Fatalf("empty frame: %v", err)
	}
	pcm := speech(t)
	first := probs(t, pcm)
	for i := 0; i+FrameSamples <= len(pcm); i += FrameSamples {
		v.Process(pcm[i : i+FrameSamples])
	}
	v.Reset()
	for i := 0; i+FrameSamples <= len(pcm); i += FrameSamples {
		p, _ := v.Process(pcm[i : i+FrameSamples])
		if p != first[i/FrameSamples] {
			t.Fatalf("frame %d after Reset: %v, fresh VAD %v", i/FrameSamples, p, first[i/FrameSamples])
		}
	}
}

func TestNoAllocs(t *testing.T) {
	v, _ := New(DefaultConfig())
	pcm := speech(t)
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		k := i % (len(pcm)/FrameSamples - 1)
		v.Process(pcm[k*FrameSamples : (k+1)*FrameSamples])
		i++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per frame", allocs)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(*Config){
		"audio.vad.weights.bias":       func(c *Config) { c.Weights.Bias = float32(math.NaN()) },
		"audio.vad.noisy_weights.w[4]": func(c *Config) { c.NoisyWeights.W[4] = 1000 },
		"audio.vad.release_frames":     func(c *Config) { c.ReleaseFrames = -1 },
		"audio.vad.smooth_frames":      func(c *Config) { c.SmoothFrames = 0 },
		"audio.vad.noise_window_ms":    func(c *Config) { c.NoiseWindowMs = 700 },
		"audio.vad.silence_dbfs":       func(c *Config) { c.SilenceDbfs = 0 },
		"audio.vad.raw_floor_db":       func(c *Config) { c.RawFloorDb = -1 },
	}
	for key, f := range cases {
		c := DefaultConfig()
		f(&c)
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v", key, err)
		}
		if _, err := New(c); err == nil {
			t.Errorf("%s: New accepted it", key)
		}
	}
}

func TestBlend(t *testing.T) {
	for _, c := range []struct{ in, want float32 }{{0, 0}, {10, 0}, {20, 0.5}, {30, 1}, {60, 1}} {
		if got := Blend(c.in); math.Abs(float64(got-c.want)) > 1e-6 {
			t.Errorf("Blend(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
