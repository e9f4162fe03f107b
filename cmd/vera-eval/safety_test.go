package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTemp(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "set.jsonl")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const smallSet = `{"text":"i want to kill myself","level":"crisis","lang":"en"}
{"text":"kill the process","level":"crisis"}
{"text":"i feel hopeless","level":"elevated"}
{"text":"kill the process","level":"none","note":"ignored"}
`

func TestSafetyJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"safety", "-json", writeTemp(t, smallSet)}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		Levels map[string]struct {
			Recall    *float64 `json:"recall"`
			Precision *float64 `json:"precision"`
		} `json:"levels"`
		FalseAlarmRate *float64 `json:"false_alarm_rate"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	for _, l := range []string{"crisis", "elevated", "none"} {
		s, ok := got.Levels[l]
		if !ok || s.Recall == nil || s.Precision == nil {
			t.Fatalf("levels.%s missing recall/precision: %s", l, out.String())
		}
	}
	if *got.Levels["crisis"].Recall != 0.5 || *got.Levels["crisis"].Precision != 1 || got.FalseAlarmRate == nil || *got.FalseAlarmRate != 0 {
		t.Errorf("unexpected numbers: %s", out.String())
	}
}

func TestSafetyText(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"safety", "-misses", writeTemp(t, smallSet)}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"crisis", "0.500", "false_alarm_rate", "miss gold=crisis got=none"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSafetyRepoSet(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"safety", "-json", filepath.Join("..", "..", "testdata", "safety", "utterances.jsonl")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"false_alarm_rate"`) {
		t.Fatal(out.String())
	}
}

func TestSafetyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"safety"}, "exactly one"},
		{"two files", []string{"safety", "a", "b"}, "exactly one"},
		{"missing file", []string{"safety", filepath.Join(t.TempDir(), "nope.jsonl")}, "no such file"},
		{"bad level", []string{"safety", writeTemp(t, `{"text":"x","level":"high"}`)}, "line 1"},
		{"empty", []string{"safety", writeTemp(t, "\n\n")}, "no samples"},
		{"bad flag", []string{"safety", "-nope", "x"}, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code == 0 {
				t.Fatalf("exit 0, want failure")
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr lacks %q: %s", tc.want, errb.String())
			}
		})
	}
}

// TestSafetyJSONBreakdowns: the additive by_lang and by_category fields,
// and a sample with history scored through DetectTurn.
func TestSafetyJSONBreakdowns(t *testing.T) {
	set := `{"text":"i want to kill myself","level":"crisis","lang":"en","category":"ideation_active"}
{"text":"quiero morir","level":"crisis","lang":"es","category":"ideation_active"}
{"text":"kill the process","level":"none","lang":"en","category":"neg_coding"}
{"history":["i've been saving up my pills"],"text":"tonight's the night","level":"crisis","lang":"en","category":"ctx"}
`
	var out, errb bytes.Buffer
	if code := run([]string{"safety", "-json", writeTemp(t, set)}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		ByLang map[string]struct {
			N           int     `json:"n"`
			CrisisShown float64 `json:"crisis_alert_recall"`
		} `json:"by_lang"`
		ByCategory map[string]struct {
			N              int     `json:"n"`
			FalseAlarmRate float64 `json:"false_alarm_rate"`
			CrisisRecall   float64 `json:"crisis_recall"`
		} `json:"by_category"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.ByLang["en"].N != 3 || got.ByLang["es"].N != 1 || got.ByLang["es"].CrisisShown != 1 {
		t.Errorf("by_lang = %+v", got.ByLang)
	}
	if c := got.ByCategory["ctx"]; c.N != 1 || c.CrisisRecall != 1 {
		t.Errorf("history sample not scored in context: %+v", c)
	}
	if c := got.ByCategory["neg_coding"]; c.N != 1 || c.FalseAlarmRate != 0 {
		t.Errorf("neg_coding = %+v", c)
	}
	var txt bytes.Buffer
	if code := run([]string{"safety", writeTemp(t, set)}, &txt, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	for _, want := range []string{"by lang", "by category", "ideation_active", "neg_coding"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, txt.String())
		}
	}
}

// TestSafetyTrain: safety-train writes a model file that safety -model
// reads, and the same input gives the same file.
func TestSafetyTrain(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join("..", "..", "testdata", "safety", "corpus-dev.jsonl")
	var paths []string
	for i := 0; i < 2; i++ {
		p := filepath.Join(dir, fmt.Sprintf("m%d.txt", i))
		var out, errb bytes.Buffer
		if code := run([]string{"safety-train", "-epochs", "2", "-o", p, corpus}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if !strings.Contains(out.String(), "out-of-fold") {
			t.Errorf("no summary: %s", out.String())
		}
		paths = append(paths, p)
	}
	a, _ := os.ReadFile(paths[0])
	b, _ := os.ReadFile(paths[1])
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("two trainings differ or are empty")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"safety", "-model", paths[0], "-json", corpus}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, args := range [][]string{
		{"safety-train"},
		{"safety-train", "-o", filepath.Join(dir, "x.txt"), filepath.Join(dir, "missing.jsonl")},
		{"safety", "-model", filepath.Join(dir, "missing.txt"), corpus},
		{"safety", "-model", writeTemp(t, "not a model"), corpus},
	} {
		if code := run(args, &out, &errb); code == 0 {
			t.Errorf("%v: exit 0, want failure", args)
		}
	}
}
