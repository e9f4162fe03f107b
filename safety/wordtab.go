package safety

import "sync"

// The word table: one map lookup per squashed token answers what the
// concept tagger, the phrase rules, the lexicon stage, the narration test
// and the language guess used to ask a dozen tables each (concepts.words,
// its prefixes and suffixes, langDrop*, the rules' word index, langCues,
// lexFirstPerson … speakerWords): on a cold cache each of those lookups was
// a miss of its own, and they were most of the tail. It is built on first
// use, after every init (squash.go adds squashed spellings to the sets), from
// those tables themselves, so what they say flows in unchanged; the
// tables stay the reference (TestWordTable checks the two agree).

// wordBits are the word sets of the hot loops, one bit each.
type wordBits uint32

const (
	bLexFirstPerson wordBits = 1 << iota
	bLexSubject
	bLexTime
	bLexStrong // lexStrong or a lexStrongPrefix
	bLexDeath
	bLexDistress
	bLexNotAfter
	bSpeaker      // speakerWords
	bNow          // nowWords
	bThirdParty   // thirdPartyWords
	bObject       // objectWords
	bOtherSelf    // otherSelf
	bPastTell     // pastTellWords
	bRecent       // recentWords
	bLaterTime    // the second word of a recentCue pair: night, morning, matin, soir
	bRecentFirst  // the first word of one: last, this, ce, hier
	bPossessive3P // "his", "their" (narrated)
	bHasRules     // wordInfo.rules is not empty
	bHasPrefixed  // wordInfo.prefixed is not empty
)

// wordInfo is everything the table knows of one token.
//
// The fields every token reads (the bits, the concept entry and affix
// concepts, the signature bit) come first, in the entry's first cache line;
// the rule candidates and phrase words after, read only when the bits say
// the word has them.
type wordInfo struct {
	bits    wordBits
	cue     langCue
	dropped bool       // a key of langDrop, langDropES, langDropFR or langDropEN
	sig     uint8      // sigBit of the word
	concept *wordEntry // concepts.words
	affix   cset       // the concepts of the token alone that tag adds after langDrops (affixConcepts)
	rules   []cand     // the built-in rules' byWord entry (builtinRules); bHasRules
	// prefixed: the built-in rules' byPrefix entries whose prefix the
	// word starts with, in index order (what the rules' loop keeps of
	// byPrefix.candidates); bHasPrefixed
	prefixed []cand
	// before holds, per phrase of concept (in its order), the entries of
	// the phrase's other words: a phrase ends at a token when the tokens
	// before it have those entries (pointer comparisons, no string
	// compares; every phrase word has an entry)
	before [][]*wordInfo
}

// tokInfo is one token's entry (w, nil when the token is in no table) and
// its bits (those of w, or those an unknown word has by a prefix).
type tokInfo struct {
	w    *wordInfo
	bits wordBits
}

var wordTable = sync.OnceValue(buildWordTable)

// wordSetBits: the word sets of the lexicon and the narration test, each
// read as one bit of a word's entry (TestWordTable checks every token's
// bits against the sets).
var wordSetBits = []struct {
	set map[string]bool
	bit wordBits
}{
	{lexFirstPerson, bLexFirstPerson}, {lexSubject, bLexSubject}, {lexTime, bLexTime}, {lexStrong, bLexStrong},
	{lexDeath, bLexDeath}, {lexDistress, bLexDistress}, {lexNotAfter, bLexNotAfter}, {speakerWords, bSpeaker},
	{nowWords, bNow}, {thirdPartyWords, bThirdParty}, {objectWords, bObject}, {otherSelf, bOtherSelf},
	{pastTellWords, bPastTell}, {recentWords, bRecent},
	{map[string]bool{"last": true, "this": true, "ce": true, "hier": true}, bRecentFirst},
	{map[string]bool{"his": true, "their": true}, bPossessive3P},
}

func buildWordTable() map[string]*wordInfo {
	m := map[string]*wordInfo{}
	get := func(w string) *wordInfo {
		e := m[w]
		if e == nil {
			e = &wordInfo{}
			m[w] = e
		}
		return e
	}
	for _, s := range wordSetBits {
		for w, v := range s.set {
			if v {
				get(w).bits |= s.bit
			}
		}
	}
	for w, c := range langCues {
		get(w).cue = c
	}
	for w, e := range concepts.words {
		get(w).concept = e
	}
	for w := range langDrop {
		get(w).dropped = true
	}
	for _, drops := range []map[string]cset{langDropES, langDropFR, langDropEN} {
		for w := range drops {
			get(w).dropped = true
		}
	}
	for w, cs := range builtinRules().byWord {
		get(w).rules = cs
	}
	// Words that are in none of these but common (the vocabularies) get an
	// entry too, so their affix concepts are looked up once, here.
	for w := range anyVocab {
		get(w)
	}
	if mod, err := defaultModel(); err == nil {
		for w := range mod.vocab {
			get(squashWord(w))
		}
	}
	for _, e := range concepts.words {
		for _, ph := range e.phrases {
			for _, w := range ph.before {
				get(w)
			}
		}
	}
	rs := builtinRules()
	for w, e := range m {
		e.affix = affixConcepts(w)
		e.bits |= prefixBits(w)
		e.sig = sigBit(w)
		for _, pc := range rs.byPrefix.candidates(w) {
			if len(w) >= len(pc.prefix) && w[:len(pc.prefix)] == pc.prefix {
				e.prefixed = append(e.prefixed, pc.c)
			}
		}
		if len(e.rules) > 0 {
			e.bits |= bHasRules
		}
		if len(e.prefixed) > 0 {
			e.bits |= bHasPrefixed
		}
		if e.concept != nil && len(e.concept.phrases) > 0 {
			e.before = make([][]*wordInfo, len(e.concept.phrases))
			for k, ph := range e.concept.phrases {
				for _, w := range ph.before {
					e.before[k] = append(e.before[k], m[w])
				}
			}
		}
	}
	return m
}

