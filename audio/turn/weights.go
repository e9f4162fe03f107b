package turn

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
)

// Evidence the adaptive policy weighs, per pause (see EvidenceNames).
const (
	EvPitchFall = iota
	EvPitchMove
	EvPitchEnd
	EvEnergySlope
	EvEnergyEnd
	EvLengthening
	EvRate
	EvPitchSlope
	EvFinalEnergy
	EvSyllableLength
	EvPitchFloor
	EvFinalFlat
	EvTurnLength
	EvWordsHold
	EvWordsEnd
	EvWordsHoldEarly
	EvWordsEndEarly
	EvSilence
	// NumEvidence is the length of an evidence vector.
	NumEvidence
)

// EvidenceNames names the evidence, in order, as the weights file does.
var EvidenceNames = [NumEvidence]string{
	"pitch_fall",       // semitones the final pitch lies below the peak of the last 0.5 s of voiced speech, ÷ 6
	"pitch_move",       // semitones the pitch moved over the last 0.1 s of voicing, ÷ 6 (rising > 0)
	"pitch_end",        // final pitch minus the speaker's mean, semitones ÷ 6
	"energy_slope",     // level over the last 0.3 s of speech, dB/s ÷ 60 (decaying < 0)
	"energy_end",       // final 0.1 s level minus the speaker's mean speech level, dB ÷ 10
	"lengthening",      // log2 of the final voiced run over the speaker's mean run (final lengthening > 0)
	"rate",             // log2 of the speaking rate (voiced-run onsets per second) over 4
	"pitch_slope",      // semitones the pitch moved over the last 0.3 s of voiced speech (least squares, octave errors folded to the speaker's running median), ÷ 6
	"final_energy",     // level of the last voiced segment minus the turn's median speech level, dB ÷ 10
	"syllable_length",  // log2 of the last voiced segment over the speaker's mean syllable period (onset to onset)
	"pitch_floor",      // final pitch above the speaker's pitch floor (about the 9th percentile of their voiced frames), semitones ÷ 6
	"final_flat",       // 0–1: a final voiced segment of at least 120 ms whose pitch stays within 1–2 semitones (a held "um" or drawn-out word)
	"turn_length",      // log2 of the turn's length so far in seconds, in [-3, 2] (a pause a second into a turn is seldom its end)
	"words_hold",       // 1: the transcript, updated after the speech ended, stops mid-thought
	"words_end",        // 1: ... ends with a closing formula or is a question
	"words_hold_early", // 1: the same, from a transcript that arrived before the speech ended
	"words_end_early",  // (the recogniser may not have heard the last word yet)
	"silence",          // ln of the silence so far over 200 ms
}

// Weights combine the evidence: the end-of-turn probability after a
// silence s is σ(Bias + Σ W·x), with x[EvSilence] = ln(s / 200 ms), and the
// turn ends once it reaches Threshold (never before silence_duration_ms,
// always by max_silence_ms). W[EvSilence] must be positive: the longer the
// silence, the likelier the end, so each pause has one wait.
type Weights struct {
	Bias      float32
	W         [NumEvidence]float32
	Threshold float32
	// About records how the weights were made (command, data, split).
	About string
}

// weightsFile is the JSON form: weights by name.
type weightsFile struct {
	About     string             `json:"about"`
	Bias      float32            `json:"bias"`
	Threshold float32            `json:"threshold"`
	Weights   map[string]float32 `json:"weights"`
}

//go:embed weights.json
var defaultWeightsJSON []byte

// DefaultWeights are the committed weights (weights.json, trained by
// "vera-eval eot-train"; see BENCHMARKS.md, "Turn-taking").
func DefaultWeights() Weights {
	w, err := ParseWeights(defaultWeightsJSON)
	if err != nil {
		// The embedded file is checked by TestDefaultWeights; a broken one
		// falls back to silence alone rather than failing every session.
		return Weights{Bias: -2, W: [NumEvidence]float32{EvSilence: 2}, Threshold: 0.5, About: "fallback: " + err.Error()}
	}
	return w
}

// ParseWeights reads a weights file (JSON: about, bias, threshold, and
// weights by evidence name; every name must be present).
func ParseWeights(data []byte) (Weights, error) {
	var f weightsFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Weights{}, fmt.Errorf("weights: %w", err)
	}
	w := Weights{Bias: f.Bias, Threshold: f.Threshold, About: f.About}
	for i, name := range EvidenceNames {
		v, ok := f.Weights[name]
		if !ok {
			return Weights{}, fmt.Errorf("weights: %q missing", name)
		}
		w.W[i] = v
	}
	for name := range f.Weights {
		if indexName(name) < 0 {
			return Weights{}, fmt.Errorf("weights: unknown evidence %q", name)
		}
	}
	return w, w.Validate()
}

// LoadWeights reads a weights file from disk.
func LoadWeights(path string) (Weights, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Weights{}, err
	}
	return ParseWeights(b)
}

// Marshal is the weights file's JSON.
func (w Weights) Marshal() ([]byte, error) {
	f := weightsFile{About: w.About, Bias: w.Bias, Threshold: w.Threshold, Weights: map[string]float32{}}
	for i, name := range EvidenceNames {
		f.Weights[name] = w.W[i]
	}
	b, err := json.MarshalIndent(f, "", "  ")
	return append(b, '\n'), err
}

func indexName(name string) int {
	for i, n := range EvidenceNames {
		if n == name {
			return i
		}
	}
	return -1
}

// Validate checks the weights are usable.
func (w Weights) Validate() error {
	bad := func(x float32) bool { return math.IsNaN(float64(x)) || x > 100 || x < -100 }
	if bad(w.Bias) {
		return fmt.Errorf("weights: bias %v: must be finite in [-100,100]", w.Bias)
	}
	for i, x := range w.W {
		if bad(x) {
			return fmt.Errorf("weights: %s %v: must be finite in [-100,100]", EvidenceNames[i], x)
		}
	}
	if !(w.W[EvSilence] > 0) {
		return fmt.Errorf("weights: silence %v: must be positive (a longer silence makes the end likelier)", w.W[EvSilence])
	}
	if !(w.Threshold > 0 && w.Threshold < 1) {
		return fmt.Errorf("weights: threshold %v: must be in (0,1)", w.Threshold)
	}
	return nil
}
