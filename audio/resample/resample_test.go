package resample

import (
	"math"
	"reflect"
	"testing"
)

// tone returns n samples of a sine at f Hz sampled at rate.
func tone(f float64, rate, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(10000 * math.Sin(2*math.Pi*f*float64(i)/float64(rate)))
	}
	return out
}

// power at frequency f via a single-bin DFT, normalised by length.
func power(x []int16, f float64, rate int) float64 {
	var re, im float64
	for i, v := range x {
		a := 2 * math.Pi * f * float64(i) / float64(rate)
		re += float64(v) * math.Cos(a)
		im += float64(v) * math.Sin(a)
	}
	return (re*re + im*im) / float64(len(x)*len(x))
}

func TestResamplerLengthToneAndAliasing(t *testing.T) {
	cases := []struct{ in, out int }{{22050, 48000}, {22050, 16000}, {48000, 16000}, {16000, 48000}}
	for _, tc := range cases {
		n := tc.in // one second
		src := tone(440, tc.in, n)
		r, err := New(tc.in, tc.out)
		if err != nil {
			t.Fatal(err)
		}
		var got []int16
		for i := 0; i < n; i += 333 { // odd chunking exercises the stream state
			got = r.Write(got, src[i:min(i+333, n)])
		}
		got = r.Flush(got)
		if len(got) != tc.out {
			t.Errorf("%d->%d: %d samples from 1 s, want %d", tc.in, tc.out, len(got), tc.out)
		}
		mid := got[tc.out/4 : 3*tc.out/4]
		if p := power(mid, 440, tc.out); p < 0.2*1e8 {
			t.Errorf("%d->%d: 440 Hz power %.3g, want about 2.5e7", tc.in, tc.out, p)
		}
		// Same signal through in one piece: streaming must not change it.
		r2, _ := New(tc.in, tc.out)
		whole := r2.Flush(r2.Write(nil, src))
		if !reflect.DeepEqual(whole, got) {
			t.Errorf("%d->%d: chunked output differs from one-piece output", tc.in, tc.out)
		}
	}
	// A 10 kHz tone is above the 8 kHz Nyquist of 16 kHz output: it must be
	// filtered, not folded to 6 kHz.
	r, _ := New(48000, 16000)
	out := r.Flush(r.Write(nil, tone(10000, 48000, 48000)))
	if p := power(out[4000:12000], 6000, 16000); p > 1e4 {
		t.Errorf("10 kHz aliased to 6 kHz with power %.3g", p)
	}
	if _, err := New(0, 16000); err == nil {
		t.Error("rate 0 accepted")
	}
}

func BenchmarkResample22050To48000(b *testing.B) {
	src := tone(300, 22050, 22050)
	b.ReportAllocs()
	var out []int16
	for b.Loop() {
		r, _ := New(22050, 48000)
		out = r.Flush(r.Write(out[:0], src))
	}
}
