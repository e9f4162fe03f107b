package safety

import (
	"strings"
	"unicode"
)

// Normalisation turns typed or speech-recognised text into the token form
// the detector's phrase rules are written in. The same steps, in order:
//
//  1. lower case; Latin accents folded (é→e, ü→u, ß→ss, ñ→n), so ASR output
//     with or without diacritics matches; every character that is not a
//     letter, digit or apostrophe becomes a space;
//  2. leetspeak inside words undone ("k1ll" → "kill", "su1c1de" → "suicide");
//     letters repeated three or more times collapsed ("diiie" → "die");
//  3. contractions expanded, with and without the apostrophe ASR drops:
//     "i'm"/"im" → "i am", "don't"/"dont" → "do not", "can't"/"cannot" →
//     "can not", "won't" → "will not", "wanna" → "want to", "gonna" →
//     "going to", any "n't" → " not"; French elisions split ("j'ai" →
//     "je ai", "n'en" → "ne en");
//  4. split or run-together words joined the same way ("my self" → "myself",
//     "killmyself" → "kill myself", "self-harm" → "self harm"); the
//     homophones "too"→"to" and "dye"→"die" (unless an object follows:
//     "dye my hair");
//  5. fillers and intensifiers removed ("um", "uh", "like", "you know",
//     "i mean", "just", "really", "so", "very", …), then immediate word
//     repeats collapsed ("i i want to kill kill myself");
//  6. punctuation is dropped like any other symbol: it must never change a
//     verdict ("i want to die." and "i want to die" are the same), and
//     recognisers often add none. (The clause mark "." of earlier versions
//     is no longer produced; the scopes that stop at it stop at boundary
//     words such as "but", "and", "i" instead.)
//
// Rules are written in the normalised form; a test checks every rule word is
// a fixed point of this function.

var foldMap = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'æ': "ae",
	'ç': "c", 'è': "e", 'é': "e", 'ê': "e", 'ë': "e",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ñ': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'œ': "oe",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'ÿ': "y", 'ß': "ss",
}

var contractions = map[string][]string{
	"i'm": {"i", "am"}, "im": {"i", "am"}, "i'd": {"i", "would"}, "i've": {"i", "have"}, "ive": {"i", "have"},
	"i'll": {"i", "will"}, "can't": {"can", "not"}, "cant": {"can", "not"}, "cannot": {"can", "not"},
	"won't": {"will", "not"}, "wont": {"will", "not"}, "dont": {"do", "not"}, "doesnt": {"does", "not"},
	"didnt": {"did", "not"}, "isnt": {"is", "not"}, "wasnt": {"was", "not"}, "werent": {"were", "not"},
	"arent": {"are", "not"}, "wouldnt": {"would", "not"}, "couldnt": {"could", "not"}, "shouldnt": {"should", "not"},
	"havent": {"have", "not"}, "hasnt": {"has", "not"}, "hadnt": {"had", "not"}, "ain't": {"am", "not"}, "aint": {"am", "not"},
	"gonna": {"going", "to"}, "wanna": {"want", "to"}, "gotta": {"got", "to"}, "hafta": {"have", "to"},
	"tryna": {"trying", "to"}, "kinda": {"somewhat"}, "sorta": {"somewhat"}, "let's": {"let", "us"}, "lets": {"let", "us"},
	"thats": {"that", "is"}, "whats": {"what", "is"}, "theres": {"there", "is"}, "its": {"it", "is"},
	"killmyself": {"kill", "myself"}, "kilmyself": {"kill", "myself"}, "myselves": {"myself"}, "myslef": {"myself"},
	"selfharm": {"self", "harm"}, "selfharming": {"self", "harming"}, "too": {"to"}, "unalived": {"unalive"},
	"nich": {"nicht"}, "noone": {"nobody"}, "wana": {"want", "to"}, "kil": {"kill"}, "kll": {"kill"}, "kiil": {"kill"}, "klil": {"kill"},
	"kiling": {"killing"}, "kilin": {"killing"}, "killin": {"killing"}, "suicdal": {"suicidal"}, "sucidal": {"suicidal"},
	"suicidial": {"suicidal"}, "suicde": {"suicide"}, "suicie": {"suicide"}, "sucicide": {"suicide"}, "overdoes": {"overdose"},
	"imma": {"i", "am", "going", "to"}, "ima": {"i", "am", "a"},
	// French as texted: "jveux", "jsuis", "chui" …
	"jveux": {"je", "veux"}, "jvais": {"je", "vais"}, "jpeux": {"je", "peux"}, "jsuis": {"je", "suis"},
	"chui": {"je", "suis"}, "chuis": {"je", "suis"}, "jai": {"je", "ai"}, "jen": {"je", "en"}, "jme": {"je", "me"},
	"jsais": {"je", "sais"}, "jcrois": {"je", "crois"}, "jfais": {"je", "fais"}, "jte": {"je", "te"},
	"jsp": {"je", "sais", "pas"}, "jpp": {"je", "en", "peux", "plus"},
	// b for v, as Spanish is often typed; German vowels dropped
	"yano": {"ya", "no"}, "bida": {"vida"}, "bibir": {"vivir"}, "bivir": {"vivir"}, "kiero": {"quiero"}, "qiero": {"quiero"}, "xq": {"porque"}, "kieres": {"quieres"}, "kiere": {"quiere"}, "kisiera": {"quisiera"}, "lebn": {"leben"}, "mourrir": {"mourir"},
	"myslf": {"myself"}, "mysef": {"myself"}, "mysel": {"myself"}, "myseld": {"myself"}, "mysefl": {"myself"}, "ded": {"dead"}, "suicidle": {"suicidal"}, "sucide": {"suicide"}, "suiside": {"suicide"},
}

