package sphinx

import (
	"math"
	"testing"
)

// rmsDB is the RMS of pcm in dBFS.
func rmsDB(pcm []int16) float64 {
	var s float64
	for _, v := range pcm {
		s += float64(v) * float64(v)
	}
	return 20 * math.Log10(math.Sqrt(s/float64(len(pcm)))/32768)
}

// tone is a 1 s, 300 Hz tone with a 4 Hz syllable-like envelope at dbfs.
func tone(dbfs float64) []int16 {
	out := make([]int16, 16000)
	a := 32768 * math.Pow(10, dbfs/20) * math.Sqrt2
	for i := range out {
		env := 0.6 + 0.4*math.Sin(2*math.Pi*4*float64(i)/16000)
		out[i] = int16(a * env * math.Sin(2*math.Pi*300*float64(i)/16000))
	}
	return out
}

// Speech at −45, −25 and −8 dBFS leaves the gain control within a few dB
// of one another (and of the target), fed in odd-sized frames.
func TestAGCLevels(t *testing.T) {
	var outs []float64
	for _, in := range []float64{-45, -25, -8} {
		g := newAGC(-18)
		src := tone(in)
		var got []int16
		for i := 0; i < len(src); i += 317 {
			got = append(got, g.process(src[i:min(i+317, len(src))])...)
		}
		got = append(got, g.flush()...)
		if len(got) != len(src) {
			t.Fatalf("%v dBFS: %d samples out of %d", in, len(got), len(src))
		}
		out := rmsDB(got[4000:]) // after the first quarter second
		outs = append(outs, out)
		if math.Abs(out-(-18)) > 4.5 { // the level follows loud syllables, so the mean sits below the target
			t.Errorf("in %v dBFS → out %.1f dBFS", in, out)
		}
	}
	if spread := slicesMax(outs) - slicesMin(outs); spread > 3 {
		t.Errorf("output levels %v spread %.1f dB", outs, spread)
	}
}

// Silence and hiss below the floor are not raised to speech level.
func TestAGCSilence(t *testing.T) {
	g := newAGC(-18)
	hiss := make([]int16, 1600)
	for i := range hiss {
		hiss[i] = int16(i%7 - 3)
	}
	out := g.process(hiss)
	for i, v := range out {
		if v > 10 || v < -10 {
			t.Fatalf("sample %d: hiss raised to %d", i, v)
		}
	}
	// Full-scale input never wraps around.
	loud := make([]int16, 320)
	for i := range loud {
		loud[i] = 32767 * int16(1-2*(i%2))
	}
	for _, v := range g.process(loud) {
		if v != 32767 && v != -32767 && v != -32768 && math.Abs(float64(v)) < 1000 {
			t.Fatalf("full scale became %d", v)
		}
	}
}

func slicesMax(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func slicesMin(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}
