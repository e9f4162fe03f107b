package safety

import (
	"math/bits"
	"slices"
	"strings"
)

// Repair of typed and recognised words, for every tier. Three steps, on
// words the detector does not know:
//
//   - two pieces that make a known word are joined ("sui cide", "over
//     dosed");
//   - a long word that is several known words run together is split
//     ("iwanttodie" → "i want to die", "imonthebridge");
//   - a word one letter away from a concept word of five letters or more,
//     with the same first two letters, is read as that word ("brige" →
//     "bridge", "suiside" → "suicide", "pastilas" → "pastillas").
//
// Known words are every word of the concept table plus the commonest
// function words of the four languages (repairVocab), so ordinary words
// are left alone.

// functionWords are common words that are not in the concept table, by
// language (segment prefers pieces in the utterance's language).
var functionWords = map[string]string{
	"en": `a an the of to in on at for with and or but if so as by from up out it its this that these those
is are was were be been being am do does did have has had will would can could should may might must
what which who whom whose why how when where there here then than too very also only even still yet
not no yes ok okay oh hey hi hello please thanks thank sorry just like really about into over under
again all any some more most much many few other another each both such own same new old good bad
get got go went come came make made know knew see saw say said tell told think thought feel felt
want need try tried keep let put take took give gave find found look looked call called ask asked
work day days night time week year today tomorrow yesterday home house room car school friend
you your yours he she they we us our ours him her his their them my me mine i im`,
	"es": `el la los las un una unos unas de del al a en con por para que y o pero si no mi mis tu tus su sus
todo toda todos todas nada demasiado mucho mucha poco siempre nunca aqui ahora bien mal
es son esta estoy estas estan era fue ser estar hay tengo tiene tienen hace muy mas menos ya
lo le les me te se nos yo ella ellos nosotros he has ha hemos han
voy vas va vamos van al como cuando donde porque todo nada algo alguien nadie`,
	"fr": `le la les un une des du de au aux et ou mais si ne pas plus je tu il elle nous vous ils elles
en y a on ca ici la tout rien trop beaucoup toujours jamais maintenant bien mal
moi toi lui mon ma mes ton ta tes son sa ses est suis es sont ai as avons avez ont fait faire
ce cette ces qui que quoi dans sur sous avec pour par chez tout tous toute toutes rien quelque
me te se va vais vas vont lui leur leurs o`,
	"de": `der die das den dem des ein eine einen einem einer und oder aber wenn nicht kein keine ich du er
alles nichts viel immer nie gut
sie es wir ihr mich mir dich dir sich mein meine dein deine sein seine ist bin bist sind war hat
habe hast haben hatte hatten ware waren wurde wurden konnte konnten mochte wird werde kann muss soll will zu mit auf in an von bei nach aus fur uber unter
auch noch schon nur sehr so wie was wer wo wann warum dass heute morgen gestern jetzt hier da
dich dir uns euch ihn ihm im am um tu tue`,
}

var repairVocab, fuzzyIndex = buildRepairVocab()

// fuzzyConcepts are the concepts a misspelt word may be corrected to: the
// words of danger, never those of context, so a wrong correction can only
// show a card, not hide one.
var fuzzyConcepts = map[string]bool{
	"suicide": true, "selfkill": true, "selfharm": true, "cutword": true, "die": true, "kill": true, "med": true,
	"weapon": true, "rope": true, "noose": true, "poison": true, "fumes": true, "perch": true, "edge": true,
	"rail": true, "blood": true, "overdosed": true, "lethal": true, "life": true,
}

