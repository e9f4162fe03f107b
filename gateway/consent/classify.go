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
	"what's", "what is", "how's", "how is", "where's", "where is", "who's", "who is", "when's", "when is",
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

// answerLeads are the hedges that read as an unclear answer to the prompt
// ("maybe", "hold on"), unlike question words and conjunctions, which start
// a new topic ("what is the weather").
var answerLeads = map[string]bool{
	"maybe": true, "perhaps": true, "i guess": true, "guess": true, "not sure": true, "do not know": true,
	"dunno": true, "i think": true, "probably": true, "possibly": true, "kind of": true, "sort of": true,
	"kinda": true, "sorta": true, "hmm": true, "hm": true, "huh": true, "wait": true, "hold on": true,
	"hang on": true, "one sec": true, "one second": true, "a moment": true, "a second": true, "pardon": true,
	"sorry": true, "come again": true, "say again": true, "repeat": true, "let me think": true,
	"could be": true, "whatever": true, "do not mind": true, "not really sure": true, "i do not care": true,
	"depends": true, "not yet sure": true, "actually": true,
}

// answerFillers are words an answer may carry around its yes or no
// without becoming a new topic ("yes please send it now").
var answerFillers = map[string]bool{
	"please": true, "thanks": true, "thank": true, "you": true, "it": true, "that": true, "this": true,
	"just": true, "now": true, "right": true, "away": true, "the": true, "a": true, "i": true, "we": true,
	"me": true, "um": true, "uh": true, "er": true, "erm": true, "oh": true, "ah": true, "well": true,
	"so": true, "and": true, "then": true, "to": true, "vera": true, "already": true,
	"one": true, "is": true, "them": true, "him": true, "her": true, "in": true, "let": true,
}

// Answer limits: an answer is short, starts with its signal and carries
// little else.
const (
	maxAnswerTokens = 10
	maxAnswerLead   = 1 // tokens before the first signal ("oh yes", "um no")
	maxAnswerOther  = 2 // tokens that are neither signal nor filler
)

// Answer reads an utterance heard while a prompt is waiting. addressed
// says whether it reads as an answer to the prompt at all: short, opening
// with a yes, a no or an answering hedge, and carrying little else. Only
// an addressed utterance gets a verdict other than Ambiguous (Classify's);
// anything else is a new topic for the conversation, never a yes — so "I
// need to call my mom" does not approve a call, and "what's the weather"
// is not taken for an unclear answer.
func Answer(text string) (v Verdict, addressed bool) {
	toks := tokens(text)
	if len(toks) == 0 || len(toks) > maxAnswerTokens {
		return Ambiguous, false
	}
	lead, other := -1, 0
	for i := 0; i < len(toks); {
		k, n, p := kNeutral, 1, toks[i]
		for m := min(maxPhrase, len(toks)-i); m >= 1; m-- {
			if kk, ok := phrases[strings.Join(toks[i:i+m], " ")]; ok {
				k, n, p = kk, m, strings.Join(toks[i:i+m], " ")
				break
			}
		}
		signal := k == kYes || k == kNo || k == kNegator || (k == kHedge && answerLeads[p])
		switch {
		case signal:
			if lead < 0 {
				lead = i
			}
		case k == kNeutral && n > 1: // "no problem", "thank you"
		case k == kHedge: // a question word or condition: counts as content
			other++
		case !answerFillers[p]:
			other++
		}
		i += n
	}
	if lead < 0 || lead > maxAnswerLead || other > maxAnswerOther {
		return Ambiguous, false
	}
	return Classify(text), true
}
