package safety

import "strings"

// The lexicon stage is the detector's safety net for wording no phrase rule
// anticipated. Within one clause it looks for the speaker (a first-person
// word), a self-harm term and an intent, desire or near-time word:
//
//   - first person + strong self-harm term ("suicide", "overdose",
//     "matarme", "umbringen" …) + intent or time before it → crisis
//     ("lexicon.intent"); without intent → elevated ("lexicon.mention");
//   - first person + a death word ("die", "dead", "morir", "sterben" …)
//     right after an intent or desire word, not followed by an idiom word
//     ("for", "of", "laughing" …) → crisis;
//   - the subject "i" (je, ich, yo) + a distress word ("hopeless",
//     "worthless", "depressed" …) → elevated ("lexicon.distress").
//
// Negation before the term lowers crisis to elevated, as for the phrase
// rules. The lexicon never lowers what the phrase rules found.

var lexFirstPerson = map[string]bool{
	"i": true, "me": true, "my": true, "myself": true, "mine": true, "yo": true, "mi": true, "je": true, "moi": true,
	"ma": true, "mon": true, "mes": true, "ich": true, "mich": true, "mir": true, "mein": true, "meine": true, "meinem": true,
}

var lexSubject = map[string]bool{"i": true, "yo": true, "je": true, "ich": true}

var lexStrong = map[string]bool{
	"suicide": true, "suicidal": true, "overdose": true, "overdosing": true, "unalive": true, "kms": true, "noose": true,
	"wrists": true, "suicidarme": true, "suicidio": true, "suicida": true, "matarme": true, "quitarme": true,
	"suicider": true, "suicidaire": true, "umbringen": true, "umzubringen": true, "selbstmord": true, "suizid": true,
	"sobredosis": true, "lebensmude": true,
}

// lexStrongPrefix are stems checked with HasPrefix.
var lexStrongPrefix = []string{"suicid", "selbstmord", "suizid"}

var lexDeath = map[string]bool{
	"die": true, "dead": true, "death": true, "morir": true, "morirme": true, "muerto": true, "muerta": true,
	"mourir": true, "mort": true, "morte": true, "crever": true, "sterben": true,
}

var lexIntent = map[string]bool{
	"want": true, "going": true, "plan": true, "planning": true, "planned": true, "decided": true, "ready": true,
	"will": true, "need": true, "wish": true, "hope": true, "rather": true, "should": true, "about": true,
	"trying": true, "try": true, "considering": true, "contemplating": true, "thinking": true, "tempted": true,
	"urge": true, "might": true, "deserve": true, "quiero": true, "voy": true, "pienso": true, "planeando": true,
	"deseo": true, "quisiera": true, "ganas": true, "veux": true, "vais": true, "voudrais": true, "envie": true,
	"pense": true, "decide": true, "mochte": true, "werde": true, "wurde": true, "vor": true, "plane": true,
	"denke": true, "moechte": true, "wollen": true,
}

var lexTime = map[string]bool{
	"tonight": true, "today": true, "now": true, "tomorrow": true, "soon": true, "noche": true, "hoy": true,
	"ahora": true, "manana": true, "soir": true, "nuit": true, "maintenant": true, "demain": true, "heute": true,
	"jetzt": true, "morgen": true, "nacht": true,
}

var lexDistress = map[string]bool{
	"hopeless": true, "hopelessness": true, "worthless": true, "lonely": true, "numb": true, "trapped": true,
	"depressed": true, "depression": true, "despair": true, "miserable": true, "unbearable": true, "agony": true,
	"deprimido": true, "deprimida": true, "desesperado": true, "desesperada": true, "inutil": true,
	"desespere": true, "desesperee": true, "deprime": true, "deprimee": true, "hoffnungslos": true, "einsam": true,
	"wertlos": true, "verzweifelt": true, "deprimiert": true, "depressiv": true, "desperate": true,
}

// lexNotAfter: a term followed by one of these is an idiom or about
// something else ("suicide rate", "desperate for coffee", "die for").
var lexNotAfter = map[string]bool{
	"prevention": true, "awareness": true, "squad": true, "rate": true, "rates": true, "statistics": true,
	"research": true, "month": true, "week": true, "for": true, "of": true, "laughing": true, "tired": true,
	"serious": true, "on": true, "from": true, "down": true, "happy": true, "than": true, "my": true, "her": true,
	"his": true, "the": true, "it": true, "hair": true, "your": true, "their": true, "to": true,
	"de": true, "vor": true, "d": true, "del": true,
}

// German "tot" is left to the phrase rules: folded French "tôt" (early) is
// the same token.