func buildRepairVocab() (map[string]bool, map[string]string) {
	vocab := map[string]bool{}
	for _, ws := range functionWords {
		for _, w := range strings.Fields(ws) {
			vocab[w] = true
		}
	}
	// The phrase rules' words are known too, so the rules, which read the
	// repaired tokens, never see one of their own words "corrected".
	for _, d := range ruleDefs {
		for _, p := range d.pats {
			for _, f := range strings.Fields(p) {
				f = strings.Trim(f, "[]!$~0123456789")
				for _, alt := range expandMacros(f) {
					if alt = strings.TrimSuffix(alt, "*"); validWord(alt) {
						vocab[alt] = true
					}
				}
			}
		}
	}
	targets := map[string]bool{}
	for _, c := range conceptTable {
		for _, e := range strings.Split(c.entries, ",") {
			ws := strings.Fields(e)
			for _, w := range ws {
				w = strings.Trim(w, "*")
				if w != "" {
					vocab[w] = true
				}
			}
			if len(ws) == 1 && !strings.ContainsAny(ws[0], "*") && len(ws[0]) >= 6 && fuzzyConcepts[c.name] {
				targets[ws[0]] = true
			}
		}
	}
	// Deletion neighbourhood: every target with one letter removed (after
	// the first two) maps to the target; a clash maps to "" (ambiguous).
	fuzzy := map[string]string{}
	put := func(k, w string) {
		if old, ok := fuzzy[k]; ok && old != w {
			fuzzy[k] = ""
			return
		}
		fuzzy[k] = w
	}
	for w := range targets {
		put(w, w)
		for i := 2; i < len(w); i++ {
			put(w[:i]+w[i+1:], w)
		}
	}
	return vocab, fuzzy
}

// repairTokens appends the repaired form of toks to dst[:0]. known, when
// not nil, lists more words to leave alone (the training corpus's).
func repairTokens(toks, dst []string, known *vocab) []string {
	var b1, b2 [32]string
	p1, p2 := b1[:0], b2[:0]
	if len(toks) > len(b1) {
		p1, p2 = make([]string, 0, len(toks)+8), make([]string, 0, 2*len(toks)+8)
	}
	// Join split pieces ("sui cide"), then take each word on its own
	// (split run-together words, correct typos), then join again, so a
	// piece a split produced can still join the next word ("agood bye" →
	// "a good bye" → "a goodbye").
	p1 = joinPieces(toks, p1, known)
	var changed bool
	p2, changed = repairWords(p1, p2, known)
	if !changed {
		return append(dst[:0], p1...)
	}
	return rejoinPairs(joinPieces(p2, dst[:0], known))
}

// rejoinPairs merges, in place, the word pairs normalize writes as one
// token ("no one" → "nobody", "any more" → "anymore") and drops the
// fillers normalize drops, so a pair that a split produced ("whereno one"
// → "where no one", "sosorry" → "so sorry") reads as the same words as
// when it was typed apart.
func rejoinPairs(toks []string) []string {
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if i+1 < len(toks) {
			switch next := toks[i+1]; {
			case t == "no" && (next == "one" || next == "body"):
				t = "nobody"
				i++
			case t == "any" && next == "more":
				t = "anymore"
				i++
			case t == "un" && next == "alive":
				t = "unalive"
				i++
			}
		}
		if fillers[t] && t != "um" && t != "er" {
			// a filler a split produced ("sosorry" → "so sorry") is
			// dropped as normalize drops a typed one
			continue
		}
		out = append(out, t)
	}
	return out
}

func isKnownWord(t string, known *vocab) bool { return knownWith(t, known.flagsOf(t), known) }

// knownWith is isKnownWord for a word whose flags f the caller has.
func knownWith(t string, f wordFlag, known *vocab) bool {
	if f&wKnown != 0 {
		return true
	}
	s := squash(t)
	return s != t && known.flagsOf(s)&wSquashed != 0
}

// wordFlag records, for one word, its membership in the word sets the
// repair consults, so the repair looks a word up once instead of once per
// set: it reads every token several times, and on a busy machine those
// lookups, not the logic, are its cost.
type wordFlag uint16

const (
	wKnown       wordFlag = 1 << iota // anyVocab or the corpus (isKnownWord before squashing)
	wRepair                           // repairVocab or the corpus (joined)
	wJoinStart                        // joinStarts
	wCorpusStart                      // vocab.starts
	wSquashed                         // squashedVocab
	wFunction                         // functionWordSet
	wReal                             // realWords
	// wJoinable: the squashed form of a word joinedWith may return (a
	// known word or a contraction), so most pairs are rejected with one
	// lookup instead of three.
	wJoinable
	wPiece // contractions or fillers: with wRepair, what segment may cut out
)

