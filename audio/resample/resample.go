package resample

import (
	"errors"
	"fmt"
	"math"
)

// halfTaps is the half-length of the interpolation filter at the output
// cutoff; 16 keeps stop-band leakage below about -60 dB with a Blackman
// window, ample for speech.
const halfTaps = 16

// Resampler converts mono int16 PCM between two rates with a polyphase
// windowed-sinc filter, in a stream: Write any number of chunks, then Flush.
// Downsampling low-passes at the output Nyquist so nothing aliases.
type Resampler struct {
	up, down int         // rate ratio reduced by gcd: out/in = up/down
	h        int         // filter half-width in input samples
	phases   [][]float32 // up phases × 2h taps
	buf      []float32   // input not yet fully consumed
	base     int64       // absolute input index of buf[0]
	n        int64       // next output index
	flushed  bool
}

// ErrRate is returned for a rate outside (0, MaxRate].
var ErrRate = errors.New("resample: unsupported rate")

// MaxRate bounds both rates (Hz).
const MaxRate = 384000

// New makes a converter from inRate to outRate (Hz).
func New(inRate, outRate int) (*Resampler, error) {
	if inRate <= 0 || outRate <= 0 || inRate > MaxRate || outRate > MaxRate {
		return nil, fmt.Errorf("resample: %d -> %d Hz: rates must be in (0,%d]: %w", inRate, outRate, MaxRate, ErrRate)
	}
	g := gcd(inRate, outRate)
	r := &Resampler{up: outRate / g, down: inRate / g}
	fc := 1.0 // cutoff relative to the input Nyquist
	if outRate < inRate {
		fc = float64(outRate) / float64(inRate)
	}
	r.h = int(math.Ceil(halfTaps / fc))
	r.phases = make([][]float32, r.up)
	for p := range r.up {
		frac := float64(p) / float64(r.up)
		taps := make([]float32, 2*r.h)
		sum := 0.0
		vals := make([]float64, 2*r.h)
		for k := range 2 * r.h {
			// tap k weighs input sample i-h+1+k for an output at i+frac.
			t := float64(k-r.h+1) - frac
			v := fc * sinc(fc*t) * blackman(t/float64(r.h))
			vals[k] = v
			sum += v
		}
		for k, v := range vals {
			taps[k] = float32(v / sum) // unity gain at DC for every phase
		}
		r.phases[p] = taps
	}
	r.buf = make([]float32, r.h-1) // leading zeros stand for silence before the start
	r.base = -int64(r.h - 1)
	return r, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// blackman is the Blackman window on x in [-1,1], zero outside.
func blackman(x float64) float64 {
	if x <= -1 || x >= 1 {
		return 0
	}
	u := (x + 1) / 2
	return 0.42 - 0.5*math.Cos(2*math.Pi*u) + 0.08*math.Cos(4*math.Pi*u)
}

// Write converts in and appends the output samples that are now complete
// to dst, returning it.
func (r *Resampler) Write(dst []int16, in []int16) []int16 {
	for _, s := range in {
		r.buf = append(r.buf, float32(s))
	}
	return r.drain(dst)
}

// Flush completes the stream as if followed by silence and returns the
// remaining output; the Resampler is spent afterwards.
func (r *Resampler) Flush(dst []int16) []int16 {
	if r.flushed {
		return dst
	}
	r.flushed = true
	end := r.base + int64(len(r.buf)) // input samples written
	total := (end*int64(r.up) + int64(r.down) - 1) / int64(r.down)
	r.buf = append(r.buf, make([]float32, r.h)...)
	dst = r.drainUntil(dst, total)
	return dst
}

func (r *Resampler) drain(dst []int16) []int16 { return r.drainUntil(dst, math.MaxInt64) }

func (r *Resampler) drainUntil(dst []int16, limit int64) []int16 {
	for r.n < limit {
		num := r.n * int64(r.down)
		i := num / int64(r.up)      // input index at or before the output time
		p := int(num % int64(r.up)) // phase
		first := i - int64(r.h) + 1
		last := i + int64(r.h)
		if last >= r.base+int64(len(r.buf)) {
			break
		}
		taps := r.phases[p]
		x := r.buf[first-r.base : last-r.base+1]
		var acc float32
		for k, t := range taps {
			acc += x[k] * t
		}
		dst = append(dst, clamp16(acc))
		r.n++
	}
	// Drop input no future output needs.
	next := r.n*int64(r.down)/int64(r.up) - int64(r.h) + 1
	if drop := next - r.base; drop > 0 && drop <= int64(len(r.buf)) {
		r.buf = append(r.buf[:0], r.buf[drop:]...)
		r.base = next
	}
	return dst
}

func clamp16(v float32) int16 {
	switch {
	case v > math.MaxInt16:
		return math.MaxInt16
	case v < math.MinInt16:
		return math.MinInt16
	}
	return int16(math.Round(float64(v)))
}
