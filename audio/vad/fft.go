package vad

import "math"

// fftN is the analysis length: 256 samples (16 ms) at 16 kHz, bins of 62.5 Hz.
const (
	fftN     = 256
	fftHalf  = fftN / 2 // complex FFT length used for the real transform
	fftBins  = fftHalf + 1
	binWidth = 16000.0 / fftN
)

// realFFT computes the power spectrum of a real 256-sample block with a
// 128-point complex radix-2 FFT plus the standard real-input unpacking. All
// tables are built once; the transform allocates nothing.
type realFFT struct {
	rev    [fftHalf]uint8
	tw     [fftHalf / 2]complex64 // e^{-2πik/128}
	twReal [fftHalf]complex64     // e^{-2πik/256}
	buf    [fftHalf]complex64
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
	for k := range f.tw {
		a := -2 * math.Pi * float64(k) / fftHalf
		f.tw[k] = complex(float32(math.Cos(a)), float32(math.Sin(a)))
	}
	for k := range f.twReal {
		a := -2 * math.Pi * float64(k) / fftN
		f.twReal[k] = complex(float32(math.Cos(a)), float32(math.Sin(a)))
	}
	return f
}

// power writes |X[k]|² for k = 0..128 of the real input x (len 256).
func (f *realFFT) power(x *[fftN]float32, out *[fftBins]float32) {
	b := &f.buf
	for i := range fftHalf {
		b[f.rev[i]] = complex(x[2*i], x[2*i+1])
	}
	for size := 2; size <= fftHalf; size <<= 1 {
		half := size >> 1
		step := fftHalf / size
		for start := 0; start < fftHalf; start += size {
			for j := range half {
				w := f.tw[j*step]
				u := b[start+j]
				v := b[start+j+half] * w
				b[start+j] = u + v
				b[start+j+half] = u - v
			}
		}
	}
	// Unpack: X[k] = (Z[k] + conj(Z[N/2-k]))/2 + e^{-2πik/N} (Z[k] - conj(Z[N/2-k]))/(2i).
	z0 := b[0]
	dc := real(z0) + imag(z0)
	ny := real(z0) - imag(z0)
	out[0] = dc * dc
	out[fftHalf] = ny * ny
	for k := 1; k < fftHalf; k++ {
		zk := b[k]
		zc := b[fftHalf-k]
		zc = complex(real(zc), -imag(zc))
		e := (zk + zc) * 0.5
		o := (zk - zc) * complex(0, -0.5)
		xk := e + f.twReal[k]*o
		out[k] = real(xk)*real(xk) + imag(xk)*imag(xk)
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