// staticFlags are the flags of the built-in word sets: those of a nil
// vocab, and the base every vocab's flags extend.
var staticFlags = func() map[string]wordFlag {
	m := make(map[string]wordFlag, len(anyVocab))
	for w := range anyVocab {
		m[w] |= wKnown
	}
	for w := range repairVocab {
		m[w] |= wRepair
	}
	for w := range joinStarts {
		m[w] |= wJoinStart
	}
	for w := range squashedVocab {
		m[w] |= wSquashed
	}
	for w := range functionWordSet {
		m[w] |= wFunction
	}
	for w := range realWords {
		m[w] |= wReal
	}
	for w := range repairVocab {
		m[squashWord(w)] |= wJoinable
	}
	for w, exp := range contractions {
		m[squashWord(w)] |= wJoinable
		if exp != nil {
			m[w] |= wPiece
		}
	}
	for w, v := range fillers {
		if v { // "okay" is listed as no filler
			m[w] |= wPiece
		}
	}
	return m
}()

// flagsOf returns w's flags: the built-in sets and, with v, the corpus.
func (v *vocab) flagsOf(w string) wordFlag {
	if v == nil {
		return staticFlags[w]
	}
	return v.flags[w]
}

func (v *vocab) flagsOfBytes(w []byte) wordFlag {
	if v == nil {
		return staticFlags[string(w)]
	}
	return v.flags[string(w)]
}

// joinStarts: the known words (plain or squashed) that begin a longer
// known word ("rat" in "rather", "sobre" in "sobredosis", "thin" in
// "thinking", "god" in squashed "godbye"): only these are tried as the
// first of two known words to join.
var joinStarts = startsOf(func(yield func(string)) {
	for w := range repairVocab {
		yield(w)
	}
})

func startsOf(words func(yield func(string))) map[string]bool {
	m := map[string]bool{}
	words(func(w string) {
		for _, v := range []string{w, squashWord(w)} {
			for k := 2; k < len(v)-1; k++ {
				if anyVocab[v[:k]] {
					m[v[:k]] = true
				}
			}
		}
	})
	return m
}

// vocab is the training corpus's vocabulary, from model.txt: words the
// repair leaves alone, how frequent each is (segment prefers frequent
// pieces) and the words that begin a longer one (joinPieces). A nil vocab
// is an empty one.
type vocab struct {
	counts map[string]int32
	starts map[string]bool
	flags  map[string]wordFlag // staticFlags plus the corpus's words (flagsOf)
}

func newVocab(counts map[string]int32) *vocab {
	v := &vocab{counts: counts}
	v.starts = startsOf(func(yield func(string)) {
		for w := range counts {
			yield(w)
		}
	})
	for w := range counts {
		for k := 2; k < len(w)-1; k++ {
			if counts[w[:k]] > 0 {
				v.starts[w[:k]] = true
			}
		}
	}
	v.flags = make(map[string]wordFlag, len(staticFlags)+len(counts))
	for w, f := range staticFlags {
		v.flags[w] = f
	}
	for w, n := range counts {
		if n > 0 {
			v.flags[w] |= wKnown | wRepair
			v.flags[squashWord(w)] |= wJoinable
		}
	}
	for w := range v.starts {
		v.flags[w] |= wCorpusStart
	}
	return v
}

func (v *vocab) count(w string) int32 {
	if v == nil {
		return 0
	}
	return v.counts[w]
}

func (v *vocab) startsWith(w string) bool { return v != nil && v.starts[w] }

func (v *vocab) countBytes(w []byte) int32 {
	if v == nil {
		return 0
	}
	return v.counts[string(w)]
}

// anyVocab: repairVocab and squashedVocab in one map, one lookup per word.
var anyVocab = func() map[string]bool {
	m := make(map[string]bool, 2*len(repairVocab))
	for w := range repairVocab {
		m[w] = true
	}
	for w := range squashedVocab {
		m[w] = true
	}
	return m
}()