// lexiconWith scores toks clause by clause and returns the level it
// supports and its reason id; infos are the tokens' word-table entries, whose
// bits stand for the lexicon's word sets (wordSetBits).
func lexiconWith(toks []string, infos []tokInfo) (Level, string) {
	best, reason := LevelNone, ""
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && toks[i] != clauseMark {
			continue
		}
		if l, r := lexClauseWith(toks, infos, start, i); l > best {
			best, reason = l, r
		}
		start = i + 1
	}
	return best, reason
}

// lexClauseWith scores one clause, toks[from:to].
func lexClauseWith(toks []string, infos []tokInfo, from, to int) (Level, string) {
	var all wordBits
	for k := from; k < to; k++ {
		all |= infos[k].bits
	}
	if all&bLexFirstPerson == 0 {
		return LevelNone, ""
	}
	subj, timeCue := all&bLexSubject != 0, all&bLexTime != 0
	best, reason := LevelNone, ""
	for k := from; k < to; k++ {
		b := infos[k].bits
		if b&(bLexStrong|bLexDeath|bLexDistress) == 0 {
			continue
		}
		var nb wordBits // the next token's, "" (none) at the clause's end
		next := ""
		if k+1 < to {
			next, nb = toks[k+1], infos[k+1].bits
		}
		switch {
		case b&bLexStrong != 0:
			if nb&bLexNotAfter != 0 && next != "my" && next != "the" && next != "to" {
				continue
			}
			lvl, r := LevelElevated, "lexicon.mention"
			if (intentBefore(toks, from, k, 5) || timeCue) && !negatedBefore(toks, from, k) && !thirdParty(toks, k) && !lexPast(toks, from, k, to) {
				lvl, r = LevelCrisis, "lexicon.intent"
			}
			if lvl > best {
				best, reason = lvl, r
			}
		case b&bLexDeath != 0:
			if nb&bLexNotAfter != 0 {
				continue
			}
			if intentBefore(toks, from, k, 3) && speakerIsSubject(toks, from, k) {
				lvl, r := LevelCrisis, "lexicon.intent"
				switch {
				case negatedBefore(toks, from, k):
					lvl, r = LevelElevated, "lexicon.intent/negated"
				case lexPast(toks, from, k, to):
					lvl, r = LevelElevated, "lexicon.intent/past"
				}
				if lvl > best {
					best, reason = lvl, r
				}
			}
		case b&bLexDistress != 0 && subj:
			if next == "for" || next == "to" {
				continue
			}
			if LevelElevated > best {
				best, reason = LevelElevated, "lexicon.distress"
			}
		}
	}
	return best, reason
}

func hasAnyPrefix(t string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// intentBefore reports an intent or desire word within n tokens before k in
// the clause.
func intentBefore(toks []string, from, k, n int) bool {
	for j := k - 1; j >= from && j >= k-n; j-- {
		if lexIntent[toks[j]] && (toks[j] != "about" || j+1 < len(toks) && toks[j+1] == "to") {
			return true
		}
	}
	return false
}

// notSpeaker are words that, met before the speaker when reading back from
// a death word, make something or someone else its subject ("my phone is
// about to die", "he is going to die").
var notSpeaker = map[string]bool{
	"my": true, "the": true, "it": true, "this": true, "that": true, "its": true, "our": true, "your": true,
	"a": true, "an": true, "mi": true, "el": true, "la": true, "le": true, "mon": true, "ma": true, "der": true,
	"das": true, "mein": true, "meine": true,
}

// speakerIsSubject reads back from k: the speaker ("i", "je", "ich", "yo")
// must come before any other subject or determiner.
func speakerIsSubject(toks []string, from, k int) bool {
	for j := k - 1; j >= from; j-- {
		t := toks[j]
		if lexSubject[t] {
			return true
		}
		if notSpeaker[t] || thirdPartyWords[t] && !spanishHe(toks, j) { // "he decidido morir": Spanish, I have
			return false
		}
	}
	// No explicit subject ("want to die", "quiero morir"): the speaker.
	return true
}

// lexPast reports a past-time marker in the clause around k.
func lexPast(toks []string, from, k, to int) bool {
	for j := k - 1; j >= from && j >= k-5; j-- {
		if pastBefore[toks[j]] {
			return true
		}
	}
	return past(toks[:to], k, k+1, &pattern{words: map[string]bool{}})
}

// negatedBefore reports a negator within four tokens before k in the clause
// that is not a pseudo-negation ("not going to lie").
func negatedBefore(toks []string, from, k int) bool {
	for j := k - 1; j >= from && j >= k-4; j-- {
		if negators[toks[j]] && !isPseudoNeg(toks, j) && negatesHere(toks, j, k) {
			return true
		}
	}
	return false
}
