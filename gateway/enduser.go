package gateway

import (
	"regexp"
	"strings"
	"unicode"
)

// maxEndUserIDLen bounds an end_user_id.
const maxEndUserIDLen = 128

var (
	emailRe = regexp.MustCompile(`(?i)^(mailto:)?[^\s@]+@[^\s@]+\.[a-z]{2,}$|(?i)^[^\s@]+\s*(@|\(at\)|\[at\])\s*[^\s@]+\s*(\.|\(dot\)|\[dot\])\s*[a-z]{2,}$`)
	// nameWordRe is one word of a personal name as people write them:
	// "maria", "Maria", "MARIA", "McDonald", "O'Brien", "Jean-Luc".
	nameWordRe = regexp.MustCompile(`^(\p{Lu}?\p{Ll}+|\p{Lu}+|(Mc|Mac|O'|D'|De|Di|La|Le|Van|Von)\p{Lu}\p{Ll}+)$`)
	hexRe      = regexp.MustCompile(`^[0-9a-fA-F]+$`)
	phoneExtRe = regexp.MustCompile(`(?i)\s*(ext\.?|x)\s*\d{1,6}$`)
)

// ValidateEndUserID checks that an end_user_id is an opaque identifier. It
// refuses values that look like an email address, a phone number or a
// personal name, naming the rule, because the Partner API never stores who
// a person is. Typical opaque ids pass: UUIDs, hashes, "u_123", base64url.
func ValidateEndUserID(id string) *Error {
	if id == "" {
		return Errorf(InvalidRequest, "end_user_id is required")
	}
	if len(id) > maxEndUserIDLen {
		return Errorf(InvalidRequest, "end_user_id must be at most %d bytes", maxEndUserIDLen)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return Errorf(InvalidRequest, "end_user_id must not contain control characters")
		}
	}
	if emailRe.MatchString(strings.TrimSpace(id)) {
		return Errorf(InvalidRequest, "end_user_id looks like an email address: send an opaque id (for example a UUID or a hash), never contact details")
	}
	if looksLikePhone(id) {
		return Errorf(InvalidRequest, "end_user_id looks like a phone number: send an opaque id (for example a UUID or a hash), never contact details")
	}
	if looksLikeName(id) {
		return Errorf(InvalidRequest, "end_user_id looks like a personal name: send an opaque id (for example \"u_\" plus a number, a UUID or a hash)")
	}
	return nil
}

// looksLikePhone: only digits and the separators people type in phone
// numbers, with 7 to 15 digits (E.164's maximum), optionally "+", "00" or
// "tel:" in front. Longer digit strings (snowflake ids) pass.
func looksLikePhone(s string) bool {
	s = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "tel:")
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

// looksLikeName: one to five words of letters, each shaped like a written
// name word. Hex strings (hashes) and mixed-case random strings (base64url)
// do not have that shape.
func looksLikeName(s string) bool {
	words := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' || r == '.' || r == ',' })
	if len(words) == 0 || len(words) > 5 {
		return false
	}
	for _, w := range words {
		if hexRe.MatchString(w) && len(w) >= 8 {
			return false
		}
		if !nameWordRe.MatchString(w) {
			return false
		}
	}
	return true
}
