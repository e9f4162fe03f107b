package turn

// The adaptive policy's word evidence: what the last words of a partial
// transcript say about the pause that follows them. A trailing conjunction,
// filler, preposition, article or an opener like "I think" means the person
// is mid-thought (hold); a closing formula ("thank you", "that's all") or a
// question means the turn is done (end). Everything else is neutral: a
// complete clause is told by prosody and the silence, not guessed from
// content words. The lists are small and per language, written for the
// language, not for one recogniser's spelling (fillers are listed in the
// spellings recognisers commonly give them).

// WordClass is what the last words of a transcript say.
type WordClass uint8

const (
	// WordsNone: no transcript yet, or nothing in it the lexicon knows.
	WordsNone WordClass = iota
	// WordsHold: the words stop mid-thought.
	WordsHold
	// WordsEnd: a closing formula or a question.
	WordsEnd
)

func (c WordClass) String() string {
	switch c {
	case WordsHold:
		return "hold"
	case WordsEnd:
		return "end"
	}
	return "none"
}

// lexicon is one language's word lists. Keys are lower case; two-word keys
// are joined by one space. trailing maps the last word (or last two) to a
// class; openers are first words that make the utterance a question.
type lexicon struct {
	trailing map[string]WordClass
	openers  map[string]bool
	// backchannel words: a turn of only these, said over VERA's voice,
	// is listening, not taking the floor.
	backchannel map[string]bool
}

func words(class WordClass, m map[string]WordClass, list ...string) {
	for _, w := range list {
		m[w] = class
	}
}

func set(list ...string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, w := range list {
		m[w] = true
	}
	return m
}

var lexicons = map[string]*lexicon{
	"en": enLexicon(),
	"es": esLexicon(),
	"fr": frLexicon(),
	"de": deLexicon(),
}

func enLexicon() *lexicon {
	t := map[string]WordClass{}
	// Only words a sentence seldom ends on: "that", "this", "her", "on",
	// "over", the auxiliaries and the like end plenty ("I did that", "turn
	// it on", "I think it is").
	// Conjunctions and subordinators.
	words(WordsHold, t, "and", "or", "but", "so", "because", "cause", "'cause", "if", "when", "while", "although",
		"though", "unless", "than", "whether")
	// Fillers and hesitations.
	words(WordsHold, t, "um", "umm", "uh", "uhh", "er", "erm", "ah", "eh", "hmm", "mm")
	// Prepositions.
	words(WordsHold, t, "to", "of", "for", "with", "from", "about", "into", "onto", "between", "through", "without",
		"towards", "toward", "against")
	// Articles and possessive determiners.
	words(WordsHold, t, "the", "a", "an", "my", "your", "our", "their")
	// Subjects with nothing after them.
	words(WordsHold, t, "i", "i'm", "we", "we're", "you're", "it's", "there's")
	// Openers.
	words(WordsHold, t, "i think", "i mean", "i guess", "i feel", "i want", "i need", "i was", "kind of", "sort of",
		"going to", "want to", "have to", "need to", "and then", "so that", "the thing", "you know what")
	// Endings that only look like the above.
	words(WordsNone, t, "think so", "hope so", "guess so", "or so", "so so", "and so on", "or something", "you know")
	// Closing formulas.
	words(WordsEnd, t, "thanks", "thank you", "bye", "goodbye", "bye bye", "that's all", "that's it", "that is all",
		"please", "okay thanks", "see you", "good night", "cheers")
	return &lexicon{trailing: t,
		openers: set("what", "why", "how", "when", "where", "who", "whom", "whose", "which", "can", "could",
			"would", "will", "do", "does", "did", "is", "are", "am", "was", "were", "should", "shall", "may",
			"have", "has", "what's", "where's", "how's", "who's", "isn't", "aren't", "don't", "doesn't", "didn't",
			"can't", "won't"),
		backchannel: set("mm", "mhm", "mm-hm", "mmhm", "hmm", "hm", "uh-huh", "uhhuh", "uh", "huh", "yeah", "yes",
			"yep", "yup", "ya", "right", "okay", "ok", "sure", "i", "see", "alright", "all", "got", "it", "true",
			"exactly", "oh", "ah", "wow", "cool", "fine", "good", "great", "indeed", "of", "course", "totally")}
}