func repairWords(toks, out []string, known *vocab) ([]string, bool) {
	lang, changed := "", false
	for _, t := range toks {
		ft := known.flagsOf(t)
		if ft&wReal != 0 {
			out = append(out, t) // a dictionary word, not a typo (realwords.go)
			continue
		}
		if w, ok := mergedArticle(t, ft, known); ok {
			out, changed = append(out, w, "a"), true
			continue
		}
		if knownWith(t, ft, known) || len(t) < 3 || isNumber(t) {
			out = append(out, t)
			continue
		}
		if lang == "" {
			lang = functionLanguage(toks)
		}
		if n, ok := segment(t, out, known, lang); ok {
			out, changed = n, true
			continue
		}
		if w := fuzzyWord(t); w != "" && len(t) >= 5 && !inflected(t, lang, known) {
			out, changed = append(out, w), true
			continue
		}
		out = append(out, t)
	}
	return out, changed
}

// mergedArticle: t is a known word run into the article "a" and reads as
// another word only with its letters squashed ("seea" is "see a", not a
// held "sea"); w is the word before the article; ft is t's flags.
func mergedArticle(t string, ft wordFlag, known *vocab) (string, bool) {
	if len(t) < 4 || t[len(t)-1] != 'a' || t[len(t)-2] == 'a' || ft&wKnown != 0 {
		return "", false
	}
	w := t[:len(t)-1]
	if known.flagsOf(w)&wKnown == 0 || !knownWith(t, ft, known) {
		return "", false
	}
	return w, true
}

// joinPieces appends toks to out, joining two pieces that make one word
// and reading Spanish "boy a" as "voy a".
func joinPieces(toks, out []string, known *vocab) []string {
	// the flags of toks[nextAt], looked up as the next piece of the word before
	nextAt, nextFlags := -1, wordFlag(0)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t == "boy" && i+2 < len(toks) && toks[i+1] == "a" && spanishInfinitive(toks[i+2]) {
			t = "voy" // b for v, as Spanish is often typed: "me boy a matar"
		}
		// Pieces are joined while they make a word, so a word split in
		// three ("brin gen" after "um") or joined twice ("selb st mord")
		// comes back whole.
		ft := nextFlags
		if nextAt != i || t != toks[i] {
			ft = known.flagsOf(t)
		}
		if w, n := joinExpanded(t, ft, toks[i+1:], known); n > 0 {
			t, i = w, i+n // "unal ive" → "unal i have" → "unalive"
			ft = known.flagsOf(t)
		}
		for i+1 < len(toks) {
			// each word is looked up once here, not once per question
			next := toks[i+1]
			fn := known.flagsOf(next)
			nextAt, nextFlags = i+1, fn
			kt, kn := knownWith(t, ft, known), knownWith(next, fn, known)
			if i+2 < len(toks) && kt && !kn && betterNext(t, next, toks[i+2], known) {
				break // "the re ason": "re" + "ason" is the word, not "the" + "re"
			}
			w := joinNextWith(t, next, ft, fn, known)
			if w == "" && i+2 < len(toks) && (!kt || !kn) {
				// three pieces: "um bri ngen"
				if w3 := joinNext(t, toks[i+1]+toks[i+2], known); w3 != "" {
					w = w3
					i++
				}
			}
			if w == "" {
				break
			}
			t, ft = w, known.flagsOf(w)
			i++
		}
		if t == "dye" && (i+1 == len(toks) || !dyeObjects[toks[i+1]]) {
			t = "die" // as normalize reads it, for a "dye" a split produced
		}
		if t != toks[i] { // a joined word: normalize has not seen it
			if exp, ok := contractions[t]; ok {
				out = append(out, exp...) // "killmy" + "self"
				continue
			}
			if fillers[t] && t != "um" && t != "er" && t != "so" {
				continue // dropped, as normalize drops it: "real ly" → "really" → ""
			}
		}
		out = append(out, t)
	}
	return out
}

