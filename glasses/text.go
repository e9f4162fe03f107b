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
}

func (a atom) text() string { return strings.Join(a.words, " ") }

// atoms splits normalised text into words and merges no-break spans:
// runs of number tokens ("13 11 14", "1 800 273 8255"), a call verb with
// its number ("Call 988", "dial 116 123") and "text|txt|sms WORD to NUMBER"
// instructions. A span wider than a line falls back to single words.
func atoms(s string) []atom {
	if s == "" {
		return nil
	}
	words := strings.Split(s, " ")
	var out []atom
	for i := 0; i < len(words); {
		if i+3 < len(words) && isTextVerb(words[i]) && strings.EqualFold(words[i+2], "to") && IsNumber(words[i+3]) {
			end := i + 4
			for end < len(words) && IsNumber(words[end]) {
				end++
			}
			out = append(out, atom{words: words[i:end:end]})
			i = end
			continue
		}
		if i+1 < len(words) && isCallVerb(words[i]) && IsNumber(words[i+1]) {
			end := i + 2
			for end < len(words) && IsNumber(words[end]) {
				end++
			}
			out = append(out, atom{words: words[i:end:end]})
			i = end
			continue
		}
		if IsNumber(words[i]) {
			end := i + 1
			for end < len(words) && IsNumber(words[end]) {
				end++
			}
			out = append(out, atom{words: words[i:end:end]})
			i = end
			continue
		}
		out = append(out, atom{words: words[i : i+1 : i+1]})
		i++
	}
	return out
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
