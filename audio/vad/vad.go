package vad

import (
	"errors"
	"fmt"
	"math"

	"github.com/veraneural/vera-gateway/audio"
)

// FrameSamples is the VAD's frame: 10 ms at audio.SampleRate.
const FrameSamples = audio.Frame10

var (
	// ErrConfig is returned for an invalid Config.
	ErrConfig = errors.New("vad: invalid config")
	// ErrFrameSize is returned when a frame is not FrameSamples long.
	ErrFrameSize = errors.New("vad: frame is not 160 samples")
)

// NumFeatures is the length of Features.X.
const NumFeatures = 10

// FeatureNames names Features.X (and Weights.W) in order.
var FeatureNames = [NumFeatures]string{
	"snr_low",     // mean band SNR 250-1000 Hz, dB, each band clipped to [0,30]
	"snr_mid",     // 1000-2500 Hz
	"snr_high",    // 2500-4000 Hz
	"snr_top",     // 4000-8000 Hz
	"harmonicity", // peak normalised autocorrelation at pitch lags, 0..1
	"voiced_snr",  // harmonicity × snr_low / 30: periodic energy above the floor
	"flatness",    // spectral flatness 250-4000 Hz, dB (<= 0)
	"modulation",  // smoothed |Δ speech-band energy| between frames, dB
	"level",       // (E - floor) / (peak - floor) of the 250-4000 Hz energy, 0..1.5
	"long_snr",    // peak - floor of the 250-4000 Hz energy, dB: how noisy the stream is
}

// Weights are one logistic combination of the features:
// z = Bias + Σ W[i]·X[i]. The VAD blends two sets by how noisy the stream
// is: m = clamp((long_snr − 10 dB)/20 dB, 0, 1), z = (1−m)·z_noisy + m·z_clean,
// p = 1/(1+e^−z).
type Weights struct {
	Bias float32              `yaml:"bias"`
	W    [NumFeatures]float32 `yaml:"w"`
}

// DefaultWeights were fitted by "vera-eval vad -fit" (class-balanced logistic
// regression, leave-one-clip-out checked) on the shared labelled set clean and
// mixed with three noises at 10 and 0 dB; see BENCHMARKS.md ("Audio core").
func DefaultWeights() (clean, noisy Weights) {
	// vera-eval vad -fit -smooth 12 -fit-neg-weight 1.5 -fit-neg-weight-noisy 0.8
	clean = Weights{Bias: -3.0985, W: [NumFeatures]float32{0.0243, -0.0876, 0.0744, -0.0095, 2.1127, 4.2685, 0.0636, 0.9400, 4.1545, -0.0521}}
	noisy = Weights{Bias: -2.8263, W: [NumFeatures]float32{0.1007, -0.1727, 0.2436, -0.0173, 2.8099, 15.7414, 0.2356, 0.7540, 0.8606, 0.0247}}
	return clean, noisy
}

const (
	noisyDb = 10 // long_snr at or below which only the noisy weights apply
	cleanDb = 30 // long_snr at or above which only the clean weights apply
)

// Config configures a VAD.
type Config struct {
	// Weights for clean streams (long_snr >= 30 dB) and NoisyWeights for
	// noisy ones (<= 10 dB); blended linearly in between.
	Weights      Weights `yaml:"weights"`
	NoisyWeights Weights `yaml:"noisy_weights"`
	// ReleaseFrames is how many 10 ms frames the output takes to decay from a
	// speech frame (max with the raw probability); 0 disables smoothing.
	ReleaseFrames int `yaml:"release_frames"`
	// SmoothFrames is the time constant, in 10 ms frames, of an exponential
	// average of the logit before the sigmoid (1 = no smoothing).
	SmoothFrames int `yaml:"smooth_frames"`
	// NoiseWindowMs is the minimum-statistics window of the noise floor: the
	// floor is the lowest smoothed band energy seen in the last NoiseWindowMs,
	// so it falls at once and rises within that time.
	NoiseWindowMs int `yaml:"noise_window_ms"`
	// SilenceDbfs: frames quieter than this (RMS, dBFS) score 0.
	SilenceDbfs float32 `yaml:"silence_dbfs"`
	// RawFloorDb: a frame whose mean band-group SNR (snr_low..snr_top) is
	// below this has Features.Raw 0. Right after speech stops, the
	// modulation and voicing features still carry it for 30–50 ms; the
	// band energies do not. 0 disables. It touches the smoothed
	// probability only in a stream that has stayed within 8 dB of its floor
	// (stationary noise: such frames add at most a logit of -2).
	RawFloorDb float32 `yaml:"raw_floor_db"`
}

