package router

import (
	"context"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/veraneural/vera-gateway/safety"
)

// companion is the offline converse engine: deterministic and
// listening-first. It reflects back what it heard, asks at most one open
// question, and is honest about what it is: an AI companion, never a
// person, a therapist or emergency care. Same input, same reply.
type companion struct {
	assess Assessor
}

func newCompanion(a Assessor) *companion { return &companion{assess: a} }

// Fixed sentences of the companion. None claims to be human, a therapist
// or emergency care; TestCompanionNeverClaims checks every reply path.
const (
	companionIdentity = "I'm VERA, an AI companion: not a person, not a therapist, and not emergency care."
	companionCrisis   = "I'm really glad you told me. I'm an AI companion, not emergency care: if you might act on this or you're in danger, please call your local emergency number or one of the lines shown now. They have people ready to talk, right now."
	companionElevated = "That sounds heavy to carry. If it would help to talk to a person, the resources shown now are a good place to start."
	companionEmpty    = "I'm listening."
)

var companionQuestions = []string{
	"What feels most important about that right now?",
	"What would help a little, even for the next hour?",
	"How long has it been like this?",
	"What would you like to happen next?",
	"Who else knows about this?",
}

var identityQuestion = regexp.MustCompile(`(?i)\b(are|r)\s+(you|u)\s+(a\s+)?(real|human|person|bot|robot|ai|therapist|doctor|counsel+or|machine)\b`)

func (c *companion) complete(ctx context.Context, call *call, req textRequest, delta func(string) error) (Reply, error) {
	var history []string
	text := ""
	for i, m := range req.Messages {
		if m.Role != RoleUser {
			continue
		}
		if i == len(req.Messages)-1 {
			text = m.Text
		} else {
			history = append(history, m.Text)
		}
	}
	if text == "" && len(req.Messages) > 0 {
		text = req.Messages[len(req.Messages)-1].Text
	}
	var a safety.Assessment
	if c.assess != nil {
		a = c.assess(history, text)
	}
	if a.Source == "" {
		a.Source = safety.SourceLocal
	}
	if a.Resources == nil {
		a.Resources = []safety.Resource{}
	}
	reply := companionReply(text, a.Level, req.Oneshot)
	if n, ok := namingPrompt(req.System); ok && req.Oneshot {
		reply = companionTitle(text, a.Level, n)
	}
	if req.MaxTokens > 0 {
		reply = truncateWords(reply, req.MaxTokens)
	}
	// Stream word by word, as a model would, checking for cancellation.
	for _, w := range splitKeepSpace(reply) {
		if err := ctx.Err(); err != nil {
			return Reply{}, err
		}
		if err := emitDelta(call, delta, w); err != nil {
			return Reply{}, err
		}
	}
	return Reply{Message: reply, Safety: a, ProposedActions: []ProposedAction{}}, nil
}

// companionReply builds the reply. oneshot replies (a system prompt, no
// conversation) are the reflection alone: a short restatement.
func companionReply(text string, level safety.Level, oneshot bool) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return companionEmpty
	}
	switch level {
	case safety.LevelCrisis:
		return companionCrisis
	}
	reflection := reflect(text)
	if oneshot {
		return reflection
	}
	if identityQuestion.MatchString(text) {
		return companionIdentity + " " + "I'm here to listen. " + companionQuestions[0]
	}
	var b strings.Builder
	switch first := firstSentence(text); {
	case len(strings.Fields(text)) < 3:
		// Too little to reflect: invite more, without putting words in
		// the person's mouth.
		b.WriteString("I'm listening, take your time.")
		if level != safety.LevelElevated {
			b.WriteString(" What's on your mind?")
			return b.String()
		}
	case strings.HasSuffix(strings.TrimSpace(first), "?"):
		b.WriteString("That's a fair thing to ask, and I'll help as well as I can as an AI companion.")
		if level != safety.LevelElevated {
			b.WriteString(" What's going on?")
			return b.String()
		}
	default:
		b.WriteString("It sounds like ")
		b.WriteString(lowerFirst(reflection))
		b.WriteString(".")
	}
	if level == safety.LevelElevated {
		b.WriteString(" ")
		b.WriteString(companionElevated)
	}
	b.WriteString(" ")
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(text)))
	b.WriteString(companionQuestions[h.Sum32()%uint32(len(companionQuestions))])
	return b.String()
}

// pronoun swaps first and second person so the reflection speaks to the user.
var pronoun = map[string]string{
	"i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
	"am": "are", "i'm": "you're", "im": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd",
	"we": "you", "us": "you", "our": "your", "ours": "yours",
	"you": "I", "your": "my", "yours": "mine", "yourself": "myself", "you're": "I'm",
	"was": "were",
}

// firstSentence returns text up to and including its first end mark.
func firstSentence(text string) string {
	if i := strings.IndexAny(text, ".!?\n"); i >= 0 {
		return text[:i+1]
	}
	return text
}

