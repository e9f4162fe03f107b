package safety

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Sample is one labelled utterance: a line {"text","level"} of a JSONL file.
// Lang, Category, Split and History are optional; other fields are ignored.
// With History (earlier user turns, oldest first) the sample is scored with
// DetectTurn, otherwise with Detect.
type Sample struct {
	Text     string   `json:"text"`
	Level    Level    `json:"level"`
	Lang     string   `json:"lang,omitempty"`
	Category string   `json:"category,omitempty"`
	Split    string   `json:"split,omitempty"`
	History  []string `json:"history,omitempty"`
}

// ErrSamples: a labelled file that cannot be read (bad JSON, missing level).
var ErrSamples = errors.New("invalid labelled samples")

// maxSampleLine bounds one JSONL line; longer lines are an error, not a hang.
const maxSampleLine = 1 << 20

// ReadSamples reads JSONL samples. Blank lines are skipped; every other line
// must be a JSON object with a string "text" and a valid "level". Errors
// name the line.
func ReadSamples(r io.Reader) ([]Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxSampleLine)
	var out []Sample
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var raw struct {
			Text     *string         `json:"text"`
			Level    json.RawMessage `json:"level"`
			Lang     string          `json:"lang"`
			Category string          `json:"category"`
			Split    string          `json:"split"`
			History  []string        `json:"history"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, fmt.Errorf("safety: samples line %d: %w: %w", line, err, ErrSamples)
		}
		if raw.Text == nil {
			return nil, fmt.Errorf("safety: samples line %d: missing \"text\": %w", line, ErrSamples)
		}
		if len(raw.Level) == 0 || string(raw.Level) == "null" {
			return nil, fmt.Errorf("safety: samples line %d: missing \"level\": %w", line, ErrSamples)
		}
		var lvl Level
		if err := json.Unmarshal(raw.Level, &lvl); err != nil {
			return nil, fmt.Errorf("safety: samples line %d: %w: %w", line, err, ErrSamples)
		}
		out = append(out, Sample{Text: *raw.Text, Level: lvl, Lang: raw.Lang, Category: raw.Category,
			Split: raw.Split, History: raw.History})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("safety: samples: %w: %w", err, ErrSamples)
	}
	return out, nil
}

// LevelScore is recall and precision for one gold level. With no gold
// samples of the level, recall is 0; with no predictions, precision is 0;
// Support and Predicted say which case applies.
type LevelScore struct {
	Recall    float64 `json:"recall"`
	Precision float64 `json:"precision"`
	Support   int     `json:"support"`
	Predicted int     `json:"predicted"`
	Correct   int     `json:"correct"`
}

// GroupScore is the score on one slice of a labelled set (a language or a
// category). Rates over an empty gold level are 0; the *_support fields say
// which case applies.
type GroupScore struct {
	N int `json:"n"`
	// Accuracy: share of samples given exactly their gold level.
	Accuracy        float64   `json:"accuracy"`
	CrisisSupport   int       `json:"crisis_support"`
	CrisisRecall    float64   `json:"crisis_recall"`       // gold crisis labelled crisis
	CrisisShown     float64   `json:"crisis_alert_recall"` // gold crisis flagged at least elevated
	ElevatedSupport int       `json:"elevated_support"`
	ElevatedShown   float64   `json:"elevated_shown"` // gold elevated flagged at least elevated
	NoneSupport     int       `json:"none_support"`
	FalseAlarmRate  float64   `json:"false_alarm_rate"` // gold none flagged at least elevated
	Confusion       [3][3]int `json:"confusion"`
}

// Miss is one disagreement, for reports; it carries the sample's text, so
// it is for offline evaluation only, never for production logs.
type Miss struct {
	Text     string `json:"text"`
	Gold     Level  `json:"gold"`
	Got      Level  `json:"got"`
	Reason   string `json:"reason,omitempty"`
	Lang     string `json:"lang,omitempty"`
	Category string `json:"category,omitempty"`
}

// EvalReport is the detector's score on a labelled set.
type EvalReport struct {
	N      int                   `json:"n"`
	Levels map[string]LevelScore `json:"levels"`
	// FalseAlarmRate: share of gold-none samples flagged elevated or crisis.
	FalseAlarmRate float64 `json:"false_alarm_rate"`
	// CrisisAlertRecall: share of gold-crisis samples flagged at least
	// elevated, i.e. shown resources at all.
	CrisisAlertRecall float64 `json:"crisis_alert_recall"`
	// Confusion[gold][got], indexed by Level.
	Confusion [3][3]int `json:"confusion"`
	// ByLang and ByCategory slice the same numbers by the samples' "lang"
	// and "category" fields ("" when a sample has none).
	ByLang     map[string]GroupScore `json:"by_lang"`
	ByCategory map[string]GroupScore `json:"by_category"`
	Misses     []Miss                `json:"-"`
}

// Evaluate runs the detector over every sample (DetectTurn when the sample
// has a history) and scores it.
func Evaluate(d *Detector, samples []Sample) EvalReport {
	rep := EvalReport{N: len(samples), Levels: map[string]LevelScore{}}
	byLang, byCat := map[string]*[3][3]int{}, map[string]*[3][3]int{}
	add := func(m map[string]*[3][3]int, k string, g, l Level) {
		c := m[k]
		if c == nil {
			c = new([3][3]int)
			m[k] = c
		}
		c[g][l]++
	}
	for _, s := range samples {
		var r Result
		if len(s.History) > 0 {
			r = d.DetectTurn(s.History, s.Text)
		} else {
			r = d.Detect(s.Text)
		}
		if s.Level.Valid() && r.Level.Valid() {
			rep.Confusion[s.Level][r.Level]++
			add(byLang, s.Lang, s.Level, r.Level)
			add(byCat, s.Category, s.Level, r.Level)
		}
		if r.Level != s.Level {
			rep.Misses = append(rep.Misses, Miss{Text: s.Text, Gold: s.Level, Got: r.Level, Reason: r.Reason,
				Lang: s.Lang, Category: s.Category})
		}
	}
	for _, l := range []Level{LevelNone, LevelElevated, LevelCrisis} {
		var sc LevelScore
		for g := range 3 {
			sc.Predicted += rep.Confusion[g][l]
			sc.Support += rep.Confusion[l][g]
		}
		sc.Correct = rep.Confusion[l][l]
		if sc.Support > 0 {
			sc.Recall = float64(sc.Correct) / float64(sc.Support)
		}
		if sc.Predicted > 0 {
			sc.Precision = float64(sc.Correct) / float64(sc.Predicted)
		}
		rep.Levels[l.String()] = sc
	}
	g := groupScore(&rep.Confusion)
	rep.FalseAlarmRate, rep.CrisisAlertRecall = g.FalseAlarmRate, g.CrisisShown
	rep.ByLang, rep.ByCategory = groups(byLang), groups(byCat)
	return rep
}

func groups(m map[string]*[3][3]int) map[string]GroupScore {
	out := make(map[string]GroupScore, len(m))
	for k, c := range m {
		out[k] = groupScore(c)
	}
	return out
}

func groupScore(c *[3][3]int) GroupScore {
	g := GroupScore{Confusion: *c}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	correct := 0
	for l := range 3 {
		correct += c[l][l]
		g.N += c[l][0] + c[l][1] + c[l][2]
	}
	g.Accuracy = ratio(correct, g.N)
	row := func(l Level) int { return c[l][0] + c[l][1] + c[l][2] }
	g.CrisisSupport, g.ElevatedSupport, g.NoneSupport = row(LevelCrisis), row(LevelElevated), row(LevelNone)
	g.CrisisRecall = ratio(c[LevelCrisis][LevelCrisis], g.CrisisSupport)
	g.CrisisShown = ratio(g.CrisisSupport-c[LevelCrisis][LevelNone], g.CrisisSupport)
	g.ElevatedShown = ratio(g.ElevatedSupport-c[LevelElevated][LevelNone], g.ElevatedSupport)
	g.FalseAlarmRate = ratio(g.NoneSupport-c[LevelNone][LevelNone], g.NoneSupport)
	return g
}

// SortedKeys returns m's keys in order, for stable reports.
func SortedKeys(m map[string]GroupScore) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