// French elided articles and pronouns, restored to their full form.
var elisions = map[string]string{
	"j": "je", "n": "ne", "m": "me", "t": "te", "s": "se", "l": "le", "d": "de", "c": "ce",
	"qu": "que", "jusqu": "jusque", "lorsqu": "lorsque", "puisqu": "puisque",
}

var fillers = map[string]bool{
	"um": true, "umm": true, "uh": true, "uhh": true, "uhm": true, "erm": true, "er": true, "hmm": true, "hm": true,
	"mm": true, "ah": true, "eh": true, "euh": true, "ahm": true, "ehm": true, "like": true, "just": true,
	"really": true, "so": true, "very": true, "honestly": true, "literally": true, "actually": true, "basically": true,
	"seriously": true, "totally": true, "truly": true, "fucking": true, "fuckin": true, "freaking": true, "bloody": true,
	"pretty": true, "okay": false,
}

// twoWordFillers are removed as pairs; the first word keys the second.
var twoWordFillers = map[string]string{"you": "know", "i": "mean"}

// dyeObjects keep "dye" a colour verb: "dye my hair".
var dyeObjects = map[string]bool{
	"my": true, "the": true, "it": true, "her": true, "his": true, "your": true, "their": true, "hair": true,
	"this": true, "that": true, "them": true, "some": true, "a": true, "our": true, "these": true, "those": true,
}

var leet = map[rune]rune{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't'}

// normalize returns the token form of s (see the comment above). dst is
// reused when it has capacity.
func normalize(s string, dst []string) []string { return germanForms(normalizeAs(s, dst, false)) }

// normalizeAs is normalize, reading s as German when german is set (the
// concept table's German entries: "im krankenhaus" is not "i am …").
func normalizeAs(s string, dst []string, german bool) []string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	umlaut := 0 // ä, ö, ß (not ü: Spanish "vergüenza")
	for _, r := range s {
		r = unicode.ToLower(r)
		if r == 'ä' || r == 'ö' || r == 'ß' {
			umlaut = 1
		}
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '\'' || r == '’' || r == '‘' || r == '`' || r == 'ʼ':
			b.WriteByte('\'')
		case r < 0x80:
			b.WriteByte(' ')
		default:
			if f, ok := foldMap[r]; ok {
				b.WriteString(f)
			} else if unicode.IsLetter(r) {
				b.WriteRune(r)
			} else {
				b.WriteByte(' ')
			}
		}
	}
	var rawBuf [64]string
	raw := appendFields(rawBuf[:0], b.String())
	toks := dst[:0]
	german = german || germanishBy(raw, umlaut)
	for _, t := range raw {
		if t == clauseMark {
			if len(toks) > 0 && toks[len(toks)-1] != clauseMark {
				toks = append(toks, t)
			}
			continue
		}
		t = strings.Trim(t, "'")
		if t == "" {
			continue
		}
		t = unleet(t)
		t = collapseRuns(t)
		if exp, ok := contractions[t]; ok && !(german && t == "im") { // German "im" is "in dem"
			toks = append(toks, exp...)
			continue
		}
		if i := strings.IndexByte(t, '\''); i >= 0 {
			toks = splitApostrophe(t, i, toks)
			continue
		}
		toks = append(toks, t)
	}
	toks = clean(toks, german || germanish(toks))
	if n := len(toks); n > 0 && toks[n-1] == clauseMark {
		toks = toks[:n-1]
	}
	return toks
}

