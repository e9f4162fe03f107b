package consent

import (
	"strings"
	"unicode"
)

// Verdict is Classify's answer.
type Verdict int

const (
	// Ambiguous: not an explicit yes or no (silence included). Ask again.
	Ambiguous Verdict = iota
	// Yes: an explicit yes.
	Yes
	// No: an explicit no.
	No
)

func (v Verdict) String() string {
	switch v {
	case Yes:
		return "yes"
	case No:
		return "no"
	default:
		return "ambiguous"
	}
}

type kind int

const (
	kNeutral kind = iota
	kHedge
	kNo
	kNegator
	kYes
)

// phrases maps a lowercase token sequence to its kind. At each position the
// longest phrase wins, so "not now" is a no, "not sure" a hedge and "of
// course not" a no before "of course" can be a yes.
var phrases = map[string]kind{
	// Hedges, questions, conditions and pauses: never a decision.
	"maybe": kHedge, "perhaps": kHedge, "i guess": kHedge, "guess": kHedge, "not sure": kHedge,
	"do not know": kHedge, "dunno": kHedge, "i think": kHedge, "probably": kHedge, "possibly": kHedge,
	"kind of": kHedge, "sort of": kHedge, "kinda": kHedge, "sorta": kHedge, "hmm": kHedge, "hm": kHedge,
	"huh": kHedge, "wait": kHedge, "hold on": kHedge, "hang on": kHedge, "one sec": kHedge,
	"one second": kHedge, "a moment": kHedge, "a second": kHedge, "but": kHedge, "though": kHedge,
	"however": kHedge, "unless": kHedge, "if": kHedge, "instead": kHedge, "except": kHedge,
	"what": kHedge, "why": kHedge, "how": kHedge, "who": kHedge, "which": kHedge, "when": kHedge,
	"where": kHedge, "pardon": kHedge, "sorry": kHedge, "come again": kHedge, "say again": kHedge,
	"repeat": kHedge, "let me think": kHedge, "suppose": kHedge, "might": kHedge, "could be": kHedge,
	"whatever": kHedge, "or": kHedge, "do not mind": kHedge, "not really sure": kHedge,
	"i do not care": kHedge, "depends": kHedge, "not yet sure": kHedge, "change": kHedge,
	"actually": kHedge, "first": kHedge,

	// Fillers that contain signal words but say nothing.
	"no problem": kNeutral, "no worries": kNeutral, "thank you": kNeutral, "no doubt": kNeutral,

	// Explicit no.
	"no": kNo, "nope": kNo, "nah": kNo, "no way": kNo, "no thanks": kNo, "no thank you": kNo,
	"cancel": kNo, "cancel it": kNo, "stop": kNo, "not now": kNo, "not yet": kNo, "not today": kNo,
	"decline": kNo, "reject": kNo, "negative": kNo, "abort": kNo, "forget it": kNo,
	"never mind": kNo, "nevermind": kNo, "skip": kNo, "skip it": kNo, "hold off": kNo, "leave it": kNo,
	"later": kNo, "pass": kNo, "i will pass": kNo, "of course not": kNo, "absolutely not": kNo,
	"definitely not": kNo, "certainly not": kNo, "not really": kNo, "dismiss": kNo, "deny": kNo,

	// Negators: flip a following yes into a no.
	"not": kNegator, "do not": kNegator, "does not": kNegator, "did not": kNegator,
	"will not": kNegator, "would not": kNegator, "can not": kNegator, "should not": kNegator,
	"never": kNegator, "please do not": kNegator,

	// Explicit yes.
	"yes": kYes, "yeah": kYes, "yep": kYes, "yup": kYes, "yea": kYes, "ya": kYes, "aye": kYes,
	"sure": kYes, "ok": kYes, "okay": kYes, "alright": kYes, "all right": kYes, "affirmative": kYes,
	"absolutely": kYes, "definitely": kYes, "certainly": kYes, "of course": kYes, "please do": kYes,
	"do it": kYes, "do that": kYes, "go ahead": kYes, "go for it": kYes, "let us do it": kYes,
	"let us go": kYes, "send it": kYes, "send": kYes, "book it": kYes, "book": kYes,
	"order it": kYes, "call": kYes, "confirm": kYes, "confirmed": kYes, "approve": kYes,
	"approved": kYes, "accept": kYes, "proceed": kYes, "sounds good": kYes, "that is right": kYes,
	"correct": kYes, "fine": kYes, "perfect": kYes, "great": kYes, "make it so": kYes, "agreed": kYes,
	"i agree": kYes,
}

// maxPhrase is the longest phrase in tokens.
const maxPhrase = 4

// negationWindow is how many tokens after a negator it reaches.
const negationWindow = 3

var contractions = strings.NewReplacer(
	"don't", "do not", "dont", "do not", "doesn't", "does not", "didn't", "did not",
	"won't", "will not", "wont", "will not", "wouldn't", "would not", "can't", "can not", "cant", "can not",
	"cannot", "can not", "shouldn't", "should not", "let's", "let us", "lets", "let us", "i'm", "i am",
	"that's", "that is", "thats", "that is", "it's", "it is", "i'll", "i will", "i'd", "i would",
	"isn't", "is not", "aren't", "are not", "ain't", "is not",
)

// tokens lowercases s, expands contractions and splits on anything but
// letters, digits and apostrophes.
func tokens(s string) []string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("’", "'", "‘", "'", "`", "'").Replace(s)
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' })
	for i, w := range f {
		f[i] = strings.Trim(w, "'")
	}
	s = contractions.Replace(" " + strings.Join(f, " ") + " ")
	return strings.Fields(s)
}

type item struct {
	k   kind
	pos int
	n   int
}

// Classify reads an answer to an approve/decline prompt. Only an explicit
// answer is Yes or No; everything else, silence included, is Ambiguous.
func Classify(text string) Verdict {
	if strings.ContainsAny(text, "?¿") {
		return Ambiguous // a question back is not an answer
	}
	toks := tokens(text)
	if len(toks) == 0 {
		return Ambiguous
	}
	var items []item
	for i := 0; i < len(toks); {
		best, bestN := kNeutral, 1
		found := false
		for n := min(maxPhrase, len(toks)-i); n >= 1 && !found; n-- {
			if k, ok := phrases[strings.Join(toks[i:i+n], " ")]; ok {
				best, bestN, found = k, n, true
			}
		}
		if found && best != kNeutral {
			items = append(items, item{k: best, pos: i, n: bestN})
		}
		i += bestN
	}
	yes, no := 0, 0
	for i := 0; i < len(items); i++ {
		it := items[i]
		switch it.k {
		case kHedge:
			return Ambiguous
		case kYes:
			yes++
		case kNo:
			no++
		case kNegator:
			end := it.pos + it.n + negationWindow
			if i+1 < len(items) && items[i+1].pos < end {
				switch items[i+1].k {
				case kYes: // "do not send it"
					no++
					i++
					continue
				case kNo, kNegator: // "do not cancel": a double negative is not an explicit yes
					return Ambiguous
				}
			}
			no++ // "do not", "not", "I would not"
		}
	}
	switch {
	case yes > 0 && no > 0:
		return Ambiguous
	case yes > 0:
		return Yes
	case no > 0:
		return No
	default:
		return Ambiguous
	}
}
