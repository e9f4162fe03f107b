package safety

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestVerdictDump writes, when SAFETY_VERDICT_DUMP names a file, every
// verdict the detector gives on every line of testdata/safety/*.jsonl:
// Detect and both analyses (with and without the model, every field a
// later turn reads) of the text and of two recogniser-style variants
// (every other space dropped, every word split after its third letter),
// and for lines with a history DetectTurn and the analysis of each earlier
// turn. A performance change must leave the file byte-identical: dump from
// main and from the branch (each side's own test binary) and diff.
func TestVerdictDump(t *testing.T) {
	out := os.Getenv("SAFETY_VERDICT_DUMP")
	if out == "" {
		t.Skip("SAFETY_VERDICT_DUMP not set")
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "safety", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sets: %v", err)
	}
	sort.Strings(files)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	d := NewDetector()
	an := func(a analysis) string {
		return fmt.Sprintf("%v|%s|%s|m%t p%t t%t a%t s%t o%t|%v|%s", a.level, a.reason, a.lang,
			a.means, a.place, a.time, a.act, a.strongMeans, a.ordinary, a.held.level, a.held.reason)
	}
	n := 0
	for _, path := range files {
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		samples, err := ReadSamples(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		for i, s := range samples {
			for vi, text := range []string{s.Text, dropSpaces(s.Text), splitWords(s.Text)} {
				r := d.Detect(text)
				fmt.Fprintf(w, "%s:%d:%d D %v|%s|%s\n", name, i, vi, r.Level, r.Reason, r.Lang)
				fmt.Fprintf(w, "%s:%d:%d A %s\n", name, i, vi, an(d.analyzeTiers(text, true)))
				fmt.Fprintf(w, "%s:%d:%d H %s\n", name, i, vi, an(d.analyzeTiers(text, false)))
				n++
			}
			if len(s.History) > 0 {
				r := d.DetectTurn(s.History, s.Text)
				fmt.Fprintf(w, "%s:%d T %v|%s|%s\n", name, i, r.Level, r.Reason, r.Lang)
				for j, h := range s.History {
					fmt.Fprintf(w, "%s:%d h%d %s\n", name, i, j, an(d.analyzeTiers(h, false)))
				}
				n++
			}
		}
	}
	t.Logf("%d verdicts to %s", n, out)
}

func dropSpaces(s string) string {
	f := strings.Fields(s)
	var b strings.Builder
	for i, w := range f {
		if i > 0 && i%2 == 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

func splitWords(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		if len(w) > 5 && asciiOnly(w[:4]) {
			f[i] = w[:3] + " " + w[3:]
		}
	}
	return strings.Join(f, " ")
}

func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
