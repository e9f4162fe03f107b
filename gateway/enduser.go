package gateway

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxEndUserIDLen bounds an end_user_id.
const maxEndUserIDLen = 128

var (
	// obfuscatedAtRe: "bob (at) example", "bob[at]example", "bob at x dot com".
	obfuscatedAtRe = regexp.MustCompile(`(?i)[(\[{<]\s*at\s*[)\]}>]|\sat\s+\S+\s+dot\s`)
	// percentRe: a percent-encoded octet ("%40" is "@").
	percentRe = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)
	// entityRe: an HTML character reference ("&#64;", "&commat;").
	entityRe = regexp.MustCompile(`&(#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z]+);`)
	// nameWordRe is one cased word of a personal name as people write
	// them: "maria", "Maria", "MARIA", "McDonald", "MariaGarcia",
	// "mariaGarcia" (at most four capitalised parts).
	nameWordRe = regexp.MustCompile(`^(\p{Lu}+|\p{Ll}+(\p{Lu}\p{Ll}+){0,3}|(\p{Lu}\p{Ll}+){1,4})$`)
	hexRe      = regexp.MustCompile(`^[0-9a-fA-F]+$`)
	phoneExtRe = regexp.MustCompile(`(?i)\s*(ext\.?|x)\s*\d{1,6}$`)
	// embeddedPhoneRe: "+" and 7 or more digits with phone separators
	// anywhere in the id ("usr_+14155552671").
	embeddedPhoneRe = regexp.MustCompile(`(^|[^\p{L}\p{N}])\+\s*\(?\d[\d\s().\-/]{5,}\d`)
	phonePrefixRe   = regexp.MustCompile(`(?i)^(tel|phone|mobile|sms|whatsapp|callto):\s*`)
)

// ValidateEndUserID checks that an end_user_id is an opaque identifier. It
// refuses values that look like an email address, a phone number or a
// personal name, naming the rule, because the Partner API never stores who
// a person is. The checks run on NormalizeEndUserID(id), so fullwidth or
// small-form "@", ideographic full stops, Unicode digits and spaces, and
// invisible characters do not hide contact details; invisible (format)
// characters are then refused outright, and percent- or HTML-encoded and
// display-name ("Maria <m@x>") forms are refused. Typical opaque ids pass:
// UUIDs, hashes, "usr_8f3k2", base64url. The id is stored as sent.
func ValidateEndUserID(id string) *Error {
	if id == "" {
		return Errorf(InvalidRequest, "end_user_id is required")
	}
	if len(id) > maxEndUserIDLen {
		return Errorf(InvalidRequest, "end_user_id must be at most %d bytes", maxEndUserIDLen)
	}
	if !utf8.ValidString(id) {
		return Errorf(InvalidRequest, "end_user_id must be valid UTF-8")
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return Errorf(InvalidRequest, "end_user_id must not contain control characters")
		}
	}
	if e := piiError(NormalizeEndUserID(id)); e != nil {
		return e
	}
	for _, r := range id {
		if invisible(r) {
			return Errorf(InvalidRequest, "end_user_id must not contain invisible or format characters (U+%04X)", r)
		}
	}
	return nil
}

// piiError runs the content checks on a normalised id.
func piiError(n string) *Error {
	switch {
	case strings.ContainsRune(n, '<') && strings.ContainsRune(n, '>'):
		return Errorf(InvalidRequest, "end_user_id looks like an email address in display-name form (\"Name <address>\"): send an opaque id, never contact details")
	case strings.ContainsRune(n, '@') || obfuscatedAtRe.MatchString(n) || strings.HasPrefix(strings.ToLower(n), "mailto:"):
		return Errorf(InvalidRequest, "end_user_id looks like an email address or a handle (it has an \"@\"): send an opaque id (for example a UUID or a hash), never contact details; qualify ids with \":\" or \"/\"")
	case percentRe.MatchString(n) || entityRe.MatchString(n):
		return Errorf(InvalidRequest, "end_user_id must not be percent- or HTML-encoded: send the opaque id itself")
	case looksLikePhone(n):
		return Errorf(InvalidRequest, "end_user_id looks like a phone number: send an opaque id (for example a UUID or a hash), never contact details")
	case looksLikeName(n):
		return Errorf(InvalidRequest, "end_user_id looks like a personal name (only letters, no digit): send an opaque id (for example \"usr_\" plus a number, a UUID or a hash)")
	}
	return nil
}

