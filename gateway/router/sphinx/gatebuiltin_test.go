//go:build !noembedded

package sphinx

import (
	"strings"
	"testing"
)

// With the installed dictionary and the built-in thresholds, no phrase
// agrees with the project's own benign sentences and narration (near
// misses with die, kill, end, pills, jump among them; long paragraphs,
// where a phrase has the most stretches to match), and every crisis
// sentence agrees with the phrase it names.
func TestGateBuiltinThresholds(t *testing.T) {
	g, err := DefaultGate()
	if err != nil {
		t.Skipf("pocketsphinx-en-us dictionary not installed (%v)", err)
	}
	ks := CrisisKeyphrases()
	for _, k := range ks {
		if m := g.MaxDistance(k.Phrase); m <= 0 || m > DefaultMaxDistance {
			t.Errorf("%q: max distance %v outside (0, %v]", k.Phrase, m, DefaultMaxDistance)
		}
	}
	benign := append(append(append([]string{}, benignTrain...), benignHeldOut...), narration...)
	for _, s := range benign {
		for _, k := range ks {
			if g.Agrees(k.Phrase, strings.ToLower(s)) {
				t.Errorf("%q agrees with benign %q (distance %.3f)", k.Phrase, s, g.lex.Distance(k.Phrase, strings.ToLower(s)))
			}
		}
	}
	named := 0
	for _, s := range append(append([]string{}, crisisTrain...), crisisHeldOut...) {
		if p := target(s, ks); p != "" {
			named++
			if !g.Agrees(p, strings.ToLower(s)) {
				t.Errorf("crisis %q does not agree with %q", s, p)
			}
		}
	}
	if named < 20 {
		t.Errorf("only %d crisis sentences name a phrase", named)
	}
}
