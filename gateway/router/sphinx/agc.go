package sphinx

import "math"

// agc brings speech to a steady level before the spotter hears it, so that
// a quiet microphone (−40 dBFS) and a loud one (−10 dBFS) give the keyword
// search the same input. It follows the loudest recent 10 ms block's RMS
// (fast attack, slow release) and scales toward the target, with the gain
// bounded and ramped across each block so it never clicks. Silence below
// the floor does not move the level: background hiss is not boosted to
// speech level between words.
type agc struct {
	target  float64 // RMS the speech level is brought to
	level   float64 // tracked speech level (RMS)
	gain    float64 // gain applied at the end of the last block
	pending []int16 // samples of an unfinished block
	out     []int16
}

const (
	agcBlock    = 160     // 10 ms at 16 kHz
	agcFloor    = 30.0    // RMS below which a block is treated as silence (≈ −61 dBFS)
	agcMaxGain  = 40.0    // +32 dB
	agcMinGain  = 0.25    // −12 dB
	agcAttack   = 0.5     // fraction of a rise taken per block
	agcRelease  = 0.99885 // per-block decay: −1 dB per second
	agcInitGain = 1.0
)

func newAGC(targetDBFS float64) *agc {
	t := 32768 * math.Pow(10, targetDBFS/20)
	return &agc{target: t, gain: agcInitGain}
}

func (a *agc) reset() {
	a.level, a.gain, a.pending = 0, agcInitGain, a.pending[:0]
}

// process returns pcm scaled, in whole 10 ms blocks; samples of an
// unfinished block are kept for the next call. The returned slice is
// reused by the next call.
func (a *agc) process(pcm []int16) []int16 {
	a.out = a.out[:0]
	for len(pcm) > 0 {
		need := agcBlock - len(a.pending)
		take := min(need, len(pcm))
		a.pending = append(a.pending, pcm[:take]...)
		pcm = pcm[take:]
		if len(a.pending) == agcBlock {
			a.block(a.pending)
			a.pending = a.pending[:0]
		}
	}
	return a.out
}

func (a *agc) block(b []int16) {
	var sum float64
	for _, s := range b {
		v := float64(s)
		sum += v * v
	}
	rms := math.Sqrt(sum / float64(len(b)))
	if rms >= agcFloor {
		if a.level == 0 {
			a.level = rms // the first sound sets the level outright
		} else if rms > a.level {
			a.level += (rms - a.level) * agcAttack
		} else {
			a.level *= agcRelease
		}
	}
	g := a.gain
	if a.level >= agcFloor {
		g = min(max(a.target/a.level, agcMinGain), agcMaxGain)
	}
	step := (g - a.gain) / float64(len(b))
	cur := a.gain
	for _, s := range b {
		cur += step
		v := math.Round(float64(s) * cur)
		a.out = append(a.out, int16(min(max(v, -32768), 32767)))
	}
	a.gain = g
}

// flush returns the unfinished block at the current gain.
func (a *agc) flush() []int16 {
	a.out = a.out[:0]
	for _, s := range a.pending {
		v := math.Round(float64(s) * a.gain)
		a.out = append(a.out, int16(min(max(v, -32768), 32767)))
	}
	a.pending = a.pending[:0]
	return a.out
}
