package safety

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestExplainDebug prints how the detector reads the lines of
// $SAFETY_EXPLAIN (a file, one utterance a line): tokens with their
// concepts, the frames that fired, the context flags and the verdict. A
// development aid; it does nothing without the variable.
func TestExplainDebug(t *testing.T) {
	path := os.Getenv("SAFETY_EXPLAIN")
	if path == "" {
		t.Skip("SAFETY_EXPLAIN not set")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := NewDetector()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		x := &extractor{known: d.model.lex}
		x.run(text, nil, 2, 2, func([]byte) {})
		var b strings.Builder
		for i, tok := range x.cur {
			fmt.Fprintf(&b, "%s", tok)
			var names []string
			x.sets[i].each(func(c int) { names = append(names, conceptTable[c].name) })
			if len(names) > 0 {
				fmt.Fprintf(&b, "[%s]", strings.Join(names, ","))
			}
			b.WriteByte(' ')
		}
		r := d.Detect(text)
		fmt.Printf("== %s\n   %s\n   frames=%v flags=%+v\n   => %s %s\n", text, b.String(), x.fired, x.flags(), r.Level, r.Reason)
	}
}

// TestRepairDebug prints, for every line of $SAFETY_REPAIRS, the words the
// repair step changed (normalised → repaired). A development aid.
func TestRepairDebug(t *testing.T) {
	path := os.Getenv("SAFETY_REPAIRS")
	if path == "" {
		t.Skip("SAFETY_REPAIRS not set")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDetector()
	for _, line := range strings.Split(string(b), "\n") {
		toks := normalize(line, nil)
		for _, tok := range toks {
			fixed := repairTokens([]string{tok}, nil, d.model.lex)
			if len(fixed) != 1 || fixed[0] != tok {
				fmt.Printf("%s -> %s\n", tok, strings.Join(fixed, " "))
			}
		}
	}
}
