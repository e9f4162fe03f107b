package turn

import (
	"math"

	"github.com/veraneural/vera-gateway/audio/vad"
)

// ringFrames is how many 10 ms frames the prosody ring holds: the last
// 1.28 s, enough for the 0.5 s before a back-dated end of speech.
const ringFrames = 128

// Voicing: a speech frame whose harmonicity is at least minVoicing and
// whose pitch is known is voiced (a vowel, a nasal, a voiced consonant).
const minVoicing = 0.6

// Analysis windows before the end of speech, in 10 ms frames.
const (
	pitchWindow  = 50 // pitch: the last 0.5 s (median, octave errors)
	energyWindow = 30 // energy decay: the last 0.3 s
	finalFrames  = 10 // final energy: the last 0.1 s
	finalPitchN  = 3  // final pitch: the last three voiced frames
	moveFrames   = 10 // the last movement: the final pitch against 0.1 s before it
	// maxCoda is how many unvoiced frames may follow the final voiced run
	// (a final consonant) before the run is no longer final.
	maxCoda = 15
	// pitchOutlier: voiced frames more than this many semitones from the
	// window's median are octave errors, not intonation.
	pitchOutlier = 7
)

// Slow averages over the stream (a speaker's range): the first frames are
// averaged exactly, later ones exponentially with this weight.
const (
	slowWeight = 1.0 / 256
	runWeight  = 0.1
)

const (
	flagSpeech = 1 << iota
	flagVoiced
)

// prosody keeps what the adaptive policy reads from the VAD's features:
// a ring of the last frames and slow averages over the stream. Pushing a
// frame costs a few comparisons and at most one logarithm; the contour is
// only summarised (summarise) in silence after speech.
type prosody struct {
	pitch [ringFrames]float32 // semitones re 100 Hz where voiced
	level [ringFrames]float32 // dB above the noise floor
	flags [ringFrames]uint8
	n     int64 // frames pushed; frame i is at i % ringFrames

	meanPitch, meanLevel float32 // the speaker's pitch (semitones) and speech level (dB)
	pitchN, levelN       int
	run                  int     // length of the voiced run in progress (frames)
	runMean              float32 // mean voiced-run length (frames)
	runN                 int
	sinceOnset           int     // frames since the last voiced-run onset
	onsetGap             float32 // mean frames between voiced-run onsets (syllable rate)
	gapN                 int
	// medPitch is a running median of the speaker's voiced pitch
	// (semitones; a step of medStep per frame toward each one), against
	// which octave errors are folded; turnLevel a running median of the
	// turn's speech level (dB).
	medPitch, turnLevel float32
	medN, turnLevelN    int
	// floorPitch tracks the low end of the speaker's voiced pitch (about
	// the 9th percentile: floorDown semitones down per frame below it,
	// floorUp up above it), octave errors folded to medPitch.
	floorPitch float32
	floorN     int
}

// Running-median steps per frame: semitones of pitch, dB of level.
const (
	medStep   = 0.1
	levelStep = 0.1
	// slopeWindow: the final pitch slope is fitted over the voiced frames
	// of the last 0.3 s; octaveFold: a frame more than this many semitones
	// from the running median is taken as an octave error and folded.
	slopeWindow = 30
	octaveFold  = 8
	// floorDown, floorUp: the pitch floor's steps (equilibrium at
	// floorUp/(floorUp+floorDown) ≈ 9 % of voiced frames below it).
	floorDown = 0.5
	floorUp   = 0.05
	// flatMinRun: a final voiced segment this long (frames) is judged for
	// flatness (a held "um", "uh" or a drawn-out word).
	flatMinRun = 12
)

// stepMedian moves a running median estimate toward x by step (the first
// value sets it).
func stepMedian(m *float32, n *int, x, step float32) {
	*n++
	switch {
	case *n == 1:
		*m = x
	case x > *m:
		*m += min(step, x-*m)
	case x < *m:
		*m -= min(step, *m-x)
	}
}

// newTurn forgets the turn's level (the speaker's averages stay).
func (pr *prosody) newTurn() { pr.turnLevel, pr.turnLevelN = 0, 0 }

// slow moves an average toward x: exactly over the first 1/w samples, then
// with weight w.
func slow(mean *float32, n *int, x, w float32) {
	*n++
	a := 1 / float32(*n)
	if a < w {
		a = w
	}
	*mean += (x - *mean) * a
}

// levelDb is the frame's speech-band energy in dB above the noise floor,
// from the VAD's level (share of the floor-to-peak range) and long SNR.
func levelDb(f *vad.Features) float32 { return f.X[8] * max(f.X[9], 3) }

