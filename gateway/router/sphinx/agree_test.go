package sphinx

import (
	"math"
	"os"
	"strings"
	"testing"
)

const tinyDict = `kill K IH L
kill(2) K IY L
feel F IY L
myself M AY S EH L F
my M AY
sales S EY L Z
the DH AH
weather W EH DH ER
is IH Z
nice N AY S
broken B R OW K AH N
`

func tinyLexicon(t *testing.T) *Lexicon {
	t.Helper()
	l, err := readLexicon(strings.NewReader(tinyDict))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLexiconDistance(t *testing.T) {
	l := tinyLexicon(t)
	near := func(phrase, text string, want float64) {
		t.Helper()
		if got := l.Distance(phrase, text); math.Abs(got-want) > 1e-9 {
			t.Errorf("Distance(%q, %q) = %v, want %v", phrase, text, got, want)
		}
	}
	// The phrase itself, anywhere in the transcript, is at 0.
	near("kill myself", "kill myself", 0)
	near("kill myself", "the weather kill myself is nice", 0)
	// "feel my sales" for "kill myself": K→F (stop→fricative 1), IH→IY
	// (vowel 0.6), EH→EY (0.6), F→Z (fricative 0.6): 2.8 over 9 phones.
	near("kill myself", "feel my sales", 2.8/9)
	// Nothing like it: every phone costs.
	if d := l.Distance("kill myself", "the weather is nice"); d < 0.6 {
		t.Errorf("unrelated transcript at %v", d)
	}
	// An empty transcript is the whole phrase's length away.
	near("kill myself", "", 1)
	// Case, punctuation and unknown words do not matter.
	near("kill myself", "Kill, MYSELF. zzzunknown", 0)
	// A phrase outside the lexicon is never near.
	if d := l.Distance("zzz myself", "myself"); d < 1 {
		t.Errorf("out-of-lexicon phrase at %v", d)
	}
}

func TestReadLexiconRejects(t *testing.T) {
	for _, bad := range []string{"", "word\n", "word XX YY\n", "a(2) AH\n"} {
		if _, err := readLexicon(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// The installed dictionary has every word of the built-in crisis list.
func TestLexiconHasCrisisWords(t *testing.T) {
	cfg := DefaultConfig()
	if _, err := os.Stat(cfg.Dict); err != nil {
		t.Skipf("pocketsphinx-en-us dictionary not installed (%v)", err)
	}
	l, err := LoadLexicon(cfg.Dict)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range CrisisKeyphrases() {
		if d := l.Distance(k.Phrase, "okay "+k.Phrase+" okay"); d != 0 {
			t.Errorf("%q: distance %v to itself", k.Phrase, d)
		}
	}
}

func TestGateAgreement(t *testing.T) {
	l := tinyLexicon(t)
	def := NewGate(l, nil)
	loose := NewGate(l, []Keyphrase{{Phrase: "kill myself", MinScore: -1, MaxDistance: 0.35}})
	for _, tc := range []struct {
		gate       *Gate
		name, text string
		want       bool
	}{
		{def, "said", "the weather kill myself is nice", true},
		// K IH L M AY S EY L Z: EH→EY and F→Z within their classes, 1.2/9.
		{def, "garbled within classes", "kill my sales", true},
		// 2.8/9 ≈ 0.31: past the default, within a phrase's own 0.35.
		{def, "garbled across classes", "feel my sales", false},
		{loose, "garbled, phrase threshold", "feel my sales", true},
		{loose, "unrelated", "the weather is nice", false},
		{def, "no words", "", false},
		{def, "only unknown words", "zzz qqq", false},
	} {
		if got := tc.gate.Agrees("kill myself", tc.text); got != tc.want {
			t.Errorf("%s: Agrees(kill myself, %q) = %v, want %v (distance %.3f, max %.2f)",
				tc.name, tc.text, got, tc.want, l.Distance("kill myself", tc.text), tc.gate.MaxDistance("kill myself"))
		}
	}
	// A phrase the lexicon cannot spell never agrees, even with itself.
	if def.Agrees("zzz myself", "zzz myself") {
		t.Error("out-of-lexicon phrase agreed")
	}
	// Filter keeps the agreeing phrases in order and nothing else.
	got := def.Filter("kill my sales", []string{"broken", "kill myself", "zzz"})
	if len(got) != 1 || got[0] != "kill myself" {
		t.Errorf("Filter = %q", got)
	}
	if got := def.Filter("the weather is nice", []string{"kill myself"}); got != nil {
		t.Errorf("Filter on unrelated text = %q", got)
	}
	if def.MaxDistance("kill myself") != DefaultMaxDistance || loose.MaxDistance("kill myself") != 0.35 || loose.MaxDistance("other") != DefaultMaxDistance {
		t.Error("per-phrase thresholds not applied")
	}
}
