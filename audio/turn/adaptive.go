package turn

import (
	"math"

	"github.com/veraneural/vera-gateway/audio/vad"
)

// silenceRef is the silence at which the silence evidence is 0 (200 ms).
const silenceRef = SampleRate / 5

// settleSamples: a transcript from a recogniser that has heard at least
// this much of the silence after the speech has its last word (words_hold,
// words_end); one that heard less may not have (words_hold_early,
// words_end_early).
const settleSamples = SampleRate / 10

// WordsSettleSamples is settleSamples for the caller that feeds the
// recogniser: once a pause has lasted this long (PauseSilence), a
// hypothesis taken right away has heard the speech's last word and its
// settle, so the decision need not wait for the recogniser's next periodic
// partial (the voice session asks for one then; "vera-eval eot" simulates
// the same).
const WordsSettleSamples = settleSamples

// policy decides how long a pause ends the turn. The fixed policy waits
// SilenceDurationMs; the adaptive one computes, once per pause (and again
// when the transcript changes), the wait at which the end-of-turn
// probability σ(z0 + W[EvSilence]·ln(s/200 ms)) reaches the threshold, and
// clamps it to [SilenceDurationMs, MaxSilenceMs]. Both are widened by the
// patience factor. Per frame it only records prosody.
type policy struct {
	adaptive         bool
	minWait, maxW    int64 // samples, before patience
	patience         float32
	w                Weights
	logitThr         float32
	lex              *lexicon
	pr               prosody
	speechFrameEnd   int64 // prosody frame index after the last speech frame
	words            WordClass
	wordsAt          int64 // when the transcript was last given; -1 none
	wordsHeard       int64 // the audio it had heard, up to this sample time
	inPause          bool
	x                [NumEvidence]float32
	zProsody, zWords float32
	// wait is the current pause's wait in samples (the fixed wait outside
	// a pause).
	wait int64
}

func (pl *policy) init(cfg Config, w Weights) {
	ms := func(v int) int64 { return int64(v) * SampleRate / 1000 }
	pl.adaptive = cfg.Policy == PolicyAdaptive
	pl.minWait, pl.maxW = ms(cfg.SilenceDurationMs), ms(cfg.MaxSilenceMs)
	if !pl.adaptive {
		pl.maxW = pl.minWait
	}
	pl.w = w
	t := float64(w.Threshold)
	pl.logitThr = float32(math.Log(t / (1 - t)))
	pl.lex = lexiconFor(cfg.Language)
	pl.patience = 1
	pl.reset()
}

func (pl *policy) reset() {
	pl.pr.reset()
	pl.speechFrameEnd = 0
	pl.newTurn()
}

// newTurn forgets the words and the pause (a new turn, a new recogniser).
func (pl *policy) newTurn() {
	pl.pr.newTurn()
	pl.words, pl.wordsAt, pl.wordsHeard, pl.inPause = WordsNone, -1, -1, false
	pl.newTurnWait()
}

func (pl *policy) endTurn() { pl.newTurn() }

// scaled applies the patience factor to a wait.
func (pl *policy) scaled(v int64) int64 { return int64(float32(v) * pl.patience) }

func (pl *policy) maxWait() int64 { return pl.scaled(pl.maxW) }

// push records one 10 ms frame's prosody.
func (pl *policy) push(speech bool, f *vad.Features) {
	pl.pr.push(speech, f)
	if speech {
		pl.speechFrameEnd = pl.pr.n
	}
}

// speech: the turn goes on (speech evidence); any pause is over.
func (pl *policy) speech() { pl.inPause = false }

// pause: the first frame without speech evidence after speech. The
// prosody of the speech before it is summarised and the wait computed.
func (pl *policy) pause(d *Detector) {
	pl.inPause = true
	if !pl.adaptive {
		pl.wait = pl.scaled(pl.minWait)
		return
	}
	pl.evidence(d.lastSpeechEnd - d.speechStart)
	pl.wordEvidence(d.lastSpeechEnd)
	pl.setWait(d.lastSpeechEnd)
}

