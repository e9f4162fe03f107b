package vad

import (
	"errors"
	"fmt"
	"math"
)

// FrameSamples is the VAD's frame: 10 ms at 16 kHz.
const FrameSamples = 160

var (
	// ErrConfig is returned for an invalid Config.
	ErrConfig = errors.New("vad: invalid config")
	// ErrFrameSize is returned when a frame is not FrameSamples long.
	ErrFrameSize = errors.New("vad: frame is not 160 samples")
)

// Weights are the logistic combination of the features:
// p = 1/(1+exp(-(Bias + SNR·snr_dB + Harmonicity·h + Flatness·flat_dB + Modulation·mod_dB))).
type Weights struct {
	Bias        float32 `yaml:"bias"`
	SNR         float32 `yaml:"snr"`
	Harmonicity float32 `yaml:"harmonicity"`
	Flatness    float32 `yaml:"flatness"`
	Modulation  float32 `yaml:"modulation"`
}

// DefaultWeights were fitted by "vera-eval vad -fit" (logistic regression,
// leave-one-clip-out checked) on the shared labelled set; see docs/bench-audio.md.
func DefaultWeights() Weights {
	return Weights{Bias: -4.0, SNR: 0.45, Harmonicity: 4.0, Flatness: 0.05, Modulation: 0.1}
}

// Config configures a VAD.
type Config struct {
	// Weights of the logistic combination.
	Weights Weights `yaml:"weights"`
	// ReleaseFrames is how many 10 ms frames the output takes to decay from a
	// speech frame (max with the raw probability); 0 disables smoothing.
	ReleaseFrames int `yaml:"release_frames"`
	// NoiseRiseDbPerSec bounds how fast the noise floor may rise in non-speech.
	NoiseRiseDbPerSec float32 `yaml:"noise_rise_db_per_sec"`
	// SilenceDbfs: frames quieter than this (RMS, dBFS) score 0.
	SilenceDbfs float32 `yaml:"silence_dbfs"`
}

// DefaultConfig returns the tuned defaults.
func DefaultConfig() Config {
	return Config{Weights: DefaultWeights(), ReleaseFrames: 8, NoiseRiseDbPerSec: 3, SilenceDbfs: -75}
}

// Validate reports the first invalid key.
func (c Config) Validate() error {
	w := c.Weights
	for _, v := range []struct {
		k string
		x float32
	}{{"bias", w.Bias}, {"snr", w.SNR}, {"harmonicity", w.Harmonicity}, {"flatness", w.Flatness}, {"modulation", w.Modulation}} {
		if math.IsNaN(float64(v.x)) || math.IsInf(float64(v.x), 0) || v.x > 100 || v.x < -100 {
			return fmt.Errorf("audio.vad.weights.%s: must be finite in [-100,100], got %v: %w", v.k, v.x, ErrConfig)
		}
	}
	switch {
	case c.ReleaseFrames < 0 || c.ReleaseFrames > 100:
		return fmt.Errorf("audio.vad.release_frames: must be in [0,100], got %d: %w", c.ReleaseFrames, ErrConfig)
	case !(c.NoiseRiseDbPerSec > 0 && c.NoiseRiseDbPerSec <= 60):
		return fmt.Errorf("audio.vad.noise_rise_db_per_sec: must be in (0,60], got %v: %w", c.NoiseRiseDbPerSec, ErrConfig)
	case !(c.SilenceDbfs >= -120 && c.SilenceDbfs <= -20):
		return fmt.Errorf("audio.vad.silence_dbfs: must be in [-120,-20], got %v: %w", c.SilenceDbfs, ErrConfig)
	}
	return nil
}

// Features are one frame's detector inputs, exposed for fitting and tests.
type Features struct {
	SNR         float32 // mean clipped band SNR over 250-4000 Hz, dB
	Harmonicity float32 // peak normalised autocorrelation, 0..1
	Flatness    float32 // spectral flatness 250-4000 Hz, dB (<= 0)
	Modulation  float32 // smoothed |Δ speech-band energy|, dB
	Silent      bool    // below the digital-silence guard
}

// band edges in Hz; the speech bands are those within [250, 4000].
var bandHz = [...]float32{125, 250, 375, 500, 750, 1000, 1250, 1500, 2000, 2500, 3000, 3500, 4000, 5000, 6000, 8000}

