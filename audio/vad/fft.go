package vad

import (
	"math"

	"github.com/veraneural/vera-gateway/audio"
)

// fftN is the analysis length: 256 samples (16 ms) at 16 kHz, bins of 62.5 Hz.
const (
	fftN     = 256
	fftHalf  = fftN / 2 // complex FFT length used for the real transform
	fftBins  = fftHalf + 1
	binWidth = audio.SampleRate * 1.0 / fftN // untyped float: 62.5
)

// realFFT computes the power spectrum of a real 256-sample block with a
// 128-point complex radix-2 FFT plus the standard real-input unpacking. All
// tables are built once; the transform allocates nothing.
type realFFT struct {
	rev    [fftHalf]uint8
	twRe   [fftHalf / 2]float32 // cos(-2πk/128)
	twIm   [fftHalf / 2]float32 // sin(-2πk/128)
	unRe   [fftHalf]float32     // cos(-2πk/256), for the real unpacking
	unIm   [fftHalf]float32
	re, im [fftHalf]float32
}

func newRealFFT() *realFFT {
	f := &realFFT{}
	bits := 7
	for i := range fftHalf {
		r := 0
		for b := range bits {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		f.rev[i] = uint8(r)
	}
	for k := range f.twRe {
		a := -2 * math.Pi * float64(k) / fftHalf
		f.twRe[k], f.twIm[k] = float32(math.Cos(a)), float32(math.Sin(a))
	}
	for k := range f.unRe {
		a := -2 * math.Pi * float64(k) / fftN
		f.unRe[k], f.unIm[k] = float32(math.Cos(a)), float32(math.Sin(a))
	}
	return f
}

// power writes |X[k]|² for k = 0..128 of the real input x (len 256).
func (f *realFFT) power(x *[fftN]float32, out *[fftBins]float32) {
	re, im := &f.re, &f.im
	for i := range fftHalf {
		j := f.rev[i]
		re[j], im[j] = x[2*i], x[2*i+1]
	}
	// Stage 1 (size 2): twiddle 1.
	for s := 0; s < fftHalf; s += 2 {
		ar, ai, br, bi := re[s], im[s], re[s+1], im[s+1]
		re[s], im[s], re[s+1], im[s+1] = ar+br, ai+bi, ar-br, ai-bi
	}
	// Stage 2 (size 4): twiddles 1 and -i.
	for s := 0; s < fftHalf; s += 4 {
		ar, ai, br, bi := re[s], im[s], re[s+2], im[s+2]
		re[s], im[s], re[s+2], im[s+2] = ar+br, ai+bi, ar-br, ai-bi
		ar, ai, br, bi = re[s+1], im[s+1], im[s+3], -re[s+3] // b·(-i)
		re[s+1], im[s+1], re[s+3], im[s+3] = ar+br, ai+bi, ar-br, ai-bi
	}
	for size := 8; size <= fftHalf; size <<= 1 {
		half := size >> 1
		step := fftHalf / size
		for start := 0; start < fftHalf; start += size {
			for j := range half {
				wr, wi := f.twRe[j*step], f.twIm[j*step]
				p, q := start+j, start+j+half
				vr := re[q]*wr - im[q]*wi
				vi := re[q]*wi + im[q]*wr
				ur, ui := re[p], im[p]
				re[p], im[p] = ur+vr, ui+vi
				re[q], im[q] = ur-vr, ui-vi
			}
		}
	}
	// Unpack: X[k] = E[k] + W^k O[k], E = (Z[k]+conj Z[N/2-k])/2, O = (Z[k]-conj Z[N/2-k])/(2i).
	dc := re[0] + im[0]
	ny := re[0] - im[0]
	out[0] = dc * dc
	out[fftHalf] = ny * ny
	for k := 1; k < fftHalf; k++ {
		zr, zi := re[k], im[k]
		cr, ci := re[fftHalf-k], -im[fftHalf-k]
		er, ei := (zr+cr)*0.5, (zi+ci)*0.5
		// (z - c)/(2i) = (dI - i dR)/2 with d = z - c
		or, oi := (zi-ci)*0.5, -(zr-cr)*0.5
		xr := er + f.unRe[k]*or - f.unIm[k]*oi
		xi := ei + f.unRe[k]*oi + f.unIm[k]*or
		out[k] = xr*xr + xi*xi
	}
}

// fastLog2 approximates log2(x) for x > 0 to about 0.01 using the float
// exponent and a quadratic on the mantissa; cheap enough for per-bin use.
func fastLog2(x float32) float32 {
	bits := math.Float32bits(x)
	e := float32(int32(bits>>23&0xff) - 127)
	m := math.Float32frombits(bits&0x007fffff | 0x3f800000) // [1,2)
	return e + (-0.34484843*m+2.02466578)*m - 1.67487759
}