// expandedTails are contractions normalize expanded that may be the end of
// a split word: "unal ive" reaches repair as "unal i have", "nee ded" as
// "nee dead".
var expandedTails = []struct {
	exp []string
	raw string
}{{[]string{"i", "have"}, "ive"}, {[]string{"dead"}, "ded"}, {[]string{"i", "am"}, "im"}}

// joinExpanded joins a piece t (flags ft; not a function word) with the raw form of the expansion
// that follows it (rest) when that makes a word; n is the number of
// tokens of rest consumed, 0 when nothing was joined.
func joinExpanded(t string, ft wordFlag, rest []string, known *vocab) (string, int) {
	if ft&wFunction != 0 || isNumber(t) {
		return "", 0
	}
	for _, e := range expandedTails {
		if len(rest) < len(e.exp) || !slices.Equal(rest[:len(e.exp)], e.exp) {
			continue
		}
		if w := joined(t, e.raw, known); w != "" {
			return w, len(e.exp)
		}
	}
	return "", 0
}

// betterNext: for the pieces a b c, joining b and c gives a longer content
// word than joining a and b, and a b c is no word ("the re ason" is "the
// reason", but "um bri ngen" is "umbringen" and "par don de" is "pardon
// de").
func betterNext(a, b, c string, known *vocab) bool {
	w2 := joined(b, c, known)
	if w2 == "" || functionWordSet[w2] || joinNext(a, b+c, known) != "" {
		return false
	}
	w1 := joinNext(a, b, known)
	return w1 == "" || len(w2) > len(w1)
}

// joinNext is joined(a, b) when the pair is worth trying: one of them is
// not a word, or a begins a longer word ("rat her", "to night", "sobre
// dosis"); else "".
func joinNext(a, b string, known *vocab) string {
	return joinNextWith(a, b, known.flagsOf(a), known.flagsOf(b), known)
}

// joinNextWith is joinNext for pieces whose flags fa, fb the caller has.
func joinNextWith(a, b string, fa, fb wordFlag, known *vocab) string {
	if knownWith(a, fa, known) && knownWith(b, fb, known) && fa&(wJoinStart|wCorpusStart) == 0 {
		if sa := squash(a); sa == a || known.flagsOf(sa)&wJoinStart == 0 {
			return ""
		}
	}
	return joinedWith(a, b, fa, fb, known)
}

// fuzzyWord returns the concept word one edit from t, or "".
func fuzzyWord(t string) string {
	if w, ok := fuzzyIndex[t]; ok {
		return w // t is a target, or a target missing a letter
	}
	var buf [48]byte
	if len(t) > len(buf) {
		return ""
	}
	found := ""
	for i := 2; i < len(t); i++ {
		k := append(append(buf[:0], t[:i]...), t[i+1:]...)
		if w, ok := fuzzyIndex[string(k)]; ok && w != "" {
			if found != "" && found != w {
				return "" // ambiguous
			}
			found = w
		}
	}
	return found
}