func esLexicon() *lexicon {
	t := map[string]WordClass{}
	words(WordsHold, t, "y", "e", "o", "u", "pero", "porque", "que", "si", "cuando", "aunque", "entonces", "pues",
		"como", "mientras", "donde", "ni", "sino")
	words(WordsHold, t, "eh", "em", "este", "bueno", "o sea", "mmm", "ah")
	words(WordsHold, t, "de", "del", "a", "al", "en", "con", "para", "por", "sin", "sobre", "desde", "hasta", "entre",
		"hacia", "contra")
	words(WordsHold, t, "el", "la", "los", "las", "un", "una", "unos", "unas", "mi", "mis", "tu", "tus", "su", "sus",
		"nuestro", "nuestra", "este", "esta", "ese", "esa")
	words(WordsHold, t, "muy", "creo que", "yo creo", "es que", "lo que", "tengo que", "voy a", "quiero", "necesito")
	words(WordsEnd, t, "gracias", "muchas gracias", "adiós", "hasta luego", "eso es todo", "nada más", "por favor",
		"vale", "buenas noches", "chao")
	return &lexicon{trailing: t,
		openers: set("qué", "que", "por qué", "cómo", "como", "dónde", "donde", "cuándo", "cuando", "quién",
			"quien", "cuál", "cual", "cuánto", "cuanto", "puedes", "puede", "podrías", "sabes", "tienes", "hay",
			"es", "está"),
		backchannel: set("sí", "si", "ajá", "aja", "claro", "vale", "ya", "mmm", "mm", "bueno", "exacto", "vale",
			"ok", "okey", "cierto", "verdad", "eso")}
}

func frLexicon() *lexicon {
	t := map[string]WordClass{}
	words(WordsHold, t, "et", "ou", "mais", "donc", "parce que", "parce", "que", "qui", "si", "quand", "comme",
		"alors", "puis", "car", "lorsque", "bien que")
	words(WordsHold, t, "euh", "heu", "ben", "bah", "hum", "genre", "enfin")
	words(WordsHold, t, "de", "du", "des", "à", "au", "aux", "en", "dans", "avec", "pour", "sur", "sous", "par",
		"sans", "chez", "vers", "entre", "depuis", "pendant")
	words(WordsHold, t, "le", "la", "les", "l'", "un", "une", "mon", "ma", "mes", "ton", "ta", "tes", "son", "sa",
		"ses", "notre", "votre", "leur", "ce", "cette", "ces")
	words(WordsHold, t, "je", "j'ai", "je suis", "c'est", "très", "je pense", "je crois", "je veux", "il faut", "je dois",
		"est-ce que")
	words(WordsEnd, t, "merci", "merci beaucoup", "au revoir", "c'est tout", "voilà", "bonne nuit", "à bientôt",
		"s'il vous plaît", "s'il te plaît", "salut")
	return &lexicon{trailing: t,
		openers: set("qu'est-ce", "est-ce", "pourquoi", "comment", "où", "quand", "qui", "quel", "quelle",
			"quels", "quelles", "combien", "peux-tu", "pouvez-vous", "tu", "vous", "est-ce que"),
		backchannel: set("oui", "ouais", "mm", "mmm", "hum", "d'accord", "ok", "okay", "voilà", "exactement",
			"ah", "oh", "bon", "bien", "sûr", "carrément", "c'est", "ça", "vrai")}
}

func deLexicon() *lexicon {
	t := map[string]WordClass{}
	words(WordsHold, t, "und", "oder", "aber", "weil", "dass", "daß", "denn", "also", "wenn", "ob", "als", "sondern",
		"obwohl", "damit", "bis", "dann", "sodass")
	words(WordsHold, t, "äh", "ähm", "eh", "ehm", "hm", "naja", "halt")
	words(WordsHold, t, "in", "im", "mit", "für", "auf", "an", "am", "zu", "zum", "zur", "von", "vom", "bei", "beim",
		"nach", "aus", "über", "unter", "vor", "durch", "ohne", "gegen", "um")
	words(WordsHold, t, "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "mein",
		"meine", "meinen", "dein", "deine", "sein", "seine", "ihr", "ihre", "unser", "unsere")
	words(WordsHold, t, "sehr", "ich glaube", "ich denke", "ich meine", "ich will", "ich muss", "es ist", "ich bin")
	words(WordsEnd, t, "danke", "danke schön", "vielen dank", "tschüss", "auf wiedersehen", "das war's",
		"das ist alles", "gute nacht", "bitte", "bis bald")
	return &lexicon{trailing: t,
		openers: set("was", "warum", "wieso", "weshalb", "wie", "wo", "wann", "wer", "wen", "wem", "welche",
			"welcher", "welches", "kannst", "können", "könnten", "hast", "haben", "ist", "bist", "sind", "gibt",
			"weißt", "darf"),
		backchannel: set("ja", "jaja", "mhm", "hm", "genau", "okay", "ok", "gut", "stimmt", "richtig", "klar",
			"ach", "so", "aha", "echt", "sicher", "na")}
}

// lexiconFor returns the language's lexicon (ISO-639-1, any case, a
// region suffix ignored), or nil for a language without one.
func lexiconFor(lang string) *lexicon {
	var b [2]byte
	if len(lang) < 2 || (len(lang) > 2 && lang[2] != '-' && lang[2] != '_') {
		return nil
	}
	for i := range b {
		b[i] = lower(lang[i])
	}
	return lexicons[string(b[:])]
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// maxToken bounds a word the lexicon looks at; longer words are no
// function words.
const maxToken = 24

// token is one word of a transcript, lower-cased into a fixed buffer.
type token struct {
	b [maxToken]byte
	n int
}

func (t *token) str() []byte { return t.b[:t.n] }

// isSep reports a byte that separates words (space and punctuation other
// than the apostrophe and hyphen, which are inside words).
func isSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', '.', ';', ':', '!', '?', '"', '[', ']':
		return true
	}
	return false
}