// DefaultConfig returns the tuned defaults.
func DefaultConfig() Config {
	clean, noisy := DefaultWeights()
	return Config{Weights: clean, NoisyWeights: noisy, ReleaseFrames: 8, SmoothFrames: 12, NoiseWindowMs: 2000, SilenceDbfs: -75,
		RawFloorDb: 3.5}
}

// Validate reports the first invalid key.
func (c Config) Validate() error {
	for _, set := range []struct {
		name string
		w    Weights
	}{{"weights", c.Weights}, {"noisy_weights", c.NoisyWeights}} {
		for i, x := range append([]float32{set.w.Bias}, set.w.W[:]...) {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x > 100 || x < -100 {
				key := "bias"
				if i > 0 {
					key = fmt.Sprintf("w[%d] (%s)", i-1, FeatureNames[i-1])
				}
				return fmt.Errorf("audio.vad.%s.%s: must be finite in [-100,100], got %v: %w", set.name, key, x, ErrConfig)
			}
		}
	}
	switch {
	case c.ReleaseFrames < 0 || c.ReleaseFrames > 100:
		return fmt.Errorf("audio.vad.release_frames: must be in [0,100], got %d: %w", c.ReleaseFrames, ErrConfig)
	case c.SmoothFrames < 1 || c.SmoothFrames > 100:
		return fmt.Errorf("audio.vad.smooth_frames: must be in [1,100], got %d: %w", c.SmoothFrames, ErrConfig)
	case c.NoiseWindowMs < 500 || c.NoiseWindowMs > 10000 || c.NoiseWindowMs%500 != 0:
		return fmt.Errorf("audio.vad.noise_window_ms: must be a multiple of 500 in [500,10000], got %d: %w", c.NoiseWindowMs, ErrConfig)
	case !(c.SilenceDbfs >= -120 && c.SilenceDbfs <= -20):
		return fmt.Errorf("audio.vad.silence_dbfs: must be in [-120,-20], got %v: %w", c.SilenceDbfs, ErrConfig)
	case !(c.RawFloorDb >= 0 && c.RawFloorDb <= 30):
		return fmt.Errorf("audio.vad.raw_floor_db: must be in [0,30], got %v: %w", c.RawFloorDb, ErrConfig)
	}
	return nil
}

// Features are one frame's detector inputs, exposed for fitting and tests.
type Features struct {
	X      [NumFeatures]float32 // see FeatureNames
	Silent bool                 // below the digital-silence guard
	// Raw is this frame's probability before the logit average and release:
	// noisier, but without their lag, so it marks where speech really ends.
	Raw float32
	// Pitch is the fundamental frequency in Hz (80–400) at the
	// autocorrelation peak that gives harmonicity (X[4]), refined between
	// lags by a parabola; 0 when the frame has no periodic energy. It is
	// only meaningful where harmonicity is high (a voiced frame); the turn
	// detector reads its contour. It does not enter the probability.
	Pitch float32
}

// band edges in Hz; the speech bands are those within [250, 4000].
var bandHz = [...]float32{125, 250, 375, 500, 750, 1000, 1250, 1500, 2000, 2500, 3000, 3500, 4000, 5000, 6000, 8000}

const (
	nBands = len(bandHz) - 1
	nTrack = nBands + 1
	// peakDecay is how fast the speech-level peak decays: 5 dB/s in log2/frame.
	peakDecay = 5.0 / log2ToDb / 100
	log2ToDb  = 3.0103
	decim     = 8  // 16 kHz → 2 kHz for the pitch analysis
	pitchWin  = 48 // 24 ms at 2 kHz
	lagMin    = 5  // 2.5 ms = 400 Hz
	lagMax    = 25 // 12.5 ms = 80 Hz
	// lagLow extends the pitch estimate (not harmonicity) down to 60 Hz:
	// low male voices fall below 80 Hz at the end of a statement.
	lagLow  = 33
	firTaps = 24
	lowBuf  = pitchWin + lagLow

	blockMs     = 500
	blockFrames = blockMs / 10
	maxBlocks   = 10000 / blockMs
	// minBias compensates minimum statistics' low bias (log2 units, ~1.5 dB).
	minBias = 0.5
	// idleLongDb and idleLogit: in a stream whose long_snr is under
	// idleLongDb, a frame at the noise floor (RawFloorDb) adds at most
	// idleLogit (p 0.12) to the smoothed logit.
	idleLongDb = 8
	idleLogit  = -2
)

