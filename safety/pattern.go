package safety

import (
	"fmt"
	"strconv"
	"strings"
)

// A pattern is a sequence of token elements matched against normalised
// tokens. Syntax, elements separated by spaces:
//
//	word        the token itself
//	a|b|c       any one of the alternatives
//	suicid*     any token with that prefix (also inside alternatives)
//	[a|b]       optionally one of the alternatives
//	~  or ~N    a gap of 0..1 (or 0..N, N ≤ 6) arbitrary tokens; tolerates
//	            inserted words ("end my whole life") and ASR insertions
//	!a|b        the next token is not one of these (end of text is fine);
//	            consumes nothing; used for idioms ("cut myself shaving")
//	$           end of text
//	@name       the alternatives of macro name (rules.go), e.g. @selfkill
//
// Dropped words are handled by making function words optional
// ("want [to] kill myself" matches "want kill myself").
type pattern struct {
	src   string
	elems []elem
	words map[string]bool // literal words it matches (not "!" exclusions), to tell a gap-absorbed negator from a written one
	// need has, per required element of exact words only, the signature
	// bits of its words: a match needs one of them among the tokens
	// (mayMatch).
	need []tokSig
}

// tokSig is a 256-bit signature of a token list: bit sigBit(t) for every
// token t. A pattern whose required element has no word with its bit set
// cannot match, so most candidate patterns are rejected with a few ANDs.
type tokSig [4]uint64

func sigBit(t string) uint8 {
	h := uint32(2166136261) // FNV-1a, 32 bit
	for i := 0; i < len(t); i++ {
		h ^= uint32(t[i])
		h *= 16777619
	}
	return uint8(h ^ h>>8 ^ h>>16 ^ h>>24)
}

func (s *tokSig) add(t string) {
	b := sigBit(t)
	s[b>>6] |= 1 << (b & 63)
}

func sigOf(toks []string) tokSig {
	var s tokSig
	for _, t := range toks {
		s.add(t)
	}
	return s
}

// mayMatch is false when p cannot match any tokens with signature s.
func (p *pattern) mayMatch(s *tokSig) bool {
	for i := range p.need {
		n := &p.need[i]
		if n[0]&s[0]|n[1]&s[1]|n[2]&s[2]|n[3]&s[3] == 0 {
			return false
		}
	}
	return true
}

type elemKind uint8

const (
	elWord elemKind = iota
	elGap
	elNot
	elEnd
)

type elem struct {
	kind     elemKind
	optional bool
	words    []string // exact alternatives
	prefixes []string // prefix alternatives
	gap      int
	// wordSet holds words when there are many (a macro such as @selfkill
	// expands to dozens): one lookup instead of a scan.
	wordSet map[string]bool
}

// wordSetMin is the number of alternatives from which an element keeps a set.
const wordSetMin = 8

func (e *elem) matches(t string) bool {
	if e.wordSet != nil {
		if e.wordSet[t] {
			return true
		}
	} else {
		for _, w := range e.words {
			if w == t {
				return true
			}
		}
	}
	for _, p := range e.prefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func compilePattern(src string) (pattern, error) {
	p := pattern{src: src, words: map[string]bool{}}
	for _, f := range strings.Fields(src) {
		var e elem
		switch {
		case f == "$":
			e.kind = elEnd
		case f == "~" || strings.HasPrefix(f, "~"):
			e.kind, e.gap = elGap, 1
			if len(f) > 1 {
				n, err := strconv.Atoi(f[1:])
				if err != nil || n < 1 || n > 6 {
					return p, fmt.Errorf("pattern %q: bad gap %q", src, f)
				}
				e.gap = n
			}
		default:
			body := f
			if strings.HasPrefix(f, "!") {
				e.kind, body = elNot, f[1:]
			} else if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
				e.optional, body = true, f[1:len(f)-1]
			}
			for _, alt := range expandMacros(body) {
				if alt == "" {
					return p, fmt.Errorf("pattern %q: empty alternative in %q", src, f)
				}
				if !validWord(strings.TrimSuffix(alt, "*")) {
					return p, fmt.Errorf("pattern %q: %q is not a lower-case word (one word per alternative)", src, alt)
				}
				// Patterns match squashed tokens (squash, repair.go).
				if strings.HasSuffix(alt, "*") {
					e.prefixes = append(e.prefixes, squashWord(strings.TrimSuffix(alt, "*")))
					continue
				}
				alt = squashWord(alt)
				e.words = append(e.words, alt)
				if e.kind == elWord {
					p.words[alt] = true
				}
			}
		}
		if e.kind == elWord && !e.optional && len(e.prefixes) == 0 && len(e.words) > 0 {
			// required, and only these exact words satisfy it
			var n tokSig
			for _, w := range e.words {
				n.add(w)
			}
			p.need = append(p.need, n)
		}
		if len(e.words) >= wordSetMin {
			e.wordSet = make(map[string]bool, len(e.words))
			for _, w := range e.words {
				e.wordSet[w] = true
			}
		}
		p.elems = append(p.elems, e)
	}
	if len(p.elems) == 0 {
		return p, fmt.Errorf("pattern %q: empty", src)
	}
	if k := p.elems[0].kind; k == elGap || k == elEnd {
		return p, fmt.Errorf("pattern %q: must start with a word", src)
	}
	return p, nil
}

