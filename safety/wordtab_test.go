package safety

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestWordTable: the word table answers as the tables it was built from,
// on every line of every labelled set as the detector reads it (normalised,
// repaired, squashed) and on every window of four tokens of it: the
// concept sets (tagWords against conceptIndex.tag), the rules' candidates,
// the bits of the lexicon's and the narration test's word sets, the
// recent-time test and the language guess. A change to tag or to a word set
// that the table does not follow fails here.
func TestWordTable(t *testing.T) {
	d := NewDetector()
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "safety", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no labelled sets")
	}
	rs := builtinRules()
	check := func(text string, toks []string) {
		t.Helper()
		infos := lookupWords(toks, nil)
		want, got := make([]cset, len(toks)), make([]cset, len(toks))
		concepts.tag(toks, want)
		tagWords(toks, infos, got)
		if !slices.Equal(want, got) {
			t.Fatalf("%q: tagWords differs from conceptIndex.tag on %q", text, toks)
		}
		for i, tok := range toks {
			var cs []cand
			if infos[i].w != nil {
				cs = infos[i].w.rules
			}
			if !slices.Equal(cs, rs.byWord[tok]) {
				t.Fatalf("%q: rule candidates of %q differ", text, tok)
			}
			if w := infos[i].w; w != nil {
				var pre []cand
				for _, pc := range rs.byPrefix.candidates(tok) {
					if len(tok) >= len(pc.prefix) && tok[:len(pc.prefix)] == pc.prefix {
						pre = append(pre, pc.c)
					}
				}
				if !slices.Equal(pre, w.prefixed) || w.sig != sigBit(tok) {
					t.Fatalf("%q: prefix candidates or signature of %q differ", text, tok)
				}
			}
		}
		for i, tok := range toks {
			for _, sb := range wordSetBits {
				in := sb.set[tok] || sb.bit == bLexStrong && hasAnyPrefix(tok, lexStrongPrefix)
				if in != (infos[i].bits&sb.bit != 0) {
					t.Fatalf("%q: bit %b of %q is %v, its word set says %v", text, sb.bit, tok, !in, in)
				}
			}
		}
		if recentCue(toks) != recentCueWith(toks, infos) {
			t.Fatalf("%q: recentCueWith differs", text)
		}
		g1, lang1 := germanishLang(toks)
		g2, lang2 := germanishLangInfos(infos)
		if g1 != g2 || lang1 != lang2 {
			t.Fatalf("%q: germanishLangInfos differs", text)
		}
	}
	n := 0
	for _, f := range files {
		for _, s := range loadSamples(t, filepath.Base(f)) {
			for _, text := range append([]string{s.Text}, s.History...) {
				core, _ := laughTail(text)
				toks := squashAll(repeatCoordinatedVerb(germanOrder(repairTokens(normalize(core, nil), nil, d.model.lex))), nil)
				check(text, toks)
				for i := 0; i+4 <= len(toks); i++ {
					check(text, toks[i:i+4])
				}
				n++
			}
		}
	}
	if n < 5000 {
		t.Fatalf("only %d utterances", n)
	}
}