// VAD is one stream's detector.
type VAD struct {
	cfg Config
	fft *realFFT

	win    [fftN]float32
	hist   [fftN]float32 // last 256 samples, scaled to [-1,1)
	x      [fftN]float32
	pow    [fftBins]float32
	bandLo [nBands]int
	bandHi [nBands]int
	group  [nBands]int8    // feature group per band: 0 low, 1 mid, 2 high, 3 top, -1 none
	noise  [nTrack]float32 // log2 noise floor per band, then of the 250-4000 Hz sum
	smooth [nTrack]float32 // smoothed log2 band energy
	bmin   [nTrack]float32 // minimum of smooth in the current block
	hmin   [maxBlocks][nTrack]float32
	zs     float32 // smoothed logit
	peak   float32 // decaying peak of the 250-4000 Hz log2 energy
	nblk   int     // blocks in the window
	bpos   int     // frames into the current block
	bidx   int     // next hmin slot
	bfill  int     // filled hmin slots
	minLog [nBands]float32

	fir   [firTaps]float32
	low   [lowBuf]float32 // 2 kHz band-passed history
	hp    [5]float32      // 200 Hz high-pass biquad b0,b1,b2,a1,a2 at 2 kHz
	hpX   [2]float32      // biquad input history
	hpY   [2]float32      // biquad output history
	phase int             // decimation phase carried between frames

	frames    int
	lastE     float32
	mod       float32
	silenceE  float32 // mean-square threshold
	out       float32
	releaseDn float32
}

// New returns a VAD for one stream.
func New(cfg Config) (*VAD, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	v := &VAD{cfg: cfg, fft: newRealFFT()}
	for i := range v.win {
		v.win[i] = float32(0.5 - 0.5*math.Cos(2*math.Pi*(float64(i)+0.5)/fftN))
	}
	for b := range nBands {
		v.bandLo[b] = int(bandHz[b] / binWidth)
		v.bandHi[b] = min(int(bandHz[b+1]/binWidth), fftBins-1)
		switch lo := bandHz[b]; {
		case lo < 250:
			v.group[b] = -1
		case lo < 1000:
			v.group[b] = 0
		case lo < 2500:
			v.group[b] = 1
		case lo < 4000:
			v.group[b] = 2
		default:
			v.group[b] = 3
		}
		// Floor: -100 dBFS per bin in the band (avoids infinite SNR on digital silence).
		v.minLog[b] = float32(math.Log2(float64(v.bandHi[b]-v.bandLo[b]) * 1e-10 * fftN))
	}
	// Windowed-sinc low-pass at 800 Hz for decimation to 2 kHz.
	fc := 800.0 / audio.SampleRate
	var sum float64
	for i := range firTaps {
		t := float64(i) - float64(firTaps-1)/2
		s := 2 * fc
		if t != 0 {
			s = math.Sin(2*math.Pi*fc*t) / (math.Pi * t)
		}
		w := 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/float64(firTaps-1))
		v.fir[i] = float32(s * w)
		sum += s * w
	}
	for i := range v.fir {
		v.fir[i] /= float32(sum)
	}
	w0 := 2 * math.Pi * 200 / 2000
	alpha := math.Sin(w0) / (2 * math.Sqrt2 / 2)
	a0 := 1 + alpha
	v.hp = [5]float32{float32((1 + math.Cos(w0)) / 2 / a0), float32(-(1 + math.Cos(w0)) / a0),
		float32((1 + math.Cos(w0)) / 2 / a0), float32(-2 * math.Cos(w0) / a0), float32((1 - alpha) / a0)}
	v.nblk = cfg.NoiseWindowMs / blockMs
	v.silenceE = float32(math.Pow(10, float64(cfg.SilenceDbfs)/10))
	if cfg.ReleaseFrames > 0 {
		v.releaseDn = 1 / float32(cfg.ReleaseFrames)
	}
	v.Reset()
	return v, nil
}

// Reset forgets the stream (noise floor, history).
func (v *VAD) Reset() {
	clear(v.hist[:])
	clear(v.low[:])
	v.hpX, v.hpY, v.phase = [2]float32{}, [2]float32{}, 0
	v.frames = 0
	v.bpos, v.bidx, v.bfill = 0, 0, 0
	v.mod, v.lastE, v.out = 0, 0, 0
}

// Process returns the speech probability of one 10 ms frame.
func (v *VAD) Process(frame []int16) (float32, error) {
	p, _, err := v.ProcessFeatures(frame)
	return p, err
}

