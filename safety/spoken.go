package safety

import (
	"regexp"
	"strings"
)

// Spoken returns the spoken English form of an action for a voice surface or
// a text-to-speech engine without SSML: every number digit by digit, grouped
// as printed, and said twice (BRIEF §5.5, safety-anchors §5 rule 9):
//
//	call 988        → "Call nine eight eight. Again: nine eight eight."
//	call "116 123"  → "Call one one six, one two three. Again: one one six, one two three."
//	text 741741, label "Text HOME to 741741"
//	                → "Text the word HOME to seven four one, seven four one. Again: text HOME to seven four one, seven four one."
//
// A text action's keyword is read from its label when the label has the form
// "Text KEYWORD to …" with KEYWORD in capitals. Catalog actions carry this
// string pre-stored in Action.Spoken so the offline path needs no generator.
func Spoken(a Action) string {
	switch a.Type {
	case ActionCall:
		n := SpokenNumber(a.Value)
		return "Call " + n + ". Again: " + n + "."
	case ActionText:
		n := SpokenNumber(a.Value)
		if kw := textKeyword(a.Label); kw != "" {
			return "Text the word " + kw + " to " + n + ". Again: text " + kw + " to " + n + "."
		}
		return "Text " + n + ". Again: text " + n + "."
	case ActionChat:
		u := spokenURL(a.Value)
		return "Chat online at " + u + ". Again: " + u + "."
	case ActionURL:
		u := spokenURL(a.Value)
		return "Go to " + u + ". Again: " + u + "."
	}
	if a.Label != "" {
		return a.Label + "."
	}
	return a.Value
}

// SpokenResource is the whole spoken form of a resource: its name, its
// description when it has no actions (the "call your local emergency number"
// entry), then each action's spoken form, pre-stored or generated.
func SpokenResource(r Resource) string {
	var b strings.Builder
	b.WriteString(r.Name)
	b.WriteString(".")
	if len(r.Actions) == 0 && r.Description != "" {
		b.WriteString(" ")
		b.WriteString(r.Description)
	}
	for _, a := range r.Actions {
		s := a.Spoken
		if s == "" {
			s = Spoken(a)
		}
		b.WriteString(" ")
		b.WriteString(s)
	}
	return b.String()
}

var digitWords = [10]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}

// SpokenNumber spells a phone number or short code digit by digit. Groups the
// operator prints ("116 123", "0800-0113", "13 11 14") become comma-separated
// spoken groups; an unbroken run longer than four digits is grouped in threes
// with a final group of up to four ("741741" → "seven four one, seven four
// one"), which is how people read numbers back. A leading "+" is "plus";
// letters are kept as they are.
func SpokenNumber(v string) string {
	var groups []string
	plus := false
	for _, f := range strings.FieldsFunc(v, func(r rune) bool {
		return r == ' ' || r == '-' || r == '.' || r == '(' || r == ')' || r == '/' || r == '\u00a0'
	}) {
		if strings.HasPrefix(f, "+") {
			plus = len(groups) == 0
			f = strings.TrimPrefix(f, "+")
		}
		groups = append(groups, splitRun(f)...)
	}
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		words := make([]string, 0, len(g))
		for _, r := range g {
			if r >= '0' && r <= '9' {
				words = append(words, digitWords[r-'0'])
			} else {
				words = append(words, string(r))
			}
		}
		out = append(out, strings.Join(words, " "))
	}
	s := strings.Join(out, ", ")
	if plus {
		s = "plus " + s
	}
	return s
}

// splitRun groups an unbroken digit run for reading aloud.
func splitRun(f string) []string {
	n := len(f)
	if n <= 4 || !allDigits(f) {
		if f == "" {
			return nil
		}
		return []string{f}
	}
	var sizes []int
	switch {
	case n == 10:
		sizes = []int{3, 3, 4}
	case n == 11 && f[0] == '1':
		sizes = []int{1, 3, 3, 4}
	default:
		for rest := n; rest > 0; {
			switch {
			case rest <= 4:
				sizes = append(sizes, rest)
				rest = 0
			case rest == 5:
				sizes = append(sizes, 2, 3)
				rest = 0
			default:
				sizes = append(sizes, 3)
				rest -= 3
			}
		}
	}
	out := make([]string, 0, len(sizes))
	i := 0
	for _, s := range sizes {
		out = append(out, f[i:i+s])
		i += s
	}
	return out
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var keywordRE = regexp.MustCompile(`(?i)^\s*text\s+(?-i:([A-Z][A-Z0-9]*))\s+to\s`)

func textKeyword(label string) string {
	if m := keywordRE.FindStringSubmatch(label); m != nil {
		return m[1]
	}
	return ""
}

// spokenURL reads a web address: no scheme, no "www.", dots and slashes as
// words, digits one by one ("988lifeline.org" → "nine eight eight lifeline dot org").
func spokenURL(u string) string {
	u = strings.TrimSpace(u)
	for _, p := range []string{"https://", "http://"} {
		if len(u) >= len(p) && strings.EqualFold(u[:len(p)], p) {
			u = u[len(p):]
		}
	}
	u = strings.TrimPrefix(u, "www.")
	u = strings.TrimRight(u, "/")
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for _, r := range u {
		switch {
		case r >= '0' && r <= '9':
			flush()
			words = append(words, digitWords[r-'0'])
		case r == '.':
			flush()
			words = append(words, "dot")
		case r == '/':
			flush()
			words = append(words, "slash")
		case r == '-':
			flush()
			words = append(words, "dash")
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return strings.Join(words, " ")
}
