package main

import (
	"bytes"
	"encoding/json"
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
