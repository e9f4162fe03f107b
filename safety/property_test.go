package safety

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

// variants are the ways the same words reach the detector: typed in another
// case, with or without punctuation, with letters held down, or spaced as a
// recogniser or a phone keyboard spaces them. None may lower the level.
var variants = []struct {
	name string
	f    func(s string, r *rand.Rand) string
}{
	{"upper", func(s string, _ *rand.Rand) string { return strings.ToUpper(s) }},
	{"mixed case", func(s string, r *rand.Rand) string {
		return strings.Map(func(c rune) rune {
			if r.IntN(2) == 0 {
				return unicode.ToUpper(c)
			}
			return c
		}, s)
	}},
	{"no punctuation", func(s string, _ *rand.Rand) string {
		return strings.Map(func(c rune) rune {
			if unicode.IsPunct(c) && c != '\'' {
				return ' '
			}
			return c
		}, s)
	}},
	{"added punctuation", func(s string, r *rand.Rand) string {
		w := strings.Fields(s)
		for i := range w {
			switch r.IntN(6) {
			case 0:
				w[i] += ","
			case 1:
				w[i] += "."
			case 2:
				w[i] += "..."
			}
		}
		return strings.Join(w, " ") + []string{"!!!", "?", ".", " :(", ""}[r.IntN(5)]
	}},
	{"held letters", func(s string, r *rand.Rand) string {
		w := strings.Fields(s)
		if len(w) == 0 {
			return s
		}
		for n := 0; n < 2; n++ {
			i := r.IntN(len(w))
			rs := []rune(w[i])
			k := r.IntN(len(rs))
			if unicode.IsLetter(rs[k]) && realWord(w[i]) {
				w[i] = string(rs[:k]) + strings.Repeat(string(rs[k]), 3+r.IntN(3)) + string(rs[k+1:])
			}
		}
		return strings.Join(w, " ")
	}},
	{"merged words", func(s string, r *rand.Rand) string {
		w := strings.Fields(s)
		if len(w) < 2 {
			return s
		}
		i := r.IntN(len(w) - 1)
		m := w[i] + w[i+1]
		a, b := strings.ToLower(w[i]), strings.ToLower(w[i+1])
		if !realWord(w[i]) || !realWord(w[i+1]) || realWord(m) || hasTriple(m) || a[len(a)-1] == b[0] {
			// "to me at night" → "to meat night" is another sentence;
			// "agressee en" → "agresseeen" and "va a" → "vaa" read as a
			// held or doubled letter, which every tier squashes.
			return s
		}
		return strings.Join(append(append(append([]string{}, w[:i]...), w[i]+w[i+1]), w[i+2:]...), " ")
	}},
	{"split word", func(s string, r *rand.Rand) string {
		w := strings.Fields(s)
		for tries := 0; tries < 4 && len(w) > 0; tries++ {
			i := r.IntN(len(w))
			rs := []rune(w[i])
			if len(rs) >= 6 && isAllLetters(rs) && realWord(w[i]) {
				k := 2 + r.IntN(len(rs)-3)
				if i+1 < len(w) && strings.EqualFold(string(rs[k:]), w[i+1]) {
					break // "person ne ne …": the normaliser drops stutters
				}
				w[i] = string(rs[:k]) + " " + string(rs[k:])
				break
			}
		}
		return strings.Join(w, " ")
	}},
	{"extra spaces", func(s string, _ *rand.Rand) string { return "  " + strings.ReplaceAll(s, " ", "   ") + " " }},
}

// splitVocab: the words the spacing and held-letter variants may touch:
// real words (the detector's vocabulary), letters only, not run-together
// phrases like "iwanttodie" or contractions like "i'd".
var splitVocab map[string]bool

func realWord(w string) bool {
	return splitVocab[strings.ToLower(w)] && isAllLetters([]rune(w))
}

func hasTriple(s string) bool {
	r := []rune(strings.ToLower(s))
	for i := 2; i < len(r); i++ {
		if r[i] == r[i-1] && r[i] == r[i-2] {
			return true
		}
	}
	return false
}

func isAllLetters(rs []rune) bool {
	for _, c := range rs {
		if !unicode.IsLetter(c) {
			return false
		}
	}
	return true
}

// TestVariantsNeverLower: for every utterance of the development corpus and
// every variant (three random draws each, fixed seeds), the level never
// drops. Case, punctuation and held letters cannot change what any tier
// sees (normalize.go, canon.go); spacing is repaired (repair.go) and the
// model's character n-grams ignore it.
func TestVariantsNeverLower(t *testing.T) {
	d := NewDetector()
	splitVocab = map[string]bool{}
	for w := range repairVocab {
		splitVocab[w] = true
	}
	for w := range d.model.vocab {
		splitVocab[w] = true
	}
	var samples []Sample
	for _, f := range []string{"corpus-train.jsonl", "corpus-dev.jsonl"} {
		samples = append(samples, loadSamples(t, f)...)
	}
	if testing.Short() {
		samples = samples[:len(samples)/4]
	}
	fails := map[string]int{}
	for si, s := range samples {
		base := d.Detect(s.Text).Level
		if base == LevelNone {
			continue
		}
		for vi, v := range variants {
			for k := 0; k < 3; k++ {
				r := rand.New(rand.NewPCG(uint64(si), uint64(vi*3+k)))
				text := v.f(s.Text, r)
				if got := d.Detect(text).Level; got < base {
					fails[v.name]++
					if fails[v.name] <= 5 {
						t.Errorf("%s lowered %v to %v: %q → %q", v.name, base, got, s.Text, text)
					}
				}
			}
		}
	}
	for name, n := range fails {
		t.Errorf("%s: %d utterances lowered", name, n)
	}
}

// TestTrailingLaughNeverNone: "… lol" may take a crisis to elevated (a joke
// marker), never to none.
func TestTrailingLaughNeverNone(t *testing.T) {
	d := NewDetector()
	laughs := []string{" lol", " LOL", " lmao", " haha", " jajaja", " mdr", " 😂", " lol lol", "!! lmfao 😂", " xD", " jk"}
	for _, f := range []string{"corpus-dev.jsonl"} {
		for i, s := range loadSamples(t, f) {
			base := d.Detect(s.Text).Level
			laugh := laughs[i%len(laughs)]
			got := d.Detect(s.Text + laugh)
			want := min(base, LevelElevated)
			if got.Level < want {
				t.Errorf("%q + %q: %v → %v (%s)", s.Text, laugh, base, got.Level, got.Reason)
			}
			if base == LevelCrisis && got.Level == LevelCrisis {
				t.Errorf("%q + %q stayed crisis (%s); a trailing laugh caps at elevated", s.Text, laugh, got.Reason)
			}
		}
	}
}