// lowerFirst lower-cases the first letter unless the word is "I" or "I'm"
// style, so the reflection reads as part of the sentence.
func lowerFirst(s string) string {
	w, _, _ := strings.Cut(s, " ")
	if w == "I" || strings.HasPrefix(w, "I'") || w == "" {
		return s
	}
	r := []rune(s)
	if len(w) > 1 && strings.ToUpper(w) == w {
		return s // an acronym
	}
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// reflect restates the first sentence of text in the second person,
// at most 20 words, without its end punctuation or a trailing question.
func reflect(text string) string {
	first := text
	if i := strings.IndexAny(text, ".!?\n"); i > 0 {
		first = text[:i]
	}
	words := strings.Fields(first)
	if len(words) > 20 {
		words = words[:20]
	}
	var prevI bool
	for i, w := range words {
		core := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
		low := strings.ToLower(core)
		rep, ok := pronoun[low]
		if low == "was" && !prevI {
			ok = false
		}
		prevI = low == "i"
		if ok && core != "" {
			words[i] = strings.Replace(w, core, rep, 1)
		}
	}
	out := strings.Join(words, " ")
	out = strings.TrimRight(out, ",;: ")
	if out == "" {
		return "there's something on your mind"
	}
	return out
}

func truncateWords(s string, n int) string {
	words := strings.Fields(s)
	if len(words) <= n {
		return s
	}
	return strings.Join(words[:n], " ")
}

// splitKeepSpace splits s into words, each carrying its leading space, so
// the deltas concatenate back to s.
func splitKeepSpace(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && s[i-1] != ' ' {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

// namingRequest and titleWordLimit recognise a request to name a
// conversation ("Name this conversation in five words or fewer.").
var (
	namingRequest  = regexp.MustCompile(`(?i)\b(name|title)\s+(this|the)\b`)
	titleWordLimit = regexp.MustCompile(`(?i)\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+words?\s+or\s+(fewer|less)\b`)
)

var numberWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

// defaultTitleWords is the length of a title when the prompt names none.
const defaultTitleWords = 5

// namingPrompt reports whether a system prompt asks for a conversation
// name, and in how many words at most.
func namingPrompt(system string) (int, bool) {
	if !namingRequest.MatchString(system) {
		return 0, false
	}
	m := titleWordLimit.FindStringSubmatch(system)
	if m == nil {
		return defaultTitleWords, true
	}
	n, ok := numberWords[strings.ToLower(m[1])]
	if !ok {
		var err error
		if n, err = strconv.Atoi(m[1]); err != nil {
			return defaultTitleWords, true
		}
	}
	return min(max(n, 1), 12), true
}

// Titles the companion gives a conversation whose first message raised
// concern: the name shows on every surface (and a window title), so it
// never repeats what the person disclosed.
const (
	companionTitleCrisis   = "A difficult moment"
	companionTitleElevated = "Something heavy to share"
	companionTitleDefault  = "New conversation"
)

// titleFiller are words a title leaves out: who is speaking, articles,
// auxiliaries, hedges and greetings.
var titleFiller = map[string]bool{
	"i": true, "i'm": true, "im": true, "i've": true, "i'd": true, "i'll": true, "me": true, "my": true, "mine": true, "myself": true,
	"we": true, "we're": true, "us": true, "our": true, "you": true, "your": true, "u": true, "vera": true,
	"a": true, "an": true, "the": true, "is": true, "am": true, "are": true, "was": true, "were": true, "be": true, "been": true,
	"have": true, "has": true, "had": true, "do": true, "does": true, "did": true, "it": true, "it's": true, "its": true,
	"just": true, "really": true, "so": true, "very": true, "like": true, "um": true, "uh": true, "well": true, "okay": true,
	"ok": true, "hey": true, "hi": true, "hello": true, "please": true, "can": true, "could": true, "would": true, "should": true,
	"will": true, "feel": true, "feeling": true, "felt": true, "think": true, "guess": true, "maybe": true, "actually": true,
	"honestly": true, "kinda": true, "kind": true, "sort": true, "some": true, "something": true, "lot": true,
}

// titleEdge are words a title neither starts nor ends with.
var titleEdge = map[string]bool{
	"to": true, "and": true, "or": true, "but": true, "of": true, "for": true, "about": true, "with": true, "in": true,
	"on": true, "at": true, "because": true, "that": true, "this": true, "so": true, "if": true, "when": true, "from": true,
	"into": true, "by": true, "than": true, "then": true, "what": true, "how": true, "why": true,
}

// companionTitle names a conversation after its first message: the
// message's content words, in order, at most n, the first capitalised
// ("I feel anxious about my exam tomorrow" → "Anxious about exam
// tomorrow"). Sentences with no content (a greeting) are skipped.
func companionTitle(text string, level safety.Level, n int) string {
	switch level {
	case safety.LevelCrisis:
		return truncateWords(companionTitleCrisis, n)
	case safety.LevelElevated:
		return truncateWords(companionTitleElevated, n)
	}
	for _, sentence := range splitSentences(text) {
		var words []string
		for _, w := range strings.Fields(sentence) {
			core := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			core = strings.ReplaceAll(core, "’", "'")
			if core == "" || titleFiller[strings.ToLower(core)] {
				continue
			}
			words = append(words, core)
		}
		for len(words) > 0 && titleEdge[strings.ToLower(words[0])] {
			words = words[1:]
		}
		if len(words) > n {
			words = words[:n]
		}
		for len(words) > 0 && titleEdge[strings.ToLower(words[len(words)-1])] {
			words = words[:len(words)-1]
		}
		if len(words) == 0 {
			continue
		}
		r := []rune(words[0])
		r[0] = unicode.ToUpper(r[0])
		words[0] = string(r)
		return strings.Join(words, " ")
	}
	return truncateWords(companionTitleDefault, n)
}

// splitSentences splits text at sentence ends and line breaks.
func splitSentences(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '\n' || r == ';' })
}
