package safety

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Sample is one labelled utterance: a line {"text","level"} of a JSONL file;
// other fields (e.g. "lang") are kept when known and otherwise ignored.
type Sample struct {
	Text  string `json:"text"`
	Level Level  `json:"level"`
	Lang  string `json:"lang,omitempty"`
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
			Text  *string         `json:"text"`
			Level json.RawMessage `json:"level"`
			Lang  string          `json:"lang"`
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
		out = append(out, Sample{Text: *raw.Text, Level: lvl, Lang: raw.Lang})
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

// Miss is one disagreement, for reports; it carries the sample's text, so
// it is for offline evaluation only, never for production logs.
type Miss struct {
	Text   string `json:"text"`
	Gold   Level  `json:"gold"`
	Got    Level  `json:"got"`
	Reason string `json:"reason,omitempty"`
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
	Misses    []Miss    `json:"-"`
}

// Evaluate runs Detect over every sample and scores it.
func Evaluate(d *Detector, samples []Sample) EvalReport {
	rep := EvalReport{N: len(samples), Levels: map[string]LevelScore{}}
	for _, s := range samples {
		r := d.Detect(s.Text)
		if s.Level.Valid() && r.Level.Valid() {
			rep.Confusion[s.Level][r.Level]++
		}
		if r.Level != s.Level {
			rep.Misses = append(rep.Misses, Miss{Text: s.Text, Gold: s.Level, Got: r.Level, Reason: r.Reason})
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
	if n := rep.Levels["none"].Support; n > 0 {
		rep.FalseAlarmRate = float64(n-rep.Confusion[LevelNone][LevelNone]) / float64(n)
	}
	if n := rep.Levels["crisis"].Support; n > 0 {
		rep.CrisisAlertRecall = float64(n-rep.Confusion[LevelCrisis][LevelNone]) / float64(n)
	}
	return rep
}
