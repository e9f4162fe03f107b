package main

// End-of-turn decision points from labelled audio. Every silence of at
// least minSilenceMs inside the labelled speech is a decision point, labelled
// end (the speaker's turn ends there) or hold (the same speaker goes on):
//
//   - NAME.eot.json (the project's own clips, see eotLabels): the points
//     themselves, written by "vera-eval eot-make" from how it built the clip;
//   - NAME.words.json (pocketsphinx "w" list or Picovoice "words" list):
//     every pause between words is a hold, the pause after the last word
//     the end;
//   - NAME.rttm (speaker turns): a gap between turns is an end when the
//     next speaker differs, a hold when the same speaker goes on; silences
//     inside one speaker's turn (no other speaker talking), found from the
//     audio's energy, are holds.
//
// The labels define the points only: a policy sees the audio and the
// recogniser's partials, never the reference words or turns.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

const (
	// minSilenceMs: shorter silences are no decision points.
	minSilenceMs = 100
	msSamples    = audio.SampleRate / 1000
)

// eotPoint is one decision point: a silence [S, E) in samples of the
// clip, and whether the turn ends there.
type eotPoint struct {
	S, E int64
	End  bool   // label: end (true) or hold
	Kind string // eot.json's kind, when given
	// Next: for an end, whether speech follows within the clip (another
	// speaker): the silence is then continued with room tone, not with it.
	Next bool
}

// eotClip is one labelled recording.
type eotClip struct {
	name, source, lang string
	pcm                []int16
	points             []eotPoint
	// split is the set the clip belongs to ("train", "test"; empty when
	// the labels do not say).
	split string
}

// eotLabels is the project's label format (NAME.eot.json): the decision
// points of a clip it made, in ms from the start of NAME.16k.wav.
type eotLabels struct {
	Language string `json:"language"`
	// Split says whether the clip trains the weights or tests them.
	Split  string          `json:"split,omitempty"`
	Text   string          `json:"text,omitempty"`
	Voice  string          `json:"voice,omitempty"`
	Points []eotLabelPoint `json:"points"`
}

