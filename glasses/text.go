package glasses

import (
	"strings"
	"unicode"
)

// isSpace is the one definition of whitespace used by layout and by
// NormalizeSpace: every Unicode White_Space rune (including NBSP).
func isSpace(r rune) bool { return unicode.IsSpace(r) }

// NormalizeSpace is the single whitespace normalisation of this package:
// every run of Unicode whitespace (unicode.IsSpace) becomes one U+0020 and
// leading/trailing whitespace is removed. Nothing else changes. The paging
// invariant is NormalizeSpace(JoinText(pages)) == NormalizeSpace(source).
func NormalizeSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		if isSpace(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// numberPunct are the runes a number token may carry besides digits:
// "+1", "(800)", "273-8255", "24/7,", "13.11".
const numberPunct = "+-–.,:;/()#*!?"

// IsNumber reports whether a space-free token is a number: at least one
// digit and nothing but digits and numberPunct. Numbers are never split.
func IsNumber(tok string) bool {
	digits := 0
	for _, r := range tok {
		switch {
		case unicode.IsDigit(r):
			digits++
		case strings.ContainsRune(numberPunct, r):
		default:
			return false
		}
	}
	return digits > 0
}

// atom is the unit of wrapping: one word, or several words of a no-break
// span ("116 123", "text HOME to 741741") that stay on one line when they fit.
type atom struct {
	words []string
	// glue: the atom is a value that starts on the line where its label
	// ends ("Visit" + a URL, "Samaritans:" + "116 123"); the wrapper moves
	// the label's last word down rather than leave the label alone.
	glue bool
	// split is what a span wider than a line falls back to (nil: its
	// single words, each number still whole and glued to a word before it).
	split []atom
}

func (a atom) text() string { return strings.Join(a.words, " ") }

// atoms splits normalised text into words and merges no-break spans:
// runs of number tokens ("13 11 14", "1 800 273 8255"), a call verb with
// its number ("Call 988", "dial 116 123") and "text|txt|sms WORD to NUMBER"
// instructions. A span wider than a line falls back to single words. An
// atom that is a value after a label word ("visit", "at", "Hours:") is glued
// to it.
func atoms(s string) []atom {
	if s == "" {
		return nil
	}
	return atomsOf(strings.Split(s, " "))
}

func atomsOf(words []string) []atom {
	out := make([]atom, 0, len(words))
	for i := 0; i < len(words); {
		end := spanEnd(words, i)
		out = append(out, atom{words: words[i:end:end], glue: i > 0 && labelGlue(words[i-1], words[i])})
		i = end
	}
	return out
}

// spanEnd returns the end (exclusive) of the no-break span starting at word i.
func spanEnd(words []string, i int) int {
	numbersFrom := func(end int) int {
		for end < len(words) && IsNumber(words[end]) {
			end++
		}
		return end
	}
	switch {
	case i+3 < len(words) && isTextVerb(words[i]) && strings.EqualFold(words[i+2], "to") && IsNumber(words[i+3]):
		return numbersFrom(i + 4)
	case i+1 < len(words) && isCallVerb(words[i]) && IsNumber(words[i+1]):
		return numbersFrom(i + 2)
	case IsNumber(words[i]):
		return numbersFrom(i + 1)
	}
	return i + 1
}

// labelGlue reports whether word, a value, must share a line with the label
// word before it: a number or address after "Label:", an address after
// "visit", "at", "see", "open", "chat", "to" or "via".
func labelGlue(label, word string) bool {
	if strings.HasSuffix(label, ":") && (IsNumber(word) || isURLish(word)) {
		return true
	}
	switch strings.ToLower(label) {
	case "visit", "at", "see", "open", "chat", "to", "via":
		return isURLish(word)
	}
	return false
}

// actionAtoms is the wrapping of a resource action's text ("Chat at
// 988lifeline.org", "Visit: https://…"): one no-break span when it fits a
// line, else its words with the value (starting at word valueAt; -1 when
// unknown) glued to the label.
func actionAtoms(text string, valueAt int) []atom {
	words := strings.Split(text, " ")
	split := atomsOf(words)
	at := 0
	for i := range split {
		if at == valueAt && at > 0 {
			split[i].glue = true
		}
		at += len(split[i].words)
	}
	if len(words) == 1 {
		return split
	}
	return []atom{{words: words, split: split}}
}

// isURLish reports whether a token looks like a web address: it has a
// scheme, starts with "www." or its host part is a dotted name ending in
// letters ("988lifeline.org/chat", "findahelpline.com").
func isURLish(tok string) bool {
	tok = strings.TrimRight(tok, ".,;:!?)")
	if strings.Contains(tok, "://") || strings.HasPrefix(strings.ToLower(tok), "www.") {
		return true
	}
	host, _, _ := strings.Cut(tok, "/")
	dot := strings.LastIndexByte(host, '.')
	if dot <= 0 || len(host)-dot-1 < 2 {
		return false
	}
	for _, r := range host[dot+1:] {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return false
		}
	}
	for _, r := range host {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

func isTextVerb(w string) bool {
	return strings.EqualFold(w, "text") || strings.EqualFold(w, "txt") || strings.EqualFold(w, "sms")
}

func isCallVerb(w string) bool {
	w = strings.TrimRight(strings.ToLower(w), ":")
	switch w {
	case "call", "text", "txt", "sms", "dial", "ring", "phone":
		return true
	}
	return false
}
