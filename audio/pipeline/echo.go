package pipeline

import (
	"math"
	"sync"

	"github.com/veraneural/vera-gateway/audio"
)

// Echo guard parameters. The envelope is log energy per 10 ms slot; echo of
// an open-ear speaker arrives 50–300 ms late (plus the jitter buffer) and
// 10–20 dB down, with the same syllable rhythm as what we played.
const (
	echoSlots     = 128 // ring length in 10 ms slots (1.28 s)
	echoWindow    = 24  // slots compared (240 ms)
	echoMinLag    = 3   // 30 ms
	echoMaxLag    = 45  // 450 ms: loopback delay + jitter buffer + speaker path
	echoMinCorr   = 0.7 // envelope correlation above which the input follows our output
	echoMarginDb  = 3   // echo is at least this much quieter than what we played
	echoSilenceDb = -70 // slots quieter than this carry no envelope
	// Double talk: when the newest slots stand this much (dB, mean of
	// echoRecent slots) above the echo expected from the reference, someone
	// is speaking over it.
	echoDoubleTalkDb = 4
	echoRecent       = 3
	// echoLearnCorr: windows that follow the reference this closely, with
	// no double talk, update the echo return loss estimate.
	echoLearnCorr = 0.85
	// echoMaxSpread bounds the share of the window's sounding slots where
	// the input is more than echoOffDb away from the reference minus the
	// return loss: a speaker path is nearly linear, so its echo keeps a
	// steady distance from the reference; speech that happens to correlate
	// with it does not.
	echoMaxSpread = 0.3
	echoOffDb     = 6
)

// echoGuard tells the gateway's own voice, leaking back into the input,
// from the person speaking: the gateway knows exactly what it played
// (reference, from the sender's tap), so input whose energy envelope follows
// the played envelope at some delay, and is quieter than it, is echo.
// Envelopes are kept per 10 ms slot of the stream's media clock (slot =
// sample time / audio.Frame10), so the two streams line up whatever each
// one's pacing.
type echoGuard struct {
	mu    sync.Mutex // mu guards ref and refSl (the tap runs on the sender's goroutine) and erl, erlN
	ref   [echoSlots]float32
	refSl [echoSlots]int64
	in    [echoSlots]float32 // owned by the media loop
	inSl  [echoSlots]int64
	// erl is the learned echo return loss (dB, reference minus input) of
	// this speaker path; erlN counts its updates (0: not learned yet).
	erl  float32
	erlN int
}

// slotOf is the 10 ms slot holding sample time at.
func slotOf(at int64) int64 { return at / audio.Frame10 }

// addRef records a played frame (whole 10 ms slots) whose last 10 ms is
// at sample time at.
func (g *echoGuard) addRef(at int64, pcm []int16) {
	n := len(pcm) / audio.Frame10
	last := slotOf(at)
	g.mu.Lock()
	for i := 0; i < n; i++ {
		s := last - int64(n-1-i)
		j := int(((s % echoSlots) + echoSlots) % echoSlots)
		g.ref[j], g.refSl[j] = audio.PowerDBFS(pcm[i*audio.Frame10:(i+1)*audio.Frame10]), s
	}
	g.mu.Unlock()
}

// sounding counts the reference slots held above the silence floor.
func (g *echoGuard) sounding() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, e := range g.ref {
		if e > echoSilenceDb {
			n++
		}
	}
	return n
}

// record keeps the input envelope of the 10 ms frame f starting at sample
// time at (always, so that the guard has its whole window the moment
// playout starts).
func (g *echoGuard) record(at int64, f []int16) {
	s := slotOf(at)
	j := int(((s % echoSlots) + echoSlots) % echoSlots)
	g.in[j], g.inSl[j] = audio.PowerDBFS(f), s
}