// endsWithInfos is endsWith(toks[:i], phrase words) for the phrase whose
// words' entries are before: the entries of the tokens before i.
func endsWithInfos(infos []tokInfo, i int, before []*wordInfo) bool {
	if len(before) > i {
		return false
	}
	off := i - len(before)
	for k := len(before) - 1; k >= 0; k-- { // the nearest word first: it differs most often
		if infos[off+k].w != before[k] {
			return false
		}
	}
	return true
}

// prefixBits are the bits a word has by a prefix, whether or not the
// table lists it.
func prefixBits(w string) wordBits {
	if hasAnyPrefix(w, lexStrongPrefix) {
		return bLexStrong
	}
	return 0
}

// lookupWords appends the entry of every token of toks to dst[:0].
func lookupWords(toks []string, dst []tokInfo) []tokInfo {
	tab := wordTable()
	dst = dst[:0]
	for _, t := range toks {
		if w := tab[t]; w != nil {
			dst = append(dst, tokInfo{w, w.bits})
		} else {
			dst = append(dst, tokInfo{nil, prefixBits(t)})
		}
	}
	return dst
}

// affixConcepts is what conceptIndex.tag adds to a token's set after
// langDrops, from the token alone: a number's concepts and those of the
// prefix and suffix entries it has.
func affixConcepts(t string) cset {
	ci := concepts
	var b cset
	if isNumber(t) {
		b.add(ci.numID)
		if len(t) >= 2 {
			b.add(ci.bigID)
		}
		if len(t) == 4 && (t[:2] == "19" || t[:2] == "20") {
			b.add(ci.pastID) // a year
		}
	}
	if len(t) > 3 && ci.stems[t[:3]] {
		for _, l := range ci.affixLen {
			if l > len(t) {
				break
			}
			b.or(ci.prefixes[t[:l]])
		}
	}
	if len(t) > 3 && ci.tails[t[len(t)-3:]] {
		for _, l := range ci.affixLen {
			if l > len(t) {
				break
			}
			b.or(ci.suffixes[t[len(t)-l:]])
		}
	}
	return b
}

// tagWords is conceptIndex.tag (concepts.go) reading the word table: the
// same sets, one lookup per token (TestWordTable compares them on every
// corpus line).
func tagWords(toks []string, infos []tokInfo, sets []cset) {
	german, lang := germanishLangInfos(infos)
	for i, t := range toks {
		var b cset
		w := infos[i].w
		if w != nil && w.concept != nil {
			e := w.concept
			b = e.c
			switch {
			case e.byPrev != nil:
				if i > 0 { // every phrase has a word before its last
					for _, k := range e.byPrev[toks[i-1]] {
						if endsWithInfos(infos, i, w.before[k]) {
							b.or(e.phrases[k].c)
						}
					}
				}
			default:
				for k := range e.phrases {
					if endsWithInfos(infos, i, w.before[k]) {
						b.or(e.phrases[k].c)
					}
				}
			}
		}
		if german && t == "die" || !german && t == "tot" {
			b = cset{} // the German article; French "tôt" (early)
		}
		if !b.empty() && w != nil && w.dropped { // an empty set has nothing to drop; a word with concepts has an entry
			b = langDrops(t, lang, b)
		}
		if w != nil {
			b.or(w.affix)
		} else {
			b.or(affixConcepts(t))
		}
		sets[i] = b
	}
	for i := 0; i+1 < len(toks); i++ {
		switch {
		case len(toks[i]) >= 5 && toks[i][:5] == "comit" && sets[i+1].has(suicideCID):
			// "commit" before a word of suicide is the verb, not version control
			sets[i] = sets[i].without(codeCSet)
		case toks[i] == "kitchen" && kitchenPlaces[toks[i+1]]:
			// "the note is on the kitchen table": a place, not cooking
			sets[i] = sets[i].without(cookCSet)
		}
	}
}

// germanishLangInfos is germanishLang over looked-up tokens.
func germanishLangInfos(infos []tokInfo) (german bool, lang string) {
	var t langTally
	for _, ti := range infos {
		if ti.w != nil {
			t.add(ti.w.cue)
		}
	}
	return t.result()
}