// segment splits t into at most five known words ("i", "a", "y", "o" the only
// one-letter ones) and appends them. Fewer pieces win, pieces of one or two
// letters count a little more ("her one", not "hero ne"; "the sea", not
// "these a"), function words of
// another language than lang much more ("on the", not "ont he"), and on a
// tie the earlier pieces are the longest ("end it", not "en dit").
func segment(t string, out []string, known *vocab, lang string) ([]string, bool) {
	const maxPieces, maxLen = 5, 40
	n := len(t)
	if n > maxLen {
		return out, false
	}
	const inf = 1 << 30
	var cost, pieces, from [maxLen + 1]int
	for i := 1; i <= n; i++ {
		cost[i] = inf
		for j := i - 1; j >= max(0, i-20); j-- {
			if j > 0 && cost[j] == inf || pieces[j] >= maxPieces {
				continue
			}
			w := t[j:i]
			if !(len(w) >= 2 || w == "i" || w == "a" || w == "y" || w == "o") || known.flagsOf(w)&(wRepair|wPiece) == 0 {
				continue
			}
			c := cost[j] + pieceCost(w, known, lang)
			if j == 0 && w == "i" && lang == "en" {
				c -= 3 // an English merge that starts with the subject: "itold" is "i told", not "it old"
			}
			if c < cost[i] {
				cost[i], pieces[i], from[i] = c, pieces[j]+1, j
			}
		}
	}
	if cost[n] == inf || pieces[n] < 2 {
		return out, false
	}
	var cuts [maxPieces + 1]int
	k := 0
	for i := n; i > 0; i = from[i] {
		cuts[k] = i
		k++
	}
	if n <= 5 && lang != "-" && foreignPiece(t, cuts[:k], lang) {
		// A short word is more likely an unknown word of the utterance's
		// language than pieces from another: Spanish "miro" is not German
		// "mir" + "o", nor "gasto" English "gas" + "to".
		return out, false
	}
	if lang != "-" && plausibleWord(t, cuts[:k], lang) {
		return out, false
	}
	start := 0
	for c := k - 1; c >= 0; c-- {
		w := t[start:cuts[c]]
		switch exp, ok := contractions[w]; {
		case ok && !(w == "im" && lang == "de"): // German "im" is "in dem"
			out = append(out, exp...) // "wanna" → "want to"
		case fillers[w] && w != "um" && w != "er" && w != "so":
			// dropped, as normalize drops it: "justtake" → "take" (not
			// the German words: "michum" → "mich um")
		default:
			out = append(out, w)
		}
		start = cuts[c]
	}
	return out, true
}

func spanishInfinitive(t string) bool {
	for _, suf := range []string{"ar", "er", "ir", "arme", "erme", "irme"} {
		if len(t) > len(suf)+1 && strings.HasSuffix(t, suf) {
			return true
		}
	}
	return false
}

// joined returns the word two pieces make when a recogniser or a keyboard
// split it ("sui cide", "kil ling", "rat her"), or "". Pieces that are both
// words are joined only into a word of six letters or more, and never into
// a contraction normalize expands ("can not").
func joined(a, b string, known *vocab) string {
	if len(a)+len(b) < 5 || len(a)+len(b) > 40 {
		return ""
	}
	return joinedWith(a, b, known.flagsOf(a), known.flagsOf(b), known)
}

// joinedWith is joined for pieces whose flags fa, fb the caller has.
func joinedWith(a, b string, fa, fb wordFlag, known *vocab) string {
	if len(a)+len(b) < 5 || len(a)+len(b) > 40 || isNumber(a) || isNumber(b) {
		return ""
	}
	ka, kb := fa&wRepair != 0, fb&wRepair != 0
	if ka && kb && len(a)+len(b) < 6 {
		return ""
	}
	var buf [40]byte
	w := append(append(buf[:0], a...), b...)
	if isASCII(w) {
		// Every word below squashes as w does (collapseRuns keeps at
		// least one letter of a run, byte for byte in ASCII), so a w whose squashed
		// form no joinable word has makes none.
		var sb [40]byte
		if known.flagsOfBytes(squashBytes(w, sb[:0]))&wJoinable == 0 {
			return ""
		}
	}
	var word string
	switch {
	case known.flagsOfBytes(w)&wRepair != 0: // no allocation for the lookup
		word = string(w)
	case unsquash[squash(string(w))] != "":
		word = unsquash[squash(string(w))] // "god" + "bye" (held letters) → "goodbye"
	default:
		word = collapseRuns(string(w)) // "kill" + "ling"
		if known.flagsOf(word)&wRepair == 0 && contractions[word] == nil {
			return ""
		}
	}
	if ka && kb && (len(word) < 6 || contractions[word] != nil || functionWordSet[word]) {
		return ""
	}
	if ka && kb && min(len(a), len(b)) > 3 && len(word) < 8 {
		return "" // two real words are joined only into a long word
	}
	return word // the caller expands a contraction: "kil" + "ling" → "kiling" → "killing"
}

