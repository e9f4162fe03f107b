package voice

import (
	"math"
	"sync"
	"time"
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
)

// echoGuard tells the gateway's own voice, leaking back into the input,
// from the person speaking: the gateway knows exactly what it played
// (reference, from the sender's tap), so input whose energy envelope follows
// the played envelope at some delay, and is quieter than it, is echo.
// Slots are 10 ms of wall time since the session started, so the two
// streams line up whatever each one's pacing.
type echoGuard struct {
	mu     sync.Mutex // mu guards ref and refSlot (the tap runs on the sender's goroutine)
	ref    [echoSlots]float32
	refSl  [echoSlots]int64
	in     [echoSlots]float32 // owned by the media loop
	inSl   [echoSlots]int64
	origin time.Time
}

func newEchoGuard() *echoGuard { return &echoGuard{origin: time.Now()} }

func (g *echoGuard) slotNow() int64 { return int64(time.Since(g.origin) / (10 * time.Millisecond)) }

// reference is the sender's tap: one outbound 20 ms frame at 16 kHz.
func (g *echoGuard) reference(pcm []int16, _ uint32) { g.addRef(g.slotNow(), pcm) }

// addRef records an outbound frame ending at slot (two 10 ms slots for a
// 20 ms frame).
func (g *echoGuard) addRef(slot int64, pcm []int16) {
	n := len(pcm) / 160
	g.mu.Lock()
	for i := 0; i < n; i++ {
		s := slot - int64(n-1-i)
		j := int(((s % echoSlots) + echoSlots) % echoSlots)
		g.ref[j], g.refSl[j] = logEnergy(pcm[i*160:(i+1)*160]), s
	}
	g.mu.Unlock()
}

// isEcho records a 10 ms inbound frame at the current slot and reports
// whether it looks like our own voice.
func (g *echoGuard) isEcho(f []int16) bool { return g.isEchoAt(g.slotNow(), f) }

func (g *echoGuard) isEchoAt(slot int64, f []int16) bool {
	j := int(((slot % echoSlots) + echoSlots) % echoSlots)
	g.in[j], g.inSl[j] = logEnergy(f), slot
	g.mu.Lock()
	defer g.mu.Unlock()
	var x, y [echoWindow]float32
	nx := 0
	for k := 0; k < echoWindow; k++ {
		x[k] = g.at(&g.in, &g.inSl, slot-int64(k))
		if x[k] > echoSilenceDb {
			nx++
		}
	}
	if nx < echoWindow/3 {
		return false // too little input to judge; the VAD will not fire on it either
	}
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
		c, mx, my := corr(x[:], y[:])
		if c >= echoMinCorr && mx <= my-echoMarginDb {
			return true
		}
	}
	return false
}

func (g *echoGuard) at(v *[echoSlots]float32, sl *[echoSlots]int64, s int64) float32 {
	j := int(((s % echoSlots) + echoSlots) % echoSlots)
	if sl[j] != s {
		return echoSilenceDb - 30 // nothing recorded for that slot: silence
	}
	return v[j]
}

// logEnergy is the frame's mean power in dBFS.
func logEnergy(f []int16) float32 {
	var e float64
	for _, v := range f {
		e += float64(v) * float64(v)
	}
	e /= float64(len(f)) * 32768 * 32768
	return float32(10 * math.Log10(e+1e-12))
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