// firstKeys returns the exact words and prefixes a match can start with.
func (p *pattern) firstKeys() (words, prefixes []string) {
	for _, e := range p.elems {
		switch e.kind {
		case elNot:
			continue
		case elWord:
			words = append(words, e.words...)
			prefixes = append(prefixes, e.prefixes...)
			if !e.optional {
				return words, prefixes
			}
		default:
			return words, prefixes
		}
	}
	return words, prefixes
}

// prefixIndex holds the patterns a match of which can start with a word
// prefix ("kill*"), by the prefix's first byte, so a word is compared with
// the few prefixes it might start with instead of all of them. Each bucket
// keeps the order entries were added in, so callers meet matches in the
// same order as in one list.
type prefixIndex[C any] struct {
	first [256][]prefixEntry[C]
	empty []prefixEntry[C] // entries with an empty prefix: the candidates of an empty word
}

type prefixEntry[C any] struct {
	prefix string
	c      C
}

func (x *prefixIndex[C]) add(prefix string, c C) {
	e := prefixEntry[C]{prefix, c}
	if prefix == "" {
		x.empty = append(x.empty, e)
		for b := range x.first {
			x.first[b] = append(x.first[b], e)
		}
		return
	}
	x.first[prefix[0]] = append(x.first[prefix[0]], e)
}

// candidates returns the entries whose prefix t may start with (the
// caller still checks).
func (x *prefixIndex[C]) candidates(t string) []prefixEntry[C] {
	if t == "" {
		return x.empty
	}
	return x.first[t[0]]
}

// match tries the pattern at toks[i:], returning the end index (exclusive)
// of the shortest match or -1.
func (p *pattern) match(toks []string, i int) int {
	return matchFrom(p.elems, toks, i)
}

func matchFrom(el []elem, toks []string, i int) int {
	if len(el) == 0 {
		return i
	}
	e := &el[0]
	switch e.kind {
	case elEnd:
		if i == len(toks) {
			return matchFrom(el[1:], toks, i)
		}
		return -1
	case elNot:
		if i < len(toks) && e.matches(toks[i]) {
			return -1
		}
		return matchFrom(el[1:], toks, i)
	case elGap:
		for g := 0; g <= e.gap && i+g <= len(toks); g++ {
			if end := matchFrom(el[1:], toks, i+g); end >= 0 {
				return end
			}
		}
		return -1
	}
	if i < len(toks) && e.matches(toks[i]) {
		if end := matchFrom(el[1:], toks, i+1); end >= 0 {
			return end
		}
	}
	if e.optional {
		return matchFrom(el[1:], toks, i)
	}
	return -1
}

func validWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !(w[i] >= 'a' && w[i] <= 'z' || w[i] >= '0' && w[i] <= '9') {
			return false
		}
	}
	return true
}

// expandMacros splits an alternation and replaces each @macro by its
// alternatives; an unknown macro is kept verbatim so validWord rejects it.
func expandMacros(body string) []string {
	var out []string
	for _, alt := range strings.Split(body, "|") {
		if m, ok := macros[strings.TrimPrefix(alt, "@")]; ok && strings.HasPrefix(alt, "@") {
			out = append(out, strings.Split(m, "|")...)
			continue
		}
		out = append(out, alt)
	}
	return out
}