// push records one 10 ms frame; speech is the turn detector's speech
// evidence for it.
func (pr *prosody) push(speech bool, f *vad.Features) {
	i := pr.n % ringFrames
	pr.n++
	var fl uint8
	lv := levelDb(f)
	pr.level[i] = lv
	pr.pitch[i] = 0
	if speech {
		fl |= flagSpeech
		slow(&pr.meanLevel, &pr.levelN, lv, slowWeight)
		stepMedian(&pr.turnLevel, &pr.turnLevelN, lv, levelStep)
		if f.X[4] >= minVoicing && f.Pitch > 0 {
			fl |= flagVoiced
			st := float32(12 * math.Log2(float64(f.Pitch)/100))
			pr.pitch[i] = st
			slow(&pr.meanPitch, &pr.pitchN, st, slowWeight)
			folded := fold(st, pr.medPitch, pr.medN)
			stepMedian(&pr.medPitch, &pr.medN, folded, medStep)
			pr.floorN++
			switch {
			case pr.floorN == 1:
				pr.floorPitch = folded
			case folded < pr.floorPitch:
				pr.floorPitch -= min(floorDown, pr.floorPitch-folded)
			default:
				pr.floorPitch += min(floorUp, folded-pr.floorPitch)
			}
		}
	}
	pr.flags[i] = fl
	if pr.sinceOnset < 1000 {
		pr.sinceOnset++
	}
	if fl&flagVoiced != 0 {
		if pr.run == 0 {
			// A syllable's onset: the gap since the last one counts toward
			// the speaking rate unless it spans a pause.
			if pr.sinceOnset < 60 && pr.n > 1 {
				slow(&pr.onsetGap, &pr.gapN, float32(pr.sinceOnset), runWeight)
			}
			pr.sinceOnset = 0
		}
		pr.run++
	} else if pr.run > 0 {
		slow(&pr.runMean, &pr.runN, float32(pr.run), runWeight)
		pr.run = 0
	}
}

// fold moves a pitch an octave toward the running median m when it lies
// more than octaveFold semitones away (a halved or doubled period).
func fold(st, m float32, n int) float32 {
	if n < 10 {
		return st
	}
	switch {
	case st-m > octaveFold:
		return st - 12
	case m-st > octaveFold:
		return st + 12
	}
	return st
}

// reset forgets the stream.
func (pr *prosody) reset() { *pr = prosody{} }

// at returns frame k's entries (k < n, k ≥ n − ringFrames).
func (pr *prosody) at(k int64) (pitch, level float32, fl uint8) {
	i := k % ringFrames
	return pr.pitch[i], pr.level[i], pr.flags[i]
}

// prosodic is the summary of the speech before a pause.
type prosodic struct {
	pitchFall   float32 // semitones the final pitch lies below the peak of the last 0.5 s
	pitchMove   float32 // semitones the final pitch moved over the last 0.1 s of voicing
	pitchEnd    float32 // final pitch minus the speaker's mean, semitones
	energySlope float32 // dB per second over the last 0.3 s of speech
	energyEnd   float32 // final 0.1 s level minus the speaker's mean, dB
	lengthening float32 // log2 of the final voiced run over the mean run
	rate        float32 // log2 of syllables per second over 4
	voiced      int     // voiced frames the contour was fitted on
	// pitchSlope: semitones over the last 0.3 s of voiced frames (least
	// squares, octave errors folded to the running median).
	pitchSlope float32
	// finalEnergy: the last voiced segment's level minus the turn's
	// median speech level, dB.
	finalEnergy float32
	// syllableLength: log2 of the last voiced segment over the speaker's
	// mean syllable period.
	syllableLength float32
	// pitchFloor: the final pitch (last voiced frames, octave errors
	// folded) above the speaker's pitch floor, semitones: a statement
	// ends low in the speaker's own range, a continuation above it.
	pitchFloor float32
	// finalFlat: 0–1, how level the pitch of a long final voiced segment
	// is (1: within 1 semitone over ≥ 120 ms; a held filler or word, not
	// a fall from an accent); 0 for a short or moving one.
	finalFlat float32
}

// summarise describes the speech that ended before frame end (the index of
// the first frame after the last speech frame). At most one pass over
// pitchWindow frames plus a sort of their pitches: a few microseconds.
func (pr *prosody) summarise(end int64) prosodic {
	var s prosodic
	lo := max(end-pitchWindow, pr.n-ringFrames, 0)
	end = min(end, pr.n)
	if end <= lo {
		return s
	}
	pr.pitchContour(&s, lo, end)
	pr.energy(&s, lo, end)
	pr.lengthening(&s, lo, end)
	pr.pitchSlope(&s, lo, end)
	if pr.gapN >= 3 && pr.onsetGap > 0 {
		s.rate = clamp(float32(math.Log2(100/float64(pr.onsetGap)/4)), -2, 2)
	}
	return s
}