// functionWordSet: every function word; functionLang: the languages each
// belongs to.
var functionWordSet, functionLang = func() (map[string]bool, map[string]map[string]bool) {
	m, l := map[string]bool{}, map[string]map[string]bool{}
	for lang, ws := range functionWords {
		for _, w := range strings.Fields(ws) {
			m[w] = true
			if l[w] == nil {
				l[w] = map[string]bool{}
			}
			l[w][lang] = true
		}
	}
	return m, l
}()

// squash returns t with every run of a repeated letter reduced to one
// ("allll", "all" and "al" are all "al"; "kill" is "kil"). Every tier
// matches words in this form, so letters held down or doubled by mistake
// cannot change a verdict. Known words come from a table built once; others
// are computed.
func squash(t string) string {
	double := false
	for i := 1; i < len(t); i++ {
		if t[i] == t[i-1] {
			double = true
			break
		}
	}
	if !double {
		return t
	}
	if s, ok := squashed[t]; ok {
		return s
	}
	return squashWord(t)
}

func squashWord(t string) string {
	for i := 1; i < len(t); i++ {
		if t[i] == t[i-1] {
			b := make([]byte, 0, len(t))
			for j := 0; j < len(t); j++ {
				if j == 0 || t[j] != t[j-1] {
					b = append(b, t[j])
				}
			}
			return string(b)
		}
	}
	return t
}

// squashBytes appends squashWord(w) to dst.
func squashBytes(w, dst []byte) []byte {
	for j, c := range w {
		if j == 0 || c != w[j-1] {
			dst = append(dst, c)
		}
	}
	return dst
}

