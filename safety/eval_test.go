package safety

import (
	"errors"
	"strings"
	"testing"
)

func TestReadSamples(t *testing.T) {
	in := `{"text":"i want to die","level":"crisis","lang":"en","extra":1}

{"text":"kill the process","level":"none"}
{"text":"i feel hopeless","level":1}
`
	s, err := ReadSamples(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 3 || s[0].Level != LevelCrisis || s[0].Lang != "en" || s[2].Level != LevelElevated {
		t.Fatalf("samples = %+v", s)
	}
	for _, bad := range []string{
		`{"text":"x","level":"severe"}`, `{"text":"x"}`, `{"level":"none"}`, `not json`, `{"text":"x","level":null}`,
		`["x","none"]`,
	} {
		_, err := ReadSamples(strings.NewReader("{\"text\":\"ok\",\"level\":\"none\"}\n" + bad))
		if !errors.Is(err, ErrSamples) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: err = %v, want ErrSamples on line 2", bad, err)
		}
	}
}

func TestEvaluate(t *testing.T) {
	d := NewDetector()
	s := []Sample{
		{Text: "i want to kill myself", Level: LevelCrisis},
		{Text: "kill the process", Level: LevelCrisis}, // a deliberate miss
		{Text: "i feel hopeless", Level: LevelElevated},
		{Text: "kill the process", Level: LevelNone},
		{Text: "i feel hopeless", Level: LevelNone}, // a false alarm
	}
	r := Evaluate(d, s)
	c := r.Levels["crisis"]
	if c.Recall != 0.5 || c.Precision != 1 || c.Support != 2 || c.Predicted != 1 {
		t.Errorf("crisis = %+v", c)
	}
	if e := r.Levels["elevated"]; e.Recall != 1 || e.Precision != 0.5 {
		t.Errorf("elevated = %+v", e)
	}
	if r.FalseAlarmRate != 0.5 || r.CrisisAlertRecall != 0.5 || len(r.Misses) != 2 {
		t.Errorf("report = %+v", r)
	}
	if r.Confusion[LevelCrisis][LevelNone] != 1 || r.Confusion[LevelNone][LevelElevated] != 1 {
		t.Errorf("confusion = %v", r.Confusion)
	}
}

func FuzzReadSamples(f *testing.F) {
	f.Add(`{"text":"i want to die","level":"crisis"}`)
	f.Add("{\"text\":\"\",\"level\":0}\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ReadSamples(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrSamples) {
				t.Fatalf("error not ErrSamples: %v", err)
			}
			return
		}
		for _, x := range s {
			if !x.Level.Valid() {
				t.Fatalf("invalid level %d accepted", x.Level)
			}
		}
	})
}
