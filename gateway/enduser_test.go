package gateway

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// endUserAccept are opaque ids, true accepts the checks must keep.
var endUserAccept = []string{
	// ASCII ids as partners mint them.
	"u_123", "u_9f8e7d", "user_000042", "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
	"550E8400-E29B-41D4-A716-446655440000", "d41d8cd98f00b204e9800998ecf8427e",
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"dQw4w9WgXcQ", "aGVsbG8td29ybGQ", "Zm9vYmFyYmF6_-x", "xQzKpLmNvBtR", "acct:7781",
	"12345", "partnerA:u-77", "01HF8Z3M5K2Q9T7V6W4X3Y2Z1A", "tenant/123/user/456",
	"1234567890123456789", "ab12cd34", "deadbeefcafebabe", "usr.8f3a", "c_1", "9b1deb4d3b7d4bad",
	"AbC123xYz", "k9_", "X7", "u+42", "hash:5f4dcc3b5aa765d61d8327deb882cf99",
	"anon-7f3e", "session_2f9a-77", "GUEST_0001", "usr_8f3k2", "usr_8F3K2",
	"auth0|5f7c8ec7c33c6c004bbafe82", "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "V1StGXR8_Z5jdHi6B-myT",
	"cus_NffrFeUfNV2Hib", "acct_1032D82eZvKYlo2C", "dGVzdA==", "kZqWpXvTbNmR", "QwErTyUiOp",
	"sha256:9f86d081884c7d659a2feaa0c55ad015", "p-1/u-2", "u_4155552671", "id=42", "2024-01-05_77",
	"ffffffff", "u~7", "org:acme:user:991", "a1", "7", "U-0001", "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66",
	"ts+1700000000", "user 42", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA7",
	// Beyond Latin: letters with a digit are ids, not names.
	"用户_12345", "用户一二三4", "пользователь-42", "ユーザー0042", "사용자7788", "مستخدم_٣٤٥",
	"χρήστης_9", "उपयोगकर्ता१२", "משתמש-55", "ผู้ใช้๑๒๓", "Иван7", "🦊-7f3e", "★42",
	// Fullwidth and other compatibility forms of an opaque id: accepted (and stored as sent).
	"ｕｓｒ＿８ｆ３ｋ２", "u_①②③", "ID№5",
}

// endUserReject maps ids to a word the refusal must contain (its rule).
var endUserReject = map[string]string{
	"": "required", "bad\x00id": "control", "u_1\n": "control", "u\t1": "control",
	string(make([]byte, 129)): "at most", "\xff\xfe": "utf-8",
	// Emails, plain and dressed up.
	"jane.doe@example.com": "email", "JANE@EXAMPLE.ORG": "email", "mailto:bob@mail.co.uk": "email",
	"first.last+tag@gmail.com": "email", "bob (at) example (dot) com": "email", "bob[at]example[dot]com": "email",
	"maria@gmail": "email", "@maria_g": "email", "root@localhost": "email", "maria(at)example(dot)com": "email",
	"bob at example dot com": "email", "иван@почта.рф": "email", "王@例子.中国": "email",
	"maria＠example.com": "email", "maria﹫example.com": "email", "maria@example。com": "email",
	"maria\u200b@example.com": "email", "m\u00adaria@example.com": "email", "maria@ex\u200dample.com": "email",
	"ＪＯＨＮ＠ＭＡＩＬ．ＣＯＭ": "email", "john＠mail。com": "email", "maria\u2060@\u2060x.io": "email",
	"Maria <m@x>": "display-name", "\"Maria Garcia\" <maria@example.com>": "display-name",
	"<maria@example.com>": "display-name", "Maria ＜m＠x＞": "display-name",
	"maria%40example.com": "percent", "mailto:maria%40example.com": "email", "maria&#64;example.com": "percent",
	"maria&commat;example.com": "percent", "maria&#x40;example.com": "percent", "usr%5F1": "percent",
	// Phone numbers, in any digits and with any spaces.
	"+1 415 555 2671": "phone", "+14155552671": "phone", "(415) 555-2671": "phone", "415-555-2671": "phone",
	"415.555.2671": "phone", "020 7946 0958": "phone", "+44 20 7946 0958": "phone", "0044 20 7946 0958": "phone",
	"+49 30 901820": "phone", "030/901820-0": "phone", "+33 1 42 68 53 00": "phone", "06 12 34 56 78": "phone",
	"+61 2 9374 4000": "phone", "tel:+1-202-555-0143": "phone", "5552671234": "phone", "+91 98765 43210": "phone",
	"415-555-2671 ext 12": "phone", "＋１ ４１５ ５５５ ２６７１": "phone", "+١ ٤١٥ ٥٥٥ ٢٦٧١": "phone",
	"۰۹۱۲۳۴۵۶۷۸۹": "phone", "०९८७६५४३२१": "phone", "415\u00a0555\u00a02671": "phone", "415\u2009555\u20092671": "phone",
	"415–555–2671": "phone", "415—555—2671": "phone", "(415)\u200b555-2671": "phone", "tel:+44\u202f20\u202f7946\u202f0958": "phone",
	"usr_+14155552671": "phone", "phone: 415 555 2671": "phone", "４１５５５５２６７１": "phone", "+49\u3000151\u300012345678": "phone",
	"𝟒𝟏𝟓𝟓𝟓𝟓𝟐𝟔𝟕𝟏": "phone", "whatsapp:+5511987654321": "phone", "४१५-५५५-२६७१": "phone",
	// Names, in Latin and beyond.
	"John Smith": "name", "john smith": "name", "JOHN SMITH": "name", "Maria": "name", "José Álvarez": "name",
	"Mary-Jane Watson": "name", "Sean O'Brien": "name", "Ronald McDonald": "name", "Jean-Luc Picard": "name",
	"anna maria garcia lopez": "name", "Dr. Jane Roe": "name", "Müller": "name", "Zoë Kravitz": "name", "guest": "name",
	"MariaGarcia": "name", "mariaGarcia": "name", "JoséÁlvarez": "name", "maria_garcia": "name", "maria.garcia": "name",
	"Maria\u00a0Garcia": "name", "Maria\u200bGarcia": "name", "Ｍａｒｉａ Ｇａｒｃｉａ": "name", "Zoe\u0308 Kravitz": "name",
	"Sean O’Brien": "name", "Jean‐Luc": "name", "maria garcia lopez de la vega": "name", "Mаria": "name",
	"usr_maria": "name", "acme:maria.garcia": "name", "François-Xavier": "name", "Łukasz Żółć": "name",
	"Ørjan Bjørnstad": "name", "Siobhán Ní Bhriain": "name", "Nguyễn Văn An": "name", "Đặng Thị Mai": "name",
	"王小明": "name", "李娜": "name", "山田太郎": "name", "やまだ たろう": "name", "ジョン・スミス": "name",
	"김민준": "name", "박 지성": "name", "محمد علي": "name", "فاطمة": "name", "דוד כהן": "name",
	"राहुल शर्मा": "name", "प्रिया": "name", "สมชาย ใจดี": "name", "Иван Петров": "name", "ИванПетров": "name",
	"иван": "name", "Γιάννης Παπαδόπουλος": "name", "Μαρία": "name", "Ալեքսանդր": "name", "გიორგი": "name",
	"ΓΙΆΝΝΗΣ": "name", "Ivan　Petrov": "name",
	// Invisible characters that are not contact details are refused too.
	"usr_8f3k2\u200b": "invisible", "\u202eusr_1": "invisible", "u_1\ufe0f": "invisible", "u\u3164_1": "invisible",
	"u_\u2066123\u2069": "invisible", "\ufeffu_1": "invisible", "u_1\U000e0041": "invisible",
}