// eotLabelPoint is one labelled silence.
type eotLabelPoint struct {
	StartMs int64  `json:"start_ms"`
	EndMs   int64  `json:"end_ms"`
	Label   string `json:"label"` // "hold" or "end"
	// After is the word the pause follows and Kind what it is: for a
	// hold "continuation" (inside a sentence), "sentence" (between
	// sentences) or "comma" (a pause espeak-ng made at a comma); for an end
	// "statement", "question", "closing" or "trailing". Both document the
	// clip and break the scores down; no policy sees them.
	After string `json:"after,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// loadEOTDir reads every NAME.16k.wav in dir that has eot.json, words.json
// or rttm labels (in that order of preference); others are skipped and
// named in skipped.
func loadEOTDir(dir string) (clips []eotClip, skipped []string, err error) {
	wavs, err := filepath.Glob(filepath.Join(dir, "*.16k.wav"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(wavs)
	for _, w := range wavs {
		name := strings.TrimSuffix(filepath.Base(w), ".16k.wav")
		base := filepath.Join(dir, name)
		var c eotClip
		var lerr error
		switch {
		case exists(base + ".eot.json"):
			c, lerr = loadEOTLabels(base)
		case exists(base + ".words.json"):
			c, lerr = loadWordsLabels(base)
		case exists(base + ".rttm"):
			c, lerr = loadRTTMLabels(base)
		default:
			skipped = append(skipped, name)
			continue
		}
		if lerr != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, lerr)
		}
		c.name = name
		if c.lang == "" {
			c.lang = langOf(name)
		}
		if len(c.points) == 0 {
			skipped = append(skipped, name+" (no silence ≥ 100 ms)")
			continue
		}
		clips = append(clips, c)
	}
	if len(clips) == 0 {
		return nil, skipped, fmt.Errorf("no labelled clips (NAME.16k.wav with NAME.eot.json, .words.json or .rttm) in %s", dir)
	}
	return clips, skipped, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// langOf takes a clip's language from a "xx_" name prefix, else English.
func langOf(name string) string {
	if len(name) > 3 && name[2] == '_' && name[0] >= 'a' && name[0] <= 'z' && name[1] >= 'a' && name[1] <= 'z' {
		return name[:2]
	}
	return "en"
}

func readPCM(base string) ([]int16, error) {
	return wavio.ReadWAVFile(base+".16k.wav", audio.SampleRate)
}

func loadEOTLabels(base string) (eotClip, error) {
	raw, err := os.ReadFile(base + ".eot.json")
	if err != nil {
		return eotClip{}, err
	}
	var l eotLabels
	if err := json.Unmarshal(raw, &l); err != nil {
		return eotClip{}, fmt.Errorf("eot.json: %w", err)
	}
	pcm, err := readPCM(base)
	if err != nil {
		return eotClip{}, err
	}
	c := eotClip{source: "eot.json", lang: l.Language, pcm: pcm, split: l.Split}
	n := int64(len(pcm))
	for i, p := range l.Points {
		s, e := p.StartMs*msSamples, p.EndMs*msSamples
		if e <= s || s < 0 || s >= n || (p.Label != "hold" && p.Label != "end") {
			return eotClip{}, fmt.Errorf("eot.json: point %d [%d,%d) %q: want start < end inside the clip, label hold or end", i, p.StartMs, p.EndMs, p.Label)
		}
		if e-s < minSilenceMs*msSamples {
			continue
		}
		c.points = append(c.points, eotPoint{S: s, E: min(e, n), End: p.Label == "end", Next: p.Label == "end" && e < n, Kind: p.Kind})
	}
	return c, nil
}

// word is one aligned word, in samples.
type word struct {
	s, e int64
	t    string
}

func loadWordsLabels(base string) (eotClip, error) {
	raw, err := os.ReadFile(base + ".words.json")
	if err != nil {
		return eotClip{}, err
	}
	ws, err := parseWords(raw)
	if err != nil {
		return eotClip{}, err
	}
	pcm, err := readPCM(base)
	if err != nil {
		return eotClip{}, err
	}
	c := eotClip{source: "words.json", pcm: pcm}
	c.points = wordPoints(ws, int64(len(pcm)))
	return c, nil
}

// parseWords reads pocketsphinx ({"w":[{"b","d","t"}]}) or Picovoice
// ({"words":[{"word","start_sec","end_sec"}]}) word timings, dropping
// silence and noise tokens ("<sil>", "<s>", "[NOISE]", "++...++").
func parseWords(raw []byte) ([]word, error) {
	var f struct {
		W []struct {
			B, D float64
			T    string
		} `json:"w"`
		Words []struct {
			Word  string  `json:"word"`
			Start float64 `json:"start_sec"`
			End   float64 `json:"end_sec"`
		} `json:"words"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("words.json: %w", err)
	}
	sec := func(v float64) int64 { return int64(math.Round(v * audio.SampleRate)) }
	var ws []word
	for _, w := range f.W {
		ws = append(ws, word{sec(w.B), sec(w.B + w.D), w.T})
	}
	for _, w := range f.Words {
		ws = append(ws, word{sec(w.Start), sec(w.End), w.Word})
	}
	out := ws[:0]
	for _, w := range ws {
		t := strings.TrimSpace(w.t)
		if t == "" || strings.HasPrefix(t, "<") || strings.HasPrefix(t, "[") || strings.HasPrefix(t, "++") || w.e < w.s {
			continue
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, errors.New("words.json: no words")
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].s < out[j].s })
	return out, nil
}

// wordPoints: pauses between words are holds, the pause after the last
// word is the end (up to the clip's end).
func wordPoints(ws []word, n int64) []eotPoint {
	var pts []eotPoint
	minS := int64(minSilenceMs * msSamples)
	end := ws[0].e
	for i := 1; i < len(ws); i++ {
		if ws[i].s-end >= minS {
			pts = append(pts, eotPoint{S: end, E: ws[i].s})
		}
		end = max(end, ws[i].e)
	}
	if n > end {
		pts = append(pts, eotPoint{S: end, E: n, End: true})
	} else {
		pts = append(pts, eotPoint{S: end, E: end + 1, End: true})
	}
	return pts
}

// rttmTurn is one speaker turn.
type rttmTurn struct {
	s, e int64
	spk  string
}

func parseRTTM(raw []byte) ([]rttmTurn, error) {
	var ts []rttmTurn
	for i, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "SPEAKER" {
			continue
		}
		if len(f) < 8 {
			return nil, fmt.Errorf("rttm line %d: %d fields, want at least 8", i+1, len(f))
		}
		b, err1 := strconv.ParseFloat(f[3], 64)
		d, err2 := strconv.ParseFloat(f[4], 64)
		if err1 != nil || err2 != nil || b < 0 || d <= 0 || math.IsInf(b+d, 0) {
			return nil, fmt.Errorf("rttm line %d: bad onset/duration %q %q", i+1, f[3], f[4])
		}
		ts = append(ts, rttmTurn{int64(b * audio.SampleRate), int64((b + d) * audio.SampleRate), f[7]})
	}
	if len(ts) == 0 {
		return nil, errors.New("rttm: no SPEAKER lines")
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].s < ts[j].s })
	return ts, nil
}

