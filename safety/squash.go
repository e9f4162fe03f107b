package safety

// The rules, the lexicon stage, the frames and the model read squashed
// tokens (see squash in repair.go). The word tables they consult are
// written in plain spelling; this init adds every table's squashed spelling
// beside the plain one, so "kidding" and "kiding", "hopeless" and "hopeles"
// both hit.
func init() {
	for _, m := range []map[string]bool{
		firstPersonWords, negators, beliefVerbs, pseudoNegation, clauseBoundary, noScope, pastBefore, pastUnits,
		thirdPartyWords, firstPersonSubject, lexFirstPerson, lexSubject, lexStrong, lexDeath, lexIntent, lexTime,
		lexDistress, lexNotAfter, notSpeaker, germanWords, englishWords,
	} {
		addSquashed(m)
	}
	for k, v := range langStop {
		if s := squashWord(k); s != k {
			if _, ok := langStop[s]; !ok {
				langStop[s] = v
			}
		}
	}
}

func addSquashed(m map[string]bool) {
	var add []string
	for k, v := range m {
		if s := squashWord(k); s != k && v {
			add = append(add, s)
		}
	}
	for _, s := range add {
		m[s] = true
	}
}
