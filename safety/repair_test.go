package safety

import "testing"

// TestWordFlags: every bit of the flag table says what the word set it
// stands for says, for every word of any of those sets and of the model's
// vocabulary, with and without the model's vocabulary.
func TestWordFlags(t *testing.T) {
	m, err := defaultModel()
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{"": true, "okay": true, "zzqx": true}
	for _, set := range []map[string]bool{anyVocab, repairVocab, joinStarts, squashedVocab, functionWordSet, realWords, fillers, m.lex.starts} {
		for w := range set {
			words[w], words[squashWord(w)] = true, true
		}
	}
	for w := range contractions {
		words[w], words[squashWord(w)] = true, true
	}
	for w := range m.vocab {
		words[w], words[squashWord(w)] = true, true
	}
	joinable := map[string]bool{}
	for _, kv := range []*vocab{nil, m.lex} {
		clear(joinable)
		for w := range repairVocab {
			joinable[squashWord(w)] = true
		}
		for w := range contractions {
			joinable[squashWord(w)] = true
		}
		if kv != nil {
			for w, n := range kv.counts {
				if n > 0 {
					joinable[squashWord(w)] = true
				}
			}
		}
		for w := range words {
			want := map[wordFlag]bool{
				wKnown:       anyVocab[w] || kv.count(w) > 0,
				wRepair:      repairVocab[w] || kv.count(w) > 0,
				wJoinStart:   joinStarts[w],
				wCorpusStart: kv.startsWith(w),
				wSquashed:    squashedVocab[w],
				wFunction:    functionWordSet[w],
				wReal:        realWords[w],
				wJoinable:    joinable[w],
				wPiece:       contractions[w] != nil || fillers[w],
			}
			f := kv.flagsOf(w)
			for bit, ok := range want {
				if (f&bit != 0) != ok {
					t.Errorf("vocab %v: %q flag %b is %v, want %v", kv != nil, w, bit, f&bit != 0, ok)
				}
			}
		}
	}
}