func TestValidateEndUserID(t *testing.T) {
	for _, id := range endUserAccept {
		if err := ValidateEndUserID(id); err != nil {
			t.Errorf("ValidateEndUserID(%q) = %v, want accepted", id, err)
		}
	}
	for id, want := range endUserReject {
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
	if n := len(endUserAccept) + len(endUserReject); n < 150 || len(endUserAccept) < 60 || len(endUserReject) < 90 {
		t.Fatalf("%d accepts and %d rejects; the issue asks for at least 150 cases in both directions", len(endUserAccept), len(endUserReject))
	}
}

func TestNormalizeEndUserID(t *testing.T) {
	cases := map[string]string{
		"ｕｓｒ＿８ｆ３ｋ２":               "usr_8f3k2",
		"maria﹫example。com":       "maria@example.com",
		"m\u200ba\u00adr\u2060ia": "maria",
		"+١ ٤١٥":                  "+1 415",
		"۰۹۱۲":                    "0912",
		"४१५–५५५":                 "415-555",
		"a\u00a0b\u3000c\u2009d":  "a b c d",
		"O’Brien":                 "O'Brien",
		"ジョン・スミス":                 "ジョン.スミス",
		"Zoe\u0308":               "Zoë",
		"𝟒𝟐":                      "42",
	}
	for in, want := range cases {
		if got := NormalizeEndUserID(in); got != want {
			t.Errorf("NormalizeEndUserID(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzEndUserID(f *testing.F) {
	for _, id := range endUserAccept {
		f.Add(id)
	}
	for id := range endUserReject {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := ValidateEndUserID(id)
		if err != nil && (err.Type != InvalidRequest || err.Status() != 400 || err.Message == "") {
			t.Fatalf("ValidateEndUserID(%q) = %+v, want an invalid_request with a message", id, err)
		}
		n := NormalizeEndUserID(id)
		if again := NormalizeEndUserID(n); again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", id, n, again)
		}
		for _, r := range n {
			if invisible(r) {
				t.Fatalf("NormalizeEndUserID(%q) = %q keeps invisible U+%04X", id, n, r)
			}
			if unicode.Is(unicode.Nd, r) && (r < '0' || r > '9') {
				t.Fatalf("NormalizeEndUserID(%q) = %q keeps a non-ASCII digit %q", id, n, r)
			}
		}
		if utf8.ValidString(id) && !utf8.ValidString(n) {
			t.Fatalf("NormalizeEndUserID(%q) = %q is not UTF-8", id, n)
		}
		if err != nil {
			return
		}
		// Anything accepted is accepted again in its normal form, which has
		// no "@", percent escape or phone shape left to hide.
		if len(n) <= maxEndUserIDLen {
			if err := ValidateEndUserID(n); err != nil {
				t.Fatalf("%q accepted but its normal form %q is refused: %v", id, n, err)
			}
		}
		if strings.ContainsRune(n, '@') || percentRe.MatchString(n) || looksLikePhone(n) || looksLikeName(n) {
			t.Fatalf("%q accepted though its normal form %q is contact-shaped", id, n)
		}
	})
}
