package safety

import "strings"

// Repair of typed and recognised words for the frame and model tiers
// (the phrase rules read the plain normalised tokens). Two steps, on words
// the detector does not know:
//
//   - a long word that is several known words run together is split
//     ("iwanttodie" → "i want to die", "imonthebridge");
//   - a word one letter away from a concept word of five letters or more,
//     with the same first two letters, is read as that word ("brige" →
//     "bridge", "suiside" → "suicide", "pastilas" → "pastillas").
//
// Known words are every word of the concept table plus the commonest
// function words of the four languages (repairVocab), so ordinary words
// are left alone.

// functionWords are common words that are not in the concept table.
const functionWords = `a an the of to in on at for with and or but if so as by from up out it its this that these those
is are was were be been being am do does did have has had will would can could should may might must
what which who whom whose why how when where there here then than too very also only even still yet
not no yes ok okay oh hey hi hello please thanks thank sorry just like really about into over under
again all any some more most much many few other another each both such own same new old good bad
get got go went come came make made know knew see saw say said tell told think thought feel felt
want need try tried keep let put take took give gave find found look looked call called ask asked
work day days night time week year today tomorrow yesterday home house room car school friend
you your yours he she they we us our ours him her his their them my me mine i im
el la los las un una unos unas de del al a en con por para que y o pero si no mi mis tu tus su sus
es son esta estoy estas estan era fue ser estar hay tengo tiene tienen hace muy mas menos ya
lo le les me te se nos yo ella ellos nosotros como cuando donde porque todo nada algo alguien nadie
le la les un une des du de au aux et ou mais si ne pas plus je tu il elle nous vous ils elles
moi toi lui mon ma mes ton ta tes son sa ses est suis es sont ai as avons avez ont fait faire
ce cette ces qui que quoi dans sur sous avec pour par chez tout tous toute toutes rien quelque
der die das den dem des ein eine einen einem einer und oder aber wenn nicht kein keine ich du er
sie es wir ihr mich mir dich dir sich mein meine dein deine sein seine ist bin bist sind war hat
habe hast haben wird werde kann muss soll will zu mit auf in an von bei nach aus fur uber unter
auch noch schon nur sehr so wie was wer wo wann warum dass heute morgen gestern jetzt hier da`

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
	for _, w := range strings.Fields(functionWords) {
		vocab[w] = true
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
func repairTokens(toks, dst []string, known map[string]bool) []string {
	out := dst[:0]
	for i, t := range toks {
		if t == "boy" && i+2 < len(toks) && toks[i+1] == "a" && spanishInfinitive(toks[i+2]) {
			t = "voy" // b for v, as Spanish is often typed: "me boy a matar"
		}
		if repairVocab[t] || known[t] || len(t) < 5 || isNumber(t) {
			out = append(out, t)
			continue
		}
		if len(t) >= 7 {
			if n, ok := segment(t, out); ok {
				out = n
				continue
			}
		}
		if w := fuzzyWord(t); w != "" {
			out = append(out, w)
			continue
		}
		out = append(out, t)
	}
	return out
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

// segment splits t into at most five known words of two letters or more
// ("i" and "a" excepted), preferring the fewest pieces, and appends them.
func segment(t string, out []string) ([]string, bool) {
	const maxPieces = 5
	n := len(t)
	if n > 40 {
		return out, false
	}
	// best[i]: fewest pieces covering t[:i]; from[i]: where the last
	// piece starts.
	var best, from [41]int
	for i := 1; i <= n; i++ {
		best[i] = maxPieces + 1
		for j := max(0, i-14); j < i; j++ {
			if best[j] >= maxPieces || j > 0 && best[j] == 0 {
				continue
			}
			w := t[j:i]
			if (len(w) >= 2 || w == "i" || w == "a") && repairVocab[w] && best[j]+1 < best[i] {
				best[i], from[i] = best[j]+1, j
			}
		}
	}
	if best[n] > maxPieces || best[n] < 2 {
		return out, false
	}
	var cuts [maxPieces + 1]int
	k := 0
	for i := n; i > 0; i = from[i] {
		cuts[k] = i
		k++
	}
	start := 0
	for c := k - 1; c >= 0; c-- {
		out = append(out, t[start:cuts[c]])
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