// appendFields appends the space-separated fields of s (ASCII spaces only:
// normalizeAs writes every other separator as one) to dst: strings.Fields
// without its allocation when dst has room.
func appendFields(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' {
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// clauseMark is the token sentence punctuation becomes.
const clauseMark = "."

func splitApostrophe(t string, i int, toks []string) []string {
	head, tail := t[:i], strings.ReplaceAll(t[i+1:], "'", "")
	if strings.HasSuffix(head, "n") && tail == "t" && len(head) > 1 {
		// English "n't": didn't, isn't, wouldn't …
		return append(toks, head[:len(head)-1], "not")
	}
	switch tail {
	case "m":
		return append(toks, head, "am")
	case "re":
		return append(toks, head, "are")
	case "ve":
		return append(toks, head, "have")
	case "ll":
		return append(toks, head, "will")
	case "d":
		return append(toks, head, "would")
	case "s":
		return append(toks, head, "is")
	}
	if full, ok := elisions[head]; ok {
		if exp, ok := contractions[tail]; ok {
			return append(append(toks, full), exp...)
		}
		return append(toks, full, tail)
	}
	return append(toks, head+tail)
}

func unleet(t string) string {
	hasLetter, hasDigit := false, false
	for _, r := range t {
		if r >= '0' && r <= '9' {
			hasDigit = true
		} else {
			hasLetter = true
		}
	}
	if !hasLetter || !hasDigit {
		return t
	}
	return strings.Map(func(r rune) rune {
		if m, ok := leet[r]; ok {
			return m
		}
		return r
	}, t)
}

func collapseRuns(t string) string {
	prev, run := rune(0), 0
	for _, r := range t {
		if r == prev {
			run++
			if run >= 3 {
				// Held letters: "soooo", "diiie" and "lassst" keep one
				// letter, "tomorrrrow" and "alllll" two, whichever makes
				// a word (one when both do).
				one := collapseFromRun(t, 1)
				if wordish(one) {
					return one
				}
				if two := collapseFromRun(t, 2); wordish(two) {
					return two
				}
				return one
			}
		} else {
			prev, run = r, 1
		}
	}
	return t
}

// wordish: a known word or a contraction normalize expands ("i'll").
func wordish(w string) bool {
	if repairVocab[w] || contractions[w] != nil {
		return true
	}
	for _, suf := range []string{"'ll", "'re", "'ve", "'d", "'s", "'m", "n't"} {
		if strings.HasSuffix(w, suf) && repairVocab[strings.TrimSuffix(w, suf)] {
			return true
		}
	}
	return false
}

// collapseFromRun reduces every run of three or more identical letters to
// keep letters, leaving genuine doubles ("feel", "kill") alone.
func collapseFromRun(t string, keep int) string {
	rs := []rune(t)
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && rs[j] == rs[i] {
			j++
		}
		n := j - i
		if n >= 3 {
			n = keep
		}
		for k := 0; k < n; k++ {
			b.WriteRune(rs[i])
		}
		i = j
	}
	return b.String()
}

// clean joins split words, fixes homophones, drops fillers and collapses
// immediate repeats, in place.
func clean(toks []string, german bool) []string {
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case (t == "my" || t == "her" || t == "him" || t == "them" || t == "your") && (next == "self" || next == "selves"):
			switch t {
			case "my":
				t = "myself"
			case "her":
				t = "herself"
			case "him":
				t = "himself"
			case "them":
				t = "themselves"
			case "your":
				t = "yourself"
			}
			i++
		case t == "any" && next == "more":
			t = "anymore"
			i++
		case (t == "no" && next == "one") || (t == "no" && next == "body"):
			t = "nobody"
			i++
		case t == "un" && next == "alive":
			t = "unalive"
			i++
		case t == "sewer" && (next == "slide" || next == "side"):
			t = "sewerslide"
			i++
		case t == "dye" && !dyeObjects[next]:
			t = "die"
		case t == "dyeing" && !dyeObjects[next]:
			t = "dying"
		}
		if t == clauseMark && len(out) == 0 {
			continue
		}
		if fillers[t] && !(t == "um" && germanUm(out)) && !(german && germanKeep[t]) {
			// A filler that is half of a split word is kept and joined:
			// "toast er", "broth er", "ah orco".
			if n := len(out); n > 0 && wordish(out[n-1]+t) && !fillers[out[n-1]+t] {
				out[n-1] += t
			} else if wordish(t+next) && next != "" {
				out = append(out, t+next)
				i++
			}
			continue
		}
		if second, ok := twoWordFillers[t]; ok && next == second {
			i++
			continue
		}
		if (t == "kind" || t == "sort") && next == "of" {
			// a hedge, kept as one word: "kind of lonely" is milder than
			// "lonely" (the concept table's "mild")
			out = append(out, "somewhat")
			i++
			continue
		}
		if n := len(out); n > 0 && out[n-1] == t && !elided[t] {
			continue // a stutter: "i i want"
		}
		out = append(out, t)
	}
	return out
}

// elided: French and Spanish pronouns that legitimately repeat once an
// elision is restored ("personne ne n'entend" → "… ne ne entend").
var elided = map[string]bool{"ne": true, "se": true, "me": true, "te": true, "le": true}

// germanKeep are English fillers that are words in German ("er" is "he").
var germanKeep = map[string]bool{"er": true}

// germanUm keeps the German separable particle in "bringe mich (heute) um"
// and "ich bringe mich nach dem training um", which the English filler
// list would otherwise drop: a reflexive pronoun up to six words back
// makes it German, where "um" is never a filler.
func germanUm(out []string) bool {
	for k := len(out) - 1; k >= 0 && k >= len(out)-6; k-- {
		// also "bringemich um", "mich" run together with its verb
		if strings.HasSuffix(out[k], "mich") || strings.HasSuffix(out[k], "dich") || strings.HasSuffix(out[k], "sich") {
			return true
		}
		// Bavarian "bring i mi um"
		if out[k] == "imi" || out[k] == "mi" && k > 0 && (out[k-1] == "i" || strings.HasPrefix(out[k-1], "bring")) {
			return true
		}
	}
	return false
}
