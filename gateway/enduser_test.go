package gateway

import (
	"strings"
	"testing"
)

func TestValidateEndUserID(t *testing.T) {
	accept := []string{
		"u_123", "u_9f8e7d", "user_000042", "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
		"550E8400-E29B-41D4-A716-446655440000", "d41d8cd98f00b204e9800998ecf8427e",
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"dQw4w9WgXcQ", "aGVsbG8td29ybGQ", "Zm9vYmFyYmF6_-x", "xQzKpLmNvBtR", "acct:7781",
		"12345", "partnerA:u-77", "01HF8Z3M5K2Q9T7V6W4X3Y2Z1A", "tenant/123/user/456",
		"1234567890123456789", "ab12cd34", "deadbeefcafebabe", "usr.8f3a", "c_1", "9b1deb4d3b7d4bad",
		"AbC123xYz", "k9_", "X7", "u+42", "hash:5f4dcc3b5aa765d61d8327deb882cf99",
		"anon-7f3e", "session_2f9a-77", "GUEST_0001",
	}
	reject := map[string]string{
		"":                           "required",
		"jane.doe@example.com":       "email",
		"JANE@EXAMPLE.ORG":           "email",
		"mailto:bob@mail.co.uk":      "email",
		"first.last+tag@gmail.com":   "email",
		"bob (at) example (dot) com": "email",
		"bob[at]example[dot]com":     "email",
		"+1 415 555 2671":            "phone",
		"+14155552671":               "phone",
		"(415) 555-2671":             "phone",
		"415-555-2671":               "phone",
		"415.555.2671":               "phone",
		"020 7946 0958":              "phone",
		"+44 20 7946 0958":           "phone",
		"0044 20 7946 0958":          "phone",
		"+49 30 901820":              "phone",
		"030/901820-0":               "phone",
		"+33 1 42 68 53 00":          "phone",
		"06 12 34 56 78":             "phone",
		"+61 2 9374 4000":            "phone",
		"tel:+1-202-555-0143":        "phone",
		"5552671234":                 "phone",
		"+91 98765 43210":            "phone",
		"415-555-2671 ext 12":        "phone",
		"John Smith":                 "name",
		"john smith":                 "name",
		"JOHN SMITH":                 "name",
		"Maria":                      "name",
		"José Álvarez":               "name",
		"Mary-Jane Watson":           "name",
		"Sean O'Brien":               "name",
		"Ronald McDonald":            "name",
		"Jean-Luc Picard":            "name",
		"anna maria garcia lopez":    "name",
		"Dr. Jane Roe":               "name",
		"Müller":                     "name",
		"Zoë Kravitz":                "name",
		"guest":                      "name",
		"bad\x00id":                  "control",
		string(make([]byte, 129)):    "at most",
	}
	for _, id := range accept {
		if err := ValidateEndUserID(id); err != nil {
			t.Errorf("ValidateEndUserID(%q) = %v, want accepted", id, err)
		}
	}
	for id, want := range reject {
		err := ValidateEndUserID(id)
		if err == nil {
			t.Errorf("ValidateEndUserID(%q) accepted, want rejected (%s)", id, want)
			continue
		}
		if err.Type != InvalidRequest || err.Status() != 400 {
			t.Errorf("ValidateEndUserID(%q) = %v, want invalid_request 400", id, err)
		}
		if !strings.Contains(strings.ToLower(err.Message), want) {
			t.Errorf("ValidateEndUserID(%q) message %q does not name rule %q", id, err.Message, want)
		}
	}
	if n := len(accept) + len(reject); n < 60 {
		t.Fatalf("only %d cases; the issue asks for at least 60", n)
	}
}