func isASCII(w []byte) bool {
	for _, c := range w {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// squashAll writes squash(t) for every token into dst.
func squashAll(toks, dst []string) []string {
	dst = dst[:0]
	for _, t := range toks {
		dst = append(dst, squash(t))
	}
	return dst
}

var squashed = func() map[string]string {
	m := make(map[string]string, len(repairVocab))
	for w := range repairVocab {
		m[w] = squashWord(w)
	}
	return m
}()

// unsquash maps a squashed spelling back to a known word (the first in
// order when several squash alike).
var unsquash = func() map[string]string {
	m := make(map[string]string, len(squashed))
	for w, s := range squashed {
		if old, ok := m[s]; !ok || w < old {
			m[s] = w
		}
	}
	return m
}()

// squashedVocab: the squashed spelling of every known word, so a word whose
// held letters were collapsed ("pointleeesss" → "pointles") counts as known.
var squashedVocab = func() map[string]bool {
	m := make(map[string]bool, len(squashed))
	for _, s := range squashed {
		m[s] = true
	}
	return m
}()

// pieceCost is the cost of one piece of a split word, in tenths of a
// piece: fewer pieces win; a word frequent in the training corpus costs
// less ("die at", not "di eat"; "me tome", not "meto me"); a piece of one or
// two letters costs a little more ("the sea", not "these a"); a function
// word of another language than the utterance's much more ("on the", not
// "ont he").
// foreignPiece: the cut mixes languages no reader would: a content word
// with function words of another language than lang only ("gasto" is not
// "gas" + English "to"), or function words with no language in common
// ("niece" is not German "nie" + French "ce"; "die" is English as well).
func foreignPiece(t string, cuts []int, lang string) bool {
	start, foreign, content, inLang := 0, false, false, false
	common := uint8(0xf) // en, es, fr, de
	for c := len(cuts) - 1; c >= 0; c-- {
		w := t[start:cuts[c]]
		start = cuts[c]
		ls := functionLang[w]
		if ls == nil {
			content = true
			continue
		}
		var m uint8
		for i, l := range [4]string{"en", "es", "fr", "de"} {
			if ls[l] || w == "die" && l == "en" {
				m |= 1 << i
			}
		}
		common &= m
		if ls[lang] || w == "die" && lang == "en" {
			inLang = true
		} else {
			foreign = true
		}
	}
	return common == 0 || foreign && content && !inLang
}

// plausibleWord: t reads better as one unknown word of the utterance's
// language lang than as the pieces cuts make. Whatever the word: the last
// piece is only an ending of lang ("essayer" is a French verb, not "es
// say" + "er"), or t ends as words of lang do and a piece is a function
// word of other languages only ("handed" is not "han" + "dead" in
// English, "dossier" not "dos si er" in French). Pieces that are function
// words of lang are still cut off ("ichbringmichum"), and so are foreign
// function words in a word that does not end as lang's words do: a merge
// across code-switching ("jeveux", "diepero").
func plausibleWord(t string, cuts []int, lang string) bool {
	langEnding := false
	for e := range endings[lang] {
		if len(t) >= len(e)+3 && strings.HasSuffix(t, e) {
			langEnding = true
		}
	}
	start := 0
	for c := len(cuts) - 1; c >= 0; c-- {
		w := t[start:cuts[c]]
		start = cuts[c]
		if ls := functionLang[w]; langEnding && ls != nil && !ls[lang] && !(w == "die" && lang == "en") && len(w) > 1 && len(w) <= 3 {
			return true
		}
		if c == 0 && endings[lang][w] && !functionLang[w][lang] && len(t) > len(w)+3 {
			return true
		}
	}
	return false
}

// inflected: t is a known word with an ending of lang ("handed" is "hand"
// + "ed"), so a word in its own right, not a misspelt danger word one
// letter away ("hanged"). A danger word missing a letter ("cuting") is
// still corrected: fuzzyWord's direct index.
func inflected(t, lang string, known *vocab) bool {
	if _, direct := fuzzyIndex[t]; direct {
		return false
	}
	for e := range endings[lang] {
		if len(t) >= len(e)+3 && strings.HasSuffix(t, e) && isKnownWord(t[:len(t)-len(e)], known) {
			return true
		}
	}
	return false
}

// endings: inflectional endings of each language that are no word of it.
var endings = map[string]map[string]bool{
	"en": {"ed": true, "ing": true, "ly": true, "er": true, "ers": true, "est": true},
	"es": {"ar": true, "er": true, "os": true, "as": true, "ado": true, "ida": true, "ido": true, "mente": true},
	"fr": {"er": true, "ez": true, "ent": true, "ait": true, "ais": true, "ons": true, "ment": true, "ee": true},
	"de": {"en": true, "ten": true, "ung": true, "keit": true, "heit": true, "lich": true, "isch": true},
}

func pieceCost(w string, known *vocab, lang string) int {
	c := 10 + 9
	switch n := known.count(w); {
	case contractions[w] != nil:
		c -= 9 // "im", "wanna": never in the vocabulary, which is normalised
	case n > 0:
		c -= min(9, bits.Len32(uint32(n))) // log2 of the count, at most 9
	default:
		c += 2 // in the concept table but never seen in training
	}
	if len(w) <= 2 {
		c += 3
	}
	if ls := functionLang[w]; ls != nil && lang != "-" && !ls[lang] && !(w == "die" && lang == "en") {
		c += 10 // ("die" is the German article and the English verb)
	}
	return c
}

// functionLangMask is functionLang as a bit per language (en, es, fr, de
// from bit 0): one small lookup per token for functionLanguage.
var functionLangMask = func() map[string]uint8 {
	m := make(map[string]uint8, len(functionLang))
	for w, ls := range functionLang {
		for i, l := range [4]string{"en", "es", "fr", "de"} {
			if ls[l] {
				m[w] |= 1 << i
			}
		}
	}
	return m
}()

// functionLanguage is the language most of toks' function words belong to,
// or "-" when none does (segment then prefers no language).
func functionLanguage(toks []string) string {
	var n [4]int
	langs := [4]string{"en", "es", "fr", "de"}
	for _, t := range toks {
		m := functionLangMask[t]
		for i := range langs {
			if m&(1<<i) != 0 {
				n[i]++
			}
		}
	}
	best, lang := 0, "-"
	for i, c := range n {
		if c > best {
			best, lang = c, langs[i]
		}
	}
	return lang
}