// judge reports whether the input up to the 10 ms frame starting at sample
// time at looks like our own voice.
func (g *echoGuard) judge(at int64) bool {
	slot := slotOf(at)
	g.mu.Lock()
	defer g.mu.Unlock()
	var x [echoWindow]float32
	nx := 0
	for k := 0; k < echoWindow; k++ {
		x[k] = g.at(&g.in, &g.inSl, slot-int64(k))
		if x[k] > echoSilenceDb+10 {
			nx++
		}
	}
	if nx < echoWindow/3 {
		return false // too little input to judge; the VAD will not fire on it either
	}
	// The delay of the speaker path is the lag at which the input follows
	// the reference best.
	var y, best [echoWindow]float32
	bestC := float32(-2)
	var bestLoss, bestSpread float32
	for lag := echoMinLag; lag <= echoMaxLag; lag++ {
		ny := 0
		for k := 0; k < echoWindow; k++ {
			y[k] = g.at(&g.ref, &g.refSl, slot-int64(k)-int64(lag))
			if y[k] > echoSilenceDb {
				ny++
			}
		}
		if ny < echoWindow/3 {
			continue
		}
		if c, loss, spread := echoMatch(x[:], y[:]); c > bestC {
			bestC, bestLoss, bestSpread, best = c, loss, spread, y
		}
	}
	// Echo is the reference through a fixed path: the input follows it at
	// a nearly constant distance. Speech that merely happens to correlate
	// with it does not.
	if bestC < echoMinCorr || bestLoss < echoMarginDb || bestSpread > echoMaxSpread {
		return false
	}
	// The echo expected now is the reference minus the return loss; input
	// well above it in the newest slots is a person talking over the echo.
	erl := bestLoss
	if g.erlN >= 10 {
		erl = g.erl
	}
	var excess float32
	for k := 0; k < echoRecent; k++ {
		excess += x[k] - max(best[k]-erl, echoSilenceDb)
	}
	if excess/echoRecent > echoDoubleTalkDb {
		return false
	}
	if bestC >= echoLearnCorr {
		if g.erlN == 0 {
			g.erl = bestLoss
		}
		g.erl += 0.1 * (bestLoss - g.erl)
		g.erlN++
	}
	return true
}

func (g *echoGuard) at(v *[echoSlots]float32, sl *[echoSlots]int64, s int64) float32 {
	j := int(((s % echoSlots) + echoSlots) % echoSlots)
	if sl[j] != s {
		return echoSilenceDb // nothing recorded for that slot: silence
	}
	return max(v[j], echoSilenceDb)
}

// echoMatch compares an input envelope x with a lagged reference y: their
// correlation, how far (dB) the input sits below the reference where the
// reference is sounding (the echo return loss; negative when the input is
// louder), and the share of slots that stray from that distance.
func echoMatch(x, y []float32) (c, loss, spread float32) {
	c, _, _ = corr(x, y)
	var d float32
	n := 0
	for i := range y {
		if y[i] > echoSilenceDb+10 {
			d += y[i] - x[i]
			n++
		}
	}
	if n == 0 {
		return c, 0, 0
	}
	loss = d / float32(n)
	// The spread counts only slots where the expected echo stands clear of
	// the floor; nearer it, the noise floor moves the input, not the path.
	// Onsets move 20 dB within a slot, so a delay that is not a whole
	// number of slots leaves a few large residuals even for pure echo: the
	// spread is the share of slots off by more than echoOffDb.
	off, m := 0, 0
	for i := range y {
		if y[i]-loss > echoSilenceDb+6 {
			if v := y[i] - x[i] - loss; v > echoOffDb || v < -echoOffDb {
				off++
			}
			m++
		}
	}
	if m < 3 {
		return c, loss, 0
	}
	return c, loss, float32(off) / float32(m)
}

// corr is the Pearson correlation of x and y, with their means.
func corr(x, y []float32) (c, mx, my float32) {
	n := float32(len(x))
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float32
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, mx, my
	}
	return sxy / float32(math.Sqrt(float64(sxx*syy))), mx, my
}