const (
	nBands   = len(bandHz) - 1
	log2ToDb = 3.0103
	decim    = 8  // 16 kHz → 2 kHz for the pitch analysis
	pitchWin = 40 // 20 ms at 2 kHz
	lagMin   = 5  // 2.5 ms = 400 Hz
	lagMax   = 25 // 12.5 ms = 80 Hz
	firTaps  = 24
	lowBuf   = pitchWin + lagMax
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
	speech [nBands]bool
	noise  [nBands]float32 // log2 noise floor per band
	minLog [nBands]float32

	fir   [firTaps]float32
	low   [lowBuf]float32 // 2 kHz band-passed history
	hpX1  float32         // high-pass state
	hpY1  float32
	hpA   float32
	phase int // decimation phase carried between frames

	frames    int
	lastE     float32
	mod       float32
	rise      float32 // log2 units per frame
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
		v.speech[b] = bandHz[b] >= 250 && bandHz[b+1] <= 4000
		// Floor: -100 dBFS per bin in the band (avoids infinite SNR on digital silence).
		v.minLog[b] = float32(math.Log2(float64(v.bandHi[b]-v.bandLo[b]) * 1e-10 * fftN))
	}
	// Windowed-sinc low-pass at 800 Hz for decimation to 2 kHz.
	fc := 800.0 / 16000
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
	v.hpA = float32(math.Exp(-2 * math.Pi * 150 / 2000))
	v.rise = cfg.NoiseRiseDbPerSec / log2ToDb / 100
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
	v.hpX1, v.hpY1, v.phase = 0, 0, 0
	v.frames = 0
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
	f.Harmonicity = v.pitch()
	for i := range v.x {
		v.x[i] = v.hist[i] * v.win[i]
	}
	v.fft.power(&v.x, &v.pow)

	var snrSum, eSum float32
	var nSpeech int
	var bandLog [nBands]float32
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
		if v.speech[b] {
			eSum += e
			if v.frames > 0 {
				s := (l - v.noise[b]) * log2ToDb
				snrSum += min(max(s, 0), 30)
			}
			nSpeech++
		}
	}
	f.SNR = snrSum / float32(nSpeech)

	// Flatness over 250-4000 Hz bins.
	lo, hi := int(250/binWidth), int(4000/binWidth)
	var logSum, linSum float32
	for k := lo; k < hi; k++ {
		p := v.pow[k] + 1e-20
		logSum += fastLog2(p)
		linSum += p
	}
	n := float32(hi - lo)
	f.Flatness = (logSum/n - fastLog2(linSum/n)) * log2ToDb

	e := fastLog2(eSum+1e-20) * log2ToDb
	if v.frames > 0 {
		d := e - v.lastE
		if d < 0 {
			d = -d
		}
		d = min(d, 20)
		v.mod += (d - v.mod) * 0.1
	}
	v.lastE = e
	f.Modulation = v.mod
	f.Silent = ms < v.silenceE

	w := v.cfg.Weights
	z := w.Bias + w.SNR*f.SNR + w.Harmonicity*f.Harmonicity + w.Flatness*f.Flatness + w.Modulation*f.Modulation
	p := float32(1 / (1 + math.Exp(-float64(z))))
	if f.Silent {
		p = 0
	}

	// Noise floor: fast fall, bounded rise (slower in likely speech).
	rise := v.rise
	if p > 0.5 {
		rise *= 0.1
	}
	for b := range nBands {
		l := bandLog[b]
		switch {
		case v.frames == 0:
			v.noise[b] = l
		case l < v.noise[b]:
			v.noise[b] += (l - v.noise[b]) * 0.3
		case v.frames < 20:
			v.noise[b] += (l - v.noise[b]) * 0.05 // settle during start-up
		default:
			v.noise[b] += min(l-v.noise[b], rise)
		}
	}
	v.frames++

	if v.releaseDn > 0 {
		v.out = max(p, v.out-v.releaseDn)
	} else {
		v.out = p
	}
	return v.out, f, nil
}

// pitch updates the 2 kHz band-passed history from the newest 160 samples
// and returns the peak normalised autocorrelation over lags 5..25.
func (v *VAD) pitch() float32 {
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
		y := v.hpA * (v.hpY1 + acc - v.hpX1)
		v.hpX1, v.hpY1 = acc, y
		v.low[lowBuf-newOut+j] = y
	}
	x := v.low[lagMax:]
	var e0 float32
	for _, s := range x {
		e0 += s * s
	}
	if e0 < 1e-12 {
		return 0
	}
	// Energy of the lagged window, updated incrementally as the lag grows.
	var eL float32
	for i := range pitchWin {
		s := v.low[lagMax-lagMin+i]
		eL += s * s
	}
	var best float32
	for lag := lagMin; lag <= lagMax; lag++ {
		if lag > lagMin {
			in := v.low[lagMax-lag]
			out := v.low[lagMax-lag+pitchWin]
			eL += in*in - out*out
		}
		y := v.low[lagMax-lag : lagMax-lag+pitchWin]
		var c float32
		for i := range pitchWin {
			c += x[i] * y[i]
		}
		// Compare squared correlations; one square root at the end.
		if c > 0 && eL > 1e-12 {
			if r := c * c / (e0 * eL); r > best {
				best = r
			}
		}
	}
	return min(float32(math.Sqrt(float64(best))), 1)
}