// pitchContour fills s's pitch cues from the voiced frames in [lo, end),
// octave errors dropped around the median.
func (pr *prosody) pitchContour(s *prosodic, lo, end int64) {
	var ps, ts [pitchWindow]float32
	np := 0
	for k := lo; k < end; k++ {
		p, _, fl := pr.at(k)
		if fl&flagVoiced != 0 {
			ps[np], ts[np] = p, float32(k-lo)
			np++
		}
	}
	if np < 6 {
		return
	}
	var tmp [pitchWindow]float32
	copy(tmp[:np], ps[:np])
	med := median(tmp[:np])
	var xs, ys [pitchWindow]float32
	m := 0
	for i := range np {
		if d := ps[i] - med; d < pitchOutlier && d > -pitchOutlier {
			xs[m], ys[m] = ts[i], ps[i]
			m++
		}
	}
	if m < 6 {
		return
	}
	// The final pitch against the contour's peak and trough: a statement
	// falls from its last accent (a rise-fall ends below the peak), a
	// continuation or a question ends at the top.
	k := max(m-finalPitchN, 0)
	var sum float32
	for _, y := range ys[k:m] {
		sum += y
	}
	final := sum / float32(m-k)
	hi := ys[0]
	for _, y := range ys[:m] {
		hi = max(hi, y)
	}
	s.pitchFall = hi - final
	// The last movement: the final pitch against the voiced frames
	// moveFrames before it (a rise-fall's last accent has fallen).
	j := m - 1
	for j > 0 && xs[j] > xs[m-1]-moveFrames {
		j--
	}
	if xs[m-1]-xs[j] >= moveFrames/2 {
		i := max(j-finalPitchN+1, 0)
		var before float32
		for _, y := range ys[i : j+1] {
			before += y
		}
		s.pitchMove = final - before/float32(j+1-i)
	}
	s.voiced = m
	if pr.pitchN > 50 {
		s.pitchEnd = final - pr.meanPitch
	}
}

// energy fills s's energy decay over the last speech frames and the final
// level.
func (pr *prosody) energy(s *prosodic, lo, end int64) {
	var xs, ys [energyWindow]float32
	m := 0
	for k := max(end-energyWindow, lo); k < end; k++ {
		_, lv, fl := pr.at(k)
		if fl&flagSpeech != 0 {
			xs[m], ys[m] = float32(k), lv
			m++
		}
	}
	if m < 5 {
		return
	}
	s.energySlope = slope(xs[:m], ys[:m]) * 100
	if pr.levelN > 50 {
		k := max(m-finalFrames, 0)
		var sum float32
		for _, y := range ys[k:m] {
			sum += y
		}
		s.energyEnd = sum/float32(m-k) - pr.meanLevel
	}
}

// lengthening fills s's final lengthening: the last voiced run (before at
// most a consonant) against the speaker's mean run.
func (pr *prosody) lengthening(s *prosodic, lo, end int64) {
	k := end - 1
	for ; k >= lo && end-1-k < maxCoda; k-- {
		if _, _, fl := pr.at(k); fl&flagVoiced != 0 {
			break
		}
	}
	run := 0
	for ; k >= lo; k-- {
		if _, _, fl := pr.at(k); fl&flagVoiced == 0 {
			break
		}
		run++
	}
	if run > 0 && pr.runN >= 3 && pr.runMean > 0 {
		s.lengthening = clamp(float32(math.Log2(float64(float32(run)/pr.runMean))), -2, 2)
	}
	if run > 0 && pr.gapN >= 3 && pr.onsetGap > 0 {
		s.syllableLength = clamp(float32(math.Log2(float64(float32(run)/pr.onsetGap))), -2, 2)
	}
	if run >= flatMinRun && pr.medN >= 20 {
		lo, hi := float32(1000), float32(-1000)
		for j := k + 1; j <= k+int64(run); j++ {
			p, _, _ := pr.at(j)
			p = fold(p, pr.medPitch, pr.medN)
			lo, hi = min(lo, p), max(hi, p)
		}
		s.finalFlat = clamp(2-(hi-lo), 0, 1)
	}
	if run > 0 && pr.turnLevelN >= 20 {
		var sum float32
		for j := k + 1; j <= k+int64(run); j++ {
			_, lv, _ := pr.at(j)
			sum += lv
		}
		s.finalEnergy = sum/float32(run) - pr.turnLevel
	}
}

// pitchSlope fills s.pitchSlope from the voiced frames of the last
// slopeWindow frames before end.
func (pr *prosody) pitchSlope(s *prosodic, lo, end int64) {
	if pr.medN < 20 {
		return
	}
	var xs, ys [slopeWindow]float32
	m := 0
	for k := max(end-slopeWindow, lo); k < end; k++ {
		p, _, fl := pr.at(k)
		if fl&flagVoiced == 0 {
			continue
		}
		p = fold(p, pr.medPitch, pr.medN)
		if d := p - pr.medPitch; d < octaveFold && d > -octaveFold {
			xs[m], ys[m] = float32(k-lo), p
			m++
		}
	}
	if m < 5 {
		return
	}
	s.pitchSlope = slope(xs[:m], ys[:m]) * slopeWindow
	if pr.floorN >= 50 {
		var sum float32
		for _, y := range ys[m-finalPitchN : m] {
			sum += y
		}
		s.pitchFloor = sum/finalPitchN - pr.floorPitch
	}
}

func clamp(x, lo, hi float32) float32 { return min(max(x, lo), hi) }

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float32) float32 {
	n := float32(len(xs))
	var mx, my float32
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= n
	my /= n
	var sxy, sxx float32
	for i := range xs {
		dx := xs[i] - mx
		sxy += dx * (ys[i] - my)
		sxx += dx * dx
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// median of v, which it reorders (insertion sort: v is at most a window).
func median(v []float32) float32 {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	return v[len(v)/2]
}