// ProcessFeatures is Process that also returns the frame's features.
func (v *VAD) ProcessFeatures(frame []int16) (float32, Features, error) {
	if len(frame) != FrameSamples {
		return 0, Features{}, fmt.Errorf("vad: got %d samples: %w", len(frame), ErrFrameSize)
	}
	copy(v.hist[:], v.hist[FrameSamples:])
	h := v.hist[fftN-FrameSamples:]
	var ms float32
	for i, s := range frame {
		f := float32(s) * (1.0 / 32768)
		h[i] = f
		ms += f * f
	}
	ms /= FrameSamples
	var f Features
	harm, f0 := v.pitch()
	for i := range v.x {
		v.x[i] = v.hist[i] * v.win[i]
	}
	v.fft.power(&v.x, &v.pow)

	var snr [4]float32
	var cnt [4]float32
	var eSum float32
	var bandLog [nTrack]float32
	for b := range nBands {
		var e float32
		for k := v.bandLo[b]; k < v.bandHi[b]; k++ {
			e += v.pow[k]
		}
		l := fastLog2(e + 1e-20)
		if l < v.minLog[b] {
			l = v.minLog[b]
		}
		bandLog[b] = l
		g := v.group[b]
		if g < 0 {
			continue
		}
		if g < 3 {
			eSum += e
		}
		if v.frames > 0 {
			snr[g] += min(max((l-v.noise[b])*log2ToDb, 0), 30)
		}
		cnt[g]++
	}
	for g := range snr {
		f.X[g] = snr[g] / cnt[g]
	}
	f.X[4] = harm
	f.Pitch = f0
	f.X[5] = harm * f.X[0] / 30

	// Flatness over 250-4000 Hz bins.
	lo, hi := int(250/binWidth), int(4000/binWidth)
	var logSum, linSum float32
	for k := lo; k < hi; k++ {
		p := v.pow[k] + 1e-20
		logSum += fastLog2(p)
		linSum += p
	}
	n := float32(hi - lo)
	f.X[6] = (logSum/n - fastLog2(linSum/n)) * log2ToDb

	eLog := max(fastLog2(eSum+1e-20), v.minLog[0])
	bandLog[nBands] = eLog
	if v.frames == 0 {
		v.peak = eLog
	} else {
		v.peak = max(eLog, v.peak-peakDecay)
	}
	if v.frames > 0 {
		floor := v.noise[nBands]
		long := max(v.peak-floor, 0) * log2ToDb
		f.X[8] = min(max((eLog-floor)*log2ToDb/max(long, 3), 0), 1.5)
		f.X[9] = min(long, 60)
	}
	e := eLog * log2ToDb
	if v.frames > 0 {
		d := e - v.lastE
		if d < 0 {
			d = -d
		}
		d = min(d, 20)
		v.mod += (d - v.mod) * 0.25
	}
	v.lastE = e
	f.X[7] = v.mod
	f.Silent = ms < v.silenceE

	wc, wn := &v.cfg.Weights, &v.cfg.NoisyWeights
	zc, zn := wc.Bias, wn.Bias
	for i, x := range f.X {
		zc += wc.W[i] * x
		zn += wn.W[i] * x
	}
	m := Blend(f.X[9])
	z := m*zc + (1-m)*zn
	atFloor := (f.X[0]+f.X[1]+f.X[2]+f.X[3])/4 < v.cfg.RawFloorDb
	if atFloor && f.X[9] < idleLongDb {
		// Nothing in the stream has risen idleLongDb above its floor within
		// the peak's memory, and this frame is at the floor: stationary
		// noise, whose logit under the noisy weights idles close to the
		// threshold and crossed it every few seconds (white, pink, brown
		// noise at any level started a turn 6-24 times a minute). Such a
		// frame pulls the average down; the first frame that rises above
		// the floor lifts the peak, so onsets are not delayed.
		z = min(z, idleLogit)
	}
	if v.frames == 0 {
		v.zs = z
	} else {
		v.zs += (z - v.zs) / float32(v.cfg.SmoothFrames)
	}
	f.Raw = float32(1 / (1 + math.Exp(-float64(z))))
	if atFloor {
		// The bands are at their noise floor: whatever the modulation and
		// voicing windows still carry from the speech just ended, this
		// frame holds none (Raw marks where speech really ends).
		f.Raw = 0
	}
	z = v.zs
	p := float32(1 / (1 + math.Exp(-float64(z))))
	if f.Silent {
		p, f.Raw = 0, 0
	}

	v.updateNoise(&bandLog)
	v.frames++

	if v.releaseDn > 0 {
		v.out = max(p, v.out-v.releaseDn)
	} else {
		v.out = p
	}
	return v.out, f, nil
}