// evidence fills the prosodic part of x and its share of the score.
func (pl *policy) evidence(turnSpeech int64) {
	s := pl.pr.summarise(pl.speechFrameEnd)
	x := &pl.x
	x[EvPitchFall] = clamp(s.pitchFall/6, 0, 3)
	x[EvPitchMove] = clamp(s.pitchMove/6, -3, 3)
	x[EvPitchEnd] = clamp(s.pitchEnd/6, -3, 3)
	x[EvEnergySlope] = clamp(s.energySlope/60, -3, 3)
	x[EvEnergyEnd] = clamp(s.energyEnd/10, -3, 3)
	x[EvLengthening] = s.lengthening
	x[EvRate] = s.rate
	x[EvPitchSlope] = clamp(s.pitchSlope/6, -3, 3)
	x[EvFinalEnergy] = clamp(s.finalEnergy/10, -3, 3)
	x[EvSyllableLength] = s.syllableLength
	x[EvPitchFloor] = clamp(s.pitchFloor/6, -1, 3)
	x[EvFinalFlat] = s.finalFlat
	sec := float64(turnSpeech) / SampleRate
	x[EvTurnLength] = clamp(float32(math.Log2(max(sec, 1.0/8))), -3, 2)
	z := pl.w.Bias
	for i := EvPitchFall; i <= EvTurnLength; i++ {
		z += pl.w.W[i] * x[i]
	}
	pl.zProsody = z
}

// wordEvidence fills the word part of x from the transcript as of now.
func (pl *policy) wordEvidence(speechEnd int64) {
	x := &pl.x
	x[EvWordsHold], x[EvWordsEnd], x[EvWordsHoldEarly], x[EvWordsEndEarly] = 0, 0, 0, 0
	if pl.wordsAt >= 0 {
		settled := pl.wordsHeard-speechEnd >= settleSamples
		switch {
		case pl.words == WordsHold && settled:
			x[EvWordsHold] = 1
		case pl.words == WordsEnd && settled:
			x[EvWordsEnd] = 1
		case pl.words == WordsHold:
			x[EvWordsHoldEarly] = 1
		case pl.words == WordsEnd:
			x[EvWordsEndEarly] = 1
		}
	}
	var z float32
	for i := EvWordsHold; i <= EvWordsEndEarly; i++ {
		z += pl.w.W[i] * x[i]
	}
	pl.zWords = z
}

// setWait solves σ(z0 + w·ln(s/200 ms)) = threshold for s; while the
// recogniser has not heard the speech to its end, the wait is the longest.
func (pl *policy) setWait(speechEnd int64) {
	if pl.wordsAt >= 0 && pl.wordsHeard < speechEnd {
		pl.wait = pl.scaled(pl.maxW)
		return
	}
	z0 := pl.zProsody + pl.zWords
	ws := pl.w.W[EvSilence]
	e := float64((pl.logitThr - z0) / ws)
	var s int64
	switch {
	case e > 10:
		s = pl.maxW
	case e < -10:
		s = pl.minWait
	default:
		s = int64(float64(silenceRef) * math.Exp(e))
	}
	pl.wait = pl.scaled(min(max(s, pl.minWait), pl.maxW))
}

// setWords records the transcript's word class as of now, from audio
// heard up to heard, and updates the wait of a pause in progress.
func (pl *policy) setWords(c WordClass, now, heard int64, d *Detector) {
	pl.words, pl.wordsAt, pl.wordsHeard = c, now, heard
	if pl.adaptive && pl.inPause {
		pl.wordEvidence(d.lastSpeechEnd)
		pl.setWait(d.lastSpeechEnd)
	}
}

func (pl *policy) setPatience(f float32, speechEnd int64) {
	if !(f >= 1) {
		f = 1
	}
	pl.patience = min(f, MaxPatience)
	if pl.adaptive && pl.inPause {
		pl.setWait(speechEnd)
		return
	}
	pl.newTurnWait()
}

// newTurnWait is the wait outside a pause (only the fixed policy uses it).
func (pl *policy) newTurnWait() {
	if pl.adaptive {
		pl.wait = pl.scaled(pl.maxW)
	} else {
		pl.wait = pl.scaled(pl.minWait)
	}
}

// Evidence returns the current pause's evidence vector, with
// x[EvSilence] for the silence so far, the silence in samples (from the
// back-dated end of speech to now), and whether a pause is in progress:
// what the adaptive policy weighs, for training its weights ("vera-eval
// eot-train"). The adaptive policy only fills it.
func (d *Detector) Evidence() (x [NumEvidence]float32, silence int64, ok bool) {
	if !d.pol.inPause || d.st != speaking {
		return x, 0, false
	}
	x = d.pol.x
	silence = d.now - d.lastSpeechEnd
	x[EvSilence] = float32(math.Log(float64(max(silence, 1)) / silenceRef))
	return x, silence, true
}

// PauseSilence is the current pause's silence so far in samples, from the
// back-dated end of speech (0 outside a pause).
func (d *Detector) PauseSilence() int64 {
	if !d.pol.inPause || d.st != speaking {
		return 0
	}
	return d.now - d.lastSpeechEnd
}

// PauseWaitMs is the current pause's wait in ms (0 outside a pause).
func (d *Detector) PauseWaitMs() int {
	if !d.pol.inPause || d.st != speaking {
		return 0
	}
	return int(d.pol.wait * 1000 / SampleRate)
}