// lastTokens fills toks with up to len(toks) last words of text, last
// first, and returns how many it found and whether the text's last
// non-space character is a question mark. Pronunciation variants a
// recogniser may mark ("and(2)") keep only the word. No allocation.
func lastTokens(text string, toks []token) (n int, question bool) {
	i := len(text)
	for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t' || text[i-1] == '\n' || text[i-1] == '\r') {
		i--
	}
	question = i > 0 && text[i-1] == '?'
	for n < len(toks) && i > 0 {
		for i > 0 && isSep(text[i-1]) {
			i--
		}
		j := i
		for j > 0 && !isSep(text[j-1]) {
			j--
		}
		if j == i {
			break
		}
		w := trimWord(text[j:i])
		i = j
		if len(w) > maxToken || len(w) == 0 {
			toks[n].n = 0
			n++
			continue
		}
		t := &toks[n]
		for k := 0; k < len(w); k++ {
			t.b[k] = lower(w[k])
		}
		t.n = len(w)
		n++
	}
	return n, question
}

// firstToken lower-cases text's first word into t; false when there is none.
func firstToken(text string, t *token) bool {
	i := 0
	for i < len(text) && isSep(text[i]) {
		i++
	}
	j := i
	for j < len(text) && !isSep(text[j]) {
		j++
	}
	w := trimWord(text[i:j])
	if len(w) == 0 || len(w) > maxToken {
		return false
	}
	for k := range len(w) {
		t.b[k] = lower(w[k])
	}
	t.n = len(w)
	return true
}

// trimWord drops what a recogniser or writer puts around a word: a
// pronunciation variant ("and(2)"), parentheses, Spanish opening marks.
func trimWord(w string) string {
	for {
		switch {
		case len(w) >= 2 && (w[:2] == "¿" || w[:2] == "¡"):
			w = w[2:]
			continue
		case len(w) > 0 && w[0] == '(':
			w = w[1:]
			continue
		}
		break
	}
	if k := indexByte(w, '('); k > 0 {
		w = w[:k]
	}
	if len(w) > 0 && w[len(w)-1] == ')' {
		w = w[:len(w)-1]
	}
	return w
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// maxQuestionWords: an utterance longer than this is not judged a question
// by its first word (the question may have been followed by more talk).
const maxQuestionWords = 14

// classify reads what the end of text says: a trailing two-word or
// one-word entry of the lexicon, else a question (a question mark, or a
// question opener on a short utterance), else none.
func (lx *lexicon) classify(text string) WordClass {
	if lx == nil {
		return WordsNone
	}
	var toks [2]token
	n, question := lastTokens(text, toks[:])
	if n == 0 {
		return WordsNone
	}
	if question {
		return WordsEnd
	}
	if n == 2 && toks[0].n > 0 && toks[1].n > 0 {
		var pair [2*maxToken + 1]byte
		k := copy(pair[:], toks[1].str())
		pair[k] = ' '
		k++
		k += copy(pair[k:], toks[0].str())
		if c, ok := lx.trailing[string(pair[:k])]; ok {
			return c
		}
	}
	if toks[0].n > 0 {
		if c, ok := lx.trailing[string(toks[0].str())]; ok {
			return c
		}
	}
	var first token
	if firstToken(text, &first) && lx.openers[string(first.str())] && countWords(text) <= maxQuestionWords {
		return WordsEnd
	}
	return WordsNone
}

func countWords(text string) int {
	n, in := 0, false
	for i := 0; i < len(text); i++ {
		if isSep(text[i]) {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// maxBackchannelWords: a backchannel is a few words at most.
const maxBackchannelWords = 3

// isBackchannel reports whether text is only backchannel words ("mm-hm",
// "yeah", "right", "okay", "I see"), at most maxBackchannelWords of them.
func (lx *lexicon) isBackchannel(text string) bool {
	if lx == nil {
		return false
	}
	var toks [maxBackchannelWords + 1]token
	n, _ := lastTokens(text, toks[:])
	if n == 0 || n > maxBackchannelWords {
		return false
	}
	for i := range n {
		if toks[i].n == 0 || !lx.backchannel[string(toks[i].str())] {
			return false
		}
	}
	return true
}

// ClassifyWords is the word evidence of text in lang ("en", "es", "fr",
// "de"; WordsNone for other languages).
func ClassifyWords(lang, text string) WordClass { return lexiconFor(lang).classify(text) }

// IsBackchannel reports whether text, in lang, is only a backchannel
// ("mm-hm", "yeah", "right"; "sí", "claro"; "oui", "d'accord"; "ja",
// "genau"): listening, not taking the floor.
func IsBackchannel(lang, text string) bool { return lexiconFor(lang).isBackchannel(text) }