// pitch updates the 2 kHz band-passed history from the newest 160 samples
// and returns the peak normalised autocorrelation over lags 5..25 and the
// fundamental frequency at that peak (Hz, 0 when there is none).
func (v *VAD) pitch() (float32, float32) {
	// 20 new decimated samples per frame; the FIR reads back into hist.
	const newOut = FrameSamples / decim
	copy(v.low[:], v.low[newOut:])
	base := fftN - FrameSamples
	for j := range newOut {
		end := base + j*decim + decim - 1 // newest sample index for this output
		var acc float32
		for t := range firTaps {
			acc += v.fir[t] * v.hist[end-t]
		}
		// One-pole/one-zero high-pass at 150 Hz removes rumble and DC.
		y := v.hp[0]*acc + v.hp[1]*v.hpX[0] + v.hp[2]*v.hpX[1] - v.hp[3]*v.hpY[0] - v.hp[4]*v.hpY[1]
		v.hpX[1], v.hpX[0] = v.hpX[0], acc
		v.hpY[1], v.hpY[0] = v.hpY[0], y
		v.low[lowBuf-newOut+j] = y
	}
	x := v.low[lagLow:]
	var e0 float32
	for _, s := range x {
		e0 += s * s
	}
	if e0 < 1e-12 {
		return 0, 0
	}
	// Energy of the lagged window, updated incrementally as the lag grows.
	var eL float32
	for i := range pitchWin {
		s := v.low[lagLow-lagMin+i]
		eL += s * s
	}
	// r2 holds each lag's signed squared correlation (negative when the
	// correlation is), for the parabola around the peak. Harmonicity is the
	// peak over lagMin..lagMax, as the weights were fitted; the pitch may
	// go on to lagLow when that peak is already near 80 Hz.
	var r2 [lagLow - lagMin + 1]float32
	var best float32
	bestLag := 0
	for lag := lagMin; lag <= lagLow; lag++ {
		if lag > lagMin {
			in := v.low[lagLow-lag]
			out := v.low[lagLow-lag+pitchWin]
			eL += in*in - out*out
		}
		y := v.low[lagLow-lag : lagLow-lag+pitchWin]
		var c float32
		for i := range pitchWin {
			c += x[i] * y[i]
		}
		// Compare squared correlations; one square root at the end.
		if eL > 1e-12 {
			r := c * c / (e0 * eL)
			if c < 0 {
				r = -r
			}
			r2[lag-lagMin] = r
			if r > best && lag <= lagMax {
				best, bestLag = r, lag
			}
		}
	}
	if bestLag == 0 {
		return 0, 0
	}
	pLag := bestLag
	if bestLag >= lagMax-2 {
		for lag := lagMax + 1; lag <= lagLow; lag++ {
			if r2[lag-lagMin] > r2[pLag-lagMin] {
				pLag = lag
			}
		}
	}
	lag := float32(pLag)
	if i := pLag - lagMin; i > 0 && i < len(r2)-1 {
		a, b, c := r2[i-1], r2[i], r2[i+1]
		if d := a - 2*b + c; d < 0 {
			lag += min(max(0.5*(a-c)/d, -0.5), 0.5)
		}
	}
	return min(float32(math.Sqrt(float64(best))), 1), audio.SampleRate / decim / lag
}

// updateNoise tracks each band's floor by minimum statistics over
// NoiseWindowMs in blocks of 500 ms, on lightly smoothed log energies.
func (v *VAD) updateNoise(bandLog *[nTrack]float32) {
	for b := range nTrack {
		l := bandLog[b]
		if v.frames == 0 {
			v.smooth[b] = l
		} else {
			v.smooth[b] += (l - v.smooth[b]) * 0.4
		}
		if v.bpos == 0 || v.smooth[b] < v.bmin[b] {
			v.bmin[b] = v.smooth[b]
		}
		m := v.bmin[b]
		for i := range v.bfill {
			m = min(m, v.hmin[i][b])
		}
		v.noise[b] = m + minBias
	}
	v.bpos++
	if v.bpos == blockFrames {
		v.hmin[v.bidx] = v.bmin
		v.bidx = (v.bidx + 1) % v.nblk
		v.bfill = min(v.bfill+1, v.nblk)
		v.bpos = 0
	}
}

// Blend is the share of the clean weights for a stream whose long_snr is
// longSNR dB (the rest goes to the noisy weights).
func Blend(longSNR float32) float32 {
	return min(max((longSNR-noisyDb)/(cleanDb-noisyDb), 0), 1)
}
