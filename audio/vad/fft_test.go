package vad

import (
	"math"
	"math/cmplx"
	"testing"
)

func TestRealFFTMatchesDFT(t *testing.T) {
	f := newRealFFT()
	var x [fftN]float32
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.3) + 0.5*math.Cos(float64(i)*1.7) + float64(i%7)/10)
	}
	var got [fftBins]float32
	f.power(&x, &got)
	for k := range fftBins {
		var s complex128
		for n := range fftN {
			s += complex(float64(x[n]), 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*n)/fftN))
		}
		want := real(s)*real(s) + imag(s)*imag(s)
		if math.Abs(float64(got[k])-want) > 1e-3*(want+1) {
			t.Fatalf("bin %d: %g want %g", k, got[k], want)
		}
	}
}

func TestFastLog2(t *testing.T) {
	for _, v := range []float32{1e-9, 0.01, 0.5, 1, 1.5, 3, 1000, 1e9} {
		if d := math.Abs(float64(fastLog2(v)) - math.Log2(float64(v))); d > 0.01 {
			t.Errorf("log2(%g) off by %g", v, d)
		}
	}
}
