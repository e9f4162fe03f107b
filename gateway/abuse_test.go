package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

// Attacks on the gateway root, each with the refusal it must get. THREATS.md
// at the repository root lists them with their mitigations.

// TestAbuseEndUserIDDisguisedContactDetails: a partner (or a bug in one)
// sends contact details dressed up so an ASCII-only check misses them. Each
// is refused with 400 invalid_request naming the rule, and no token is
// minted, so the value never reaches tokens, the audit or a webhook.
func TestAbuseEndUserIDDisguisedContactDetails(t *testing.T) {
	ts := newTestServer(t, testConfig())
	attacks := map[string]string{
		"maria＠example.com":                    "email",        // fullwidth @
		"maria﹫example.com":                    "email",        // small-form @
		"maria@example。com":                    "email",        // ideographic full stop
		"ma\u200bria@exam\u200cple.com":        "email",        // zero-width space and non-joiner
		"maria\u2060@\u2060example.com":        "email",        // word joiners around the @
		"maria%40example.com":                  "percent",      // percent-encoded @
		"maria&#64;example.com":                "percent",      // HTML character reference
		"Maria <m@x>":                          "display-name", // display-name form
		"\"Maria Garcia\" <maria@example.com>": "display-name",
		"＋４４ ２０ ７９４６ ０９５８":                     "phone", // fullwidth digits
		"+٤٤ ٢٠ ٧٩٤٦ ٠٩٥٨":                     "phone", // Arabic-Indic digits
		"۰۹۱۲۳۴۵۶۷۸۹":                          "phone", // Persian digits
		"+44\u00a020\u00a07946\u00a00958":      "phone", // no-break spaces
		"+44\u202f20\u202f7946\u202f0958":      "phone", // narrow no-break spaces
		"(415)\u200b555\u200b2671":             "phone", // zero-width between groups
		"415–555–2671":                         "phone", // en dashes
		"usr_+14155552671":                     "phone", // a number inside an id
		"MariaGarcia":                          "name",  // CamelCase name
		"Maria\u00a0Garcia":                    "name",  // no-break space
		"Maria\u200bGarcia":                    "name",  // zero-width space
		"Ｍａｒｉａ Ｇａｒｃｉａ":                         "name",  // fullwidth letters
		"王小明":                                  "name",  // CJK
		"김민준":                                  "name",  // Hangul
		"Иван Петров":                          "name",  // Cyrillic
		"محمد علي":                             "name",  // Arabic
		"राहुल शर्मा":                          "name",  // Devanagari
		"usr_8f3k2\u202e":                      "invisible",
	}
	for id, want := range attacks {
		body, _ := json.Marshal(map[string]string{"end_user_id": id, "device": "phone"})
		r := ts.do(t, "POST", "/v1/client_tokens", keyA, string(body))
		if r.status != 400 {
			t.Errorf("end_user_id %q: %d %s, want 400", id, r.status, r.body)
			continue
		}
		if e := r.envelope(t); e.Type != "invalid_request" || !strings.Contains(e.Message, want) {
			t.Errorf("end_user_id %q: %+v, want invalid_request naming %q", id, e, want)
		}
	}
	// The normal forms of opaque ids still get a token.
	for _, id := range []string{"usr_8f3k2", "ｕｓｒ＿８ｆ３ｋ２", "用户_12345"} {
		body, _ := json.Marshal(map[string]string{"end_user_id": id, "device": "phone"})
		if r := ts.do(t, "POST", "/v1/client_tokens", keyA, string(body)); r.status != 201 {
			t.Errorf("opaque %q: %d %s, want 201", id, r.status, r.body)
		}
	}
}