// NormalizeEndUserID is the form the end_user_id checks look at: invisible
// and format characters removed, NFKC (fullwidth and small forms, circled
// and superscript digits, ligatures become their plain letters), then
// every Unicode space as " ", every dash as "-", full stops and middle dots
// as ".", apostrophes as "'" and every decimal digit as its ASCII digit.
// It is idempotent.
func NormalizeEndUserID(id string) string {
	s := strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, id)
	for range 3 { // mapping can expose a new NFKC form; two rounds settle it
		n := strings.Map(mapEndUserRune, norm.NFKC.String(s))
		if n == s {
			break
		}
		s = n
	}
	return s
}

// invisible: format characters (zero-width space and joiners, bidi
// controls, soft hyphen, tags) and the other default-ignorable code points
// (variation selectors, Hangul fillers, the combining grapheme joiner).
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

func mapEndUserRune(r rune) rune {
	switch {
	case r < utf8.RuneSelf:
		return r
	case invisible(r):
		return -1
	case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
		return ' '
	case unicode.Is(unicode.Pd, r) || r == '\u2212' || r == '\u2043':
		return '-'
	case unicode.Is(unicode.Nd, r):
		return '0' + digitValue(r)
	}
	switch r {
	case '\u3002', '\uff61', '\ufe12', '\u06d4', '\u0701', '\u0702', '\u00b7', '\u30fb', '\u2027', '\u2022', '\u2219', '\u0387':
		return '.'
	case '\u2018', '\u2019', '\u201b', '\u02bc', '\u02b9', '\u2032', '\u00b4':
		return '\''
	case '\ufe6b', '\uff20':
		return '@'
	}
	return r
}

// digitValue is the value of a decimal digit (Nd): Unicode assigns them in
// runs of ten, 0 to 9, so the value is the distance from the run's start.
func digitValue(r rune) rune {
	z := r
	for z > 0 && unicode.Is(unicode.Nd, z-1) {
		z--
	}
	return (r - z) % 10
}

// looksLikePhone: only digits and the separators people type in phone
// numbers, with 7 to 15 digits (E.164's maximum), optionally "+", "00" or
// "tel:" in front; or, inside a longer id, "+" after a separator and 7 to
// 15 digits ("usr_+14155552671"). Longer
// digit strings (snowflake ids) pass, and so do prefixed digit ids
// ("u_4155552671"): they cannot be told from account numbers.
func looksLikePhone(s string) bool {
	for _, m := range embeddedPhoneRe.FindAllString(s, -1) {
		if d := phoneDigits(m); d >= 7 && d <= 15 {
			return true
		}
	}
	s = phonePrefixRe.ReplaceAllString(strings.TrimSpace(s), "")
	s = phoneExtRe.ReplaceAllString(s, "")
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0:
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')' || r == '/':
		default:
			return false
		}
	}
	return digits >= 7 && digits <= 15
}

func phoneDigits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

// looksLikeName: every word of the id is made of letters only (no digit
// anywhere), and each is shaped like a written name word. Words are split
// at anything that is not a letter or a mark. A word of a cased script
// (Latin, Cyrillic, Greek, Armenian…) is name-shaped when it is all lower
// case, all upper case, capitalised, or CamelCase of up to four capitalised
// parts ("MariaGarcia"); a word of an uncased script (Arabic, Hebrew,
// Devanagari, Thai, CJK, kana, Hangul…) always is. Hex strings of 8 or more
// digits (hashes) and mixed-case random strings (base64url) are not.
func looksLikeName(s string) bool {
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsMark(r) })
	if len(words) == 0 {
		return false
	}
	for _, r := range s {
		if unicode.IsDigit(r) || unicode.IsNumber(r) {
			return false
		}
	}
	for _, w := range words {
		if hexRe.MatchString(w) && len(w) >= 8 {
			return false
		}
		if !nameWord(w) {
			return false
		}
	}
	return true
}

func nameWord(w string) bool {
	w = strings.Map(func(r rune) rune {
		if unicode.IsMark(r) {
			return -1
		}
		return r
	}, w)
	cased, uncased := false, false
	for _, r := range w {
		if unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) {
			cased = true
		} else {
			uncased = true
		}
	}
	switch {
	case w == "":
		return true // marks alone: part of the neighbouring word
	case uncased && !cased:
		return true
	case cased && !uncased:
		return nameWordRe.MatchString(w)
	}
	return false
}
