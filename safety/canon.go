package safety

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The statistical model reads a canonical form of the utterance that is the
// same however it was typed or heard (see modelCanon):
//
//   - lower case, Latin accents folded (é→e, ß→ss), leetspeak inside a word
//     undone ("k1ll"), a number of any size one digit ("30 pills" → "0pils");
//   - punctuation, symbols and emoji dropped, apostrophes removed inside a
//     word ("don't" → "dont", "j'ai" → "jai");
//   - every run of a repeated letter collapsed to one ("soooo", "so" and
//     "soo" are all "so"; "kill" is "kil");
//   - no spaces at all, so split and merged words ("kill my self",
//     "killmyself") read the same; '<' and '>' mark the start and the end.
//
// Case, punctuation, repeated letters and spacing therefore cannot change
// what the model sees, by construction.

// modelCanon appends the canonical form of s to dst[:0] and returns it.
func modelCanon(s string, dst []byte) []byte {
	out := append(dst[:0], '<')
	var tok [64]byte // one word, before leet and digit handling
	n, letters, digits := 0, false, false
	flush := func() {
		if n == 0 {
			return
		}
		w := tok[:n]
		switch {
		case digits && !letters:
			out = appendCollapsed(out, '0')
		case digits:
			for _, c := range w {
				if m, ok := leetByte(c); ok {
					c = m
				} else if c >= '0' && c <= '9' {
					continue
				}
				out = appendCollapsed(out, c)
			}
		default:
			for _, c := range w {
				out = appendCollapsed(out, c)
			}
		}
		n, letters, digits = 0, false, false
	}
	put := func(c byte) {
		if n == len(tok) {
			flush()
		}
		tok[n] = c
		n++
	}
	for _, r := range s {
		r = unicode.ToLower(r)
		switch {
		case r >= 'a' && r <= 'z':
			put(byte(r))
			letters = true
		case r >= '0' && r <= '9':
			put(byte(r))
			digits = true
		case r == '\'' || r == '’' || r == '‘' || r == '`' || r == 'ʼ':
			// inside a word: nothing
		case r < utf8.RuneSelf:
			flush()
		default:
			if f, ok := foldMap[r]; ok {
				for i := 0; i < len(f); i++ {
					put(f[i])
				}
				letters = true
			} else if unicode.IsLetter(r) {
				flush()
				var b [utf8.UTFMax]byte
				k := utf8.EncodeRune(b[:], r)
				for i := 0; i < k; i++ {
					out = appendCollapsed(out, b[i])
				}
			} else {
				flush()
			}
		}
	}
	flush()
	return append(out, '>')
}

// appendCollapsed appends c unless it repeats the last byte.
func appendCollapsed(out []byte, c byte) []byte {
	if len(out) > 0 && out[len(out)-1] == c {
		return out
	}
	return append(out, c)
}

func leetByte(c byte) (byte, bool) {
	switch c {
	case '0':
		return 'o', true
	case '1':
		return 'i', true
	case '3':
		return 'e', true
	case '4':
		return 'a', true
	case '5':
		return 's', true
	case '7':
		return 't', true
	}
	return 0, false
}

// laughWords end a message as a joke marker ("lol", "jajaja", "mdr").
// Repeated letters are collapsed before the lookup ("lool" → "lol").
var laughWords = map[string]bool{
	"lol": true, "lols": true, "lolol": true, "lmao": true, "lmfao": true, "rofl": true, "haha": true,
	"hah": true, "ha": true, "hehe": true, "jaja": true, "jeje": true, "jk": true, "xd": true, "mdr": true,
	"ptdr": true, "xptdr": true, "ahah": true, "hihi": true, "kek": true, "lel": true, "lul": true,
}

// laughRunes are emoji that mark a joke at the end of a message.
var laughRunes = map[rune]bool{'😂': true, '🤣': true, '😆': true, '😅': true, '😹': true}

// laughTail reports whether s ends in laughter ("… lol", "… jajaja 😂") and
// returns s without it. Only a trailing marker counts: it may lower a crisis
// to elevated, never to none (see Detector).
func laughTail(s string) (string, bool) {
	end, found := len(s), false
	for end > 0 {
		i := end
		for i > 0 {
			r, k := utf8.DecodeLastRuneInString(s[:i])
			if laughRunes[r] {
				found = true
			} else if !(unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) || r == utf8.RuneError) {
				break
			}
			i -= k
		}
		j := i
		for j > 0 {
			r, k := utf8.DecodeLastRuneInString(s[:j])
			if !unicode.IsLetter(r) {
				break
			}
			j -= k
		}
		if j == i || !isLaughWord(s[j:i]) {
			if found {
				return s[:i], true
			}
			return s, false
		}
		found, end = true, j
	}
	return s[:end], found
}

func isLaughWord(w string) bool {
	if len(w) > 24 {
		return false
	}
	var b [24]byte
	n := 0
	for i := 0; i < len(w); i++ {
		c := w[i] | 0x20
		if c < 'a' || c > 'z' {
			return false
		}
		if n > 0 && b[n-1] == c {
			continue
		}
		b[n] = c
		n++
	}
	k := string(b[:n])
	if laughWords[k] {
		return true
	}
	// "hahaha", "jajajaja", "hehehe", "lolol", "ahahah": a two-letter
	// laugh repeated.
	if n >= 4 {
		p := k[:2]
		if p == "ha" || p == "ah" || p == "ja" || p == "aj" || p == "he" || p == "lo" || p == "je" {
			return strings.Count(k, p)*2 >= n-1
		}
	}
	return false
}
