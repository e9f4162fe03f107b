package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSafetyWords: ordinary words in the carrier give no card, a danger
// word does, and the counts say so; a dictionary's pronunciations and
// variants ("read(2)") are skipped.
func TestSafetyWords(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "words.dict")
	dict := "table T EY B AH L\nweather W EH DH ER\nsuicide S UW AH S AY D\nread(2) R EH D\nweather W EH DH ER\n"
	if err := os.WriteFile(p, []byte(dict), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := runSafetyWords([]string{"-json", "-carrier", "i keep thinking about X", p}, &out, &errb); err != nil {
		t.Fatalf("safety-words: %v (%s)", err, errb.String())
	}
	var rep wordsReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("json: %v: %s", err, out.String())
	}
	if rep.Words != 3 || rep.Cards != 1 {
		t.Fatalf("words %d cards %d, want 3 and 1 (%s)", rep.Words, rep.Cards, out.String())
	}
	out.Reset()
	if err := runSafetyWords([]string{"-list", "-carrier", "i keep thinking about X", p}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "suicide\t") || strings.Contains(out.String(), "table\t") {
		t.Fatalf("list:\n%s", out.String())
	}
	if err := runSafetyWords([]string{"-carrier", "no placeholder", p}, &out, &errb); err == nil {
		t.Fatal("a carrier without X was accepted")
	}
}

// TestSafetyExplain: one explanation per line, with the verdict.
func TestSafetyExplain(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lines.txt")
	if err := os.WriteFile(p, []byte("i took 40 pills just now\n\nthe weather is nice\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := runSafetyExplain([]string{p}, &out, &errb); err != nil {
		t.Fatalf("safety-explain: %v (%s)", err, errb.String())
	}
	if n := strings.Count(out.String(), "\nverdict: "); n != 2 {
		t.Fatalf("%d verdicts, want 2:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "verdict: crisis") || !strings.Contains(out.String(), "verdict: none") {
		t.Fatalf("verdicts:\n%s", out.String())
	}
}
