package pairing

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// codeAlphabet is Crockford's base32: digits and letters without I, L, O
// and U, so a code read off a phone and written or spoken on the glasses
// survives the usual confusions (normalize maps them back).
const codeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// codeLen is the number of symbols in a code: 40 bits.
const codeLen = 8

// ErrCodeFormat: the text is not a pairing code.
var ErrCodeFormat = errors.New("pairing: not a pairing code")

// newCode returns a random code, normalised (no separator).
func newCode() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	v := uint64(b[0])<<32 | uint64(b[1])<<24 | uint64(b[2])<<16 | uint64(b[3])<<8 | uint64(b[4])
	out := make([]byte, codeLen)
	for i := codeLen - 1; i >= 0; i-- {
		out[i] = codeAlphabet[v&31]
		v >>= 5
	}
	return string(out)
}

// displayCode groups a normalised code as "ABCD-EFGH" for people.
func displayCode(c string) string { return c[:4] + "-" + c[4:] }

// normalizeCode accepts what a person types, writes or dictates: any case,
// spaces, hyphens and dots between symbols, O for 0 and I or L for 1.
func normalizeCode(s string) (string, error) {
	if len(s) > 64 {
		return "", ErrCodeFormat
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == ' ' || r == '-' || r == '.' || r == '_' || r == '\t':
			continue
		case r == 'O':
			r = '0'
		case r == 'I' || r == 'L':
			r = '1'
		}
		if r > 127 || !strings.ContainsRune(codeAlphabet, r) {
			return "", ErrCodeFormat
		}
		b.WriteRune(r)
	}
	if b.Len() != codeLen {
		return "", ErrCodeFormat
	}
	return b.String(), nil
}

// digest is how codes and refresh secrets are kept: never in the clear.
func digest(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newPairingID is a pairing's public id: "pair_" and 16 base32 symbols.
func newPairingID() string {
	var b strings.Builder
	b.WriteString("pair_")
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	for _, x := range raw {
		b.WriteByte(codeAlphabet[x&31] | 0x20) // lower case: digits are unchanged
	}
	return b.String()
}

// refreshPrefix starts every refresh credential, so that logs and secret
// scanners can tell it from a partner key (vera_sk_) or a client token.
const refreshPrefix = "vera_rt_"

// formatRefresh joins a pairing id and a secret into a credential.
func formatRefresh(id, secret string) string {
	return refreshPrefix + strings.TrimPrefix(id, "pair_") + "_" + secret
}

// parseRefresh splits a credential into the pairing id and the secret.
func parseRefresh(s string) (id, secret string, ok bool) {
	rest, found := strings.CutPrefix(s, refreshPrefix)
	if !found || len(s) > 200 {
		return "", "", false
	}
	idPart, secret, found := strings.Cut(rest, "_")
	if !found || len(idPart) != 16 || len(secret) != 64 {
		return "", "", false
	}
	if _, err := hex.DecodeString(secret); err != nil {
		return "", "", false
	}
	return "pair_" + idPart, secret, true
}