func loadRTTMLabels(base string) (eotClip, error) {
	raw, err := os.ReadFile(base + ".rttm")
	if err != nil {
		return eotClip{}, err
	}
	ts, err := parseRTTM(raw)
	if err != nil {
		return eotClip{}, err
	}
	pcm, err := readPCM(base)
	if err != nil {
		return eotClip{}, err
	}
	c := eotClip{source: "rttm", pcm: pcm}
	c.points = rttmPoints(ts, pcm)
	return c, nil
}

// rttmPoints labels the gaps between turns (end at a change of speaker,
// hold when the same speaker goes on) and the silences inside a turn that
// no other speaker fills (holds).
func rttmPoints(ts []rttmTurn, pcm []int16) []eotPoint {
	n := int64(len(pcm))
	minS := int64(minSilenceMs * msSamples)
	var pts []eotPoint
	// Gaps in the union of turns.
	covered := ts[0].e
	for i := 1; i < len(ts); i++ {
		if ts[i].s-covered >= minS {
			prev := lastEnding(ts[:i], covered)
			next := ts[i].spk
			pts = append(pts, eotPoint{S: covered, E: ts[i].s, End: prev != next, Next: prev != next})
		}
		covered = max(covered, ts[i].e)
	}
	if n-covered >= minS {
		pts = append(pts, eotPoint{S: covered, E: n, End: true})
	}
	// Silences inside one speaker's turn, from the audio.
	quiet := quietRuns(pcm)
	for _, q := range quiet {
		owner := -1
		for i, t := range ts {
			if q.S > t.s && q.E < t.e {
				owner = i
			}
		}
		if owner < 0 {
			continue
		}
		alone := true
		for i, t := range ts {
			if i != owner && t.s < q.E && t.e > q.S {
				alone = false
			}
		}
		if alone && q.E-q.S >= minS {
			pts = append(pts, eotPoint{S: q.S, E: q.E})
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].S < pts[j].S })
	return pts
}

// lastEnding is the speaker whose turn ends last at or before at.
func lastEnding(ts []rttmTurn, at int64) string {
	best, spk := int64(-1), ""
	for _, t := range ts {
		if t.e <= at && t.e > best {
			best, spk = t.e, t.spk
		}
	}
	return spk
}

// quietRuns finds runs of 10 ms frames below an energy threshold set from
// the clip itself (noise floor = 10th percentile of frame dBFS; threshold
// floor + max(9 dB, 0.35 × (97th percentile − floor))), as silences.
func quietRuns(pcm []int16) []eotPoint {
	const f = audio.Frame10
	nf := len(pcm) / f
	if nf < 20 {
		return nil
	}
	db := make([]float64, nf)
	for k := range nf {
		db[k] = float64(audio.PowerDBFS(pcm[k*f : (k+1)*f]))
	}
	s := append([]float64(nil), db...)
	sort.Float64s(s)
	floor, peak := s[nf/10], s[nf*97/100]
	thr := floor + max(9, 0.35*(peak-floor))
	var out []eotPoint
	for k := 0; k < nf; {
		if db[k] >= thr {
			k++
			continue
		}
		j := k
		for j < nf && db[j] < thr {
			j++
		}
		out = append(out, eotPoint{S: int64(k * f), E: int64(j * f)})
		k = j
	}
	return out
}

// roomTone is the clip's quietest 100 ms (by mean power), the background
// a pause is continued with (looped forward and back by appendTone). Short
// enough that a clip with little silence around its speech still has it.
func roomTone(pcm []int16) []int16 {
	const w = 100 * msSamples
	if len(pcm) <= w {
		return make([]int16, w)
	}
	var sum, best float64
	bestAt := 0
	for i := range w {
		sum += float64(pcm[i]) * float64(pcm[i])
	}
	best = sum
	for i := w; i < len(pcm); i += 1 {
		sum += float64(pcm[i])*float64(pcm[i]) - float64(pcm[i-w])*float64(pcm[i-w])
		if sum < best {
			best, bestAt = sum, i-w+1
		}
	}
	return pcm[bestAt : bestAt+w]
}

// appendTone appends n samples of tone, played forward then backward in
// turn so the loop has no discontinuity.
func appendTone(dst, tone []int16, n int) []int16 {
	for k := 0; n > 0; k++ {
		m := min(n, len(tone))
		if k%2 == 0 {
			dst = append(dst, tone[:m]...)
		} else {
			for i := range m {
				dst = append(dst, tone[len(tone)-1-i])
			}
		}
		n -= m
	}
	return dst
}
