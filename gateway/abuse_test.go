package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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

// TestAbuseJSONBodiesBoundedAndUnambiguous: every JSON body's shape is
// bounded before it is decoded, and a body that could mean two things —
// a key given twice (encoding/json keeps the last: a proxy or a log that
// reads the first sees another request), keys that differ only in case, a
// field spelled in another case — is refused with 400 naming the key.
func TestAbuseJSONBodiesBoundedAndUnambiguous(t *testing.T) {
	ts := newTestServer(t, testConfig())
	deep := strings.Repeat(`{"a":`, MaxJSONDepth+1) + "1" + strings.Repeat("}", MaxJSONDepth+1)
	wide := `{"text":"x","count":1,"extra":[` + strings.TrimSuffix(strings.Repeat("0,", MaxJSONValues+1), ",") + `]}`
	attacks := map[string]string{
		`{"end_user_id":"usr_1","end_user_id":"usr_2","device":"phone"}`:   `"end_user_id" twice`,
		`{"end_user_id":"usr_1","End_User_Id":"usr_2","device":"phone"}`:   "differ only in case",
		`{"END_USER_ID":"usr_1","device":"phone"}`:                         `must be spelled "end_user_id"`,
		`{"end_user_id":"usr_1","\u0064evice":"phone","device":"glasses"}`: `"device" twice`,
		deep: "nested deeper than 64",
	}
	for body, want := range attacks {
		r := ts.do(t, "POST", "/v1/client_tokens", keyA, body)
		if r.status != 400 || !strings.Contains(r.envelope(t).Message, want) {
			t.Errorf("body %.60q: %d %s, want 400 naming %q", body, r.status, r.body, want)
		}
	}
	if r := ts.do(t, "POST", "/v1/echo", keyA, wide); r.status != 400 || !strings.Contains(r.envelope(t).Message, "more than 10000 JSON values") {
		t.Errorf("10,001 values: %d %s, want 400", r.status, r.body)
	}
	// Repeated keys in different objects are fine; so is the exact spelling.
	if r := ts.do(t, "POST", "/v1/client_tokens", keyA, `{"end_user_id":"usr_1","device":"phone"}`); r.status != 201 {
		t.Errorf("plain body: %d %s", r.status, r.body)
	}
}

// TestAbusePartnerKeyOutsideAuthorizationHeader: a partner key in a query
// parameter or websocket subprotocol (where logs, browser history and
// referrers keep it) is refused even though it is valid; a client token
// there is fine.
func TestAbusePartnerKeyOutsideAuthorizationHeader(t *testing.T) {
	ts := newTestServer(t, testConfig())
	ts.Mount(Route{Method: "GET", Path: "/v1/ws", Scope: ScopeSessionsWrite, AllowClientToken: true, Upgrade: true, MaxBodyBytes: -1,
		Token: func(r *http.Request) string { return r.URL.Query().Get("token") },
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := PrincipalFrom(r.Context())
			WriteJSON(w, http.StatusOK, p)
		})})
	r := ts.do(t, "GET", "/v1/ws?token="+keyA, "", "")
	if r.status != 401 || !strings.Contains(r.envelope(t).Message, "only client tokens") {
		t.Fatalf("partner key in ?token= = %d %s, want 401", r.status, r.body)
	}
	tok := ts.do(t, "POST", "/v1/client_tokens", keyA, `{"end_user_id":"usr_1","device":"phone"}`)
	var ct clientTokenResponse
	_ = json.Unmarshal(tok.body, &ct)
	if r := ts.do(t, "GET", "/v1/ws?token="+ct.Token, "", ""); r.status != 200 {
		t.Fatalf("client token in ?token= = %d %s", r.status, r.body)
	}
}

// TestAbuseDevModeFromAWebPage: in dev mode (no keys) a page in the
// developer's browser is the attacker. A DNS-rebound Host is refused, and
// so is a state-changing request a page could send cross-site without a
// preflight (no type, text/plain, a form); typed requests pass.
func TestAbuseDevModeFromAWebPage(t *testing.T) {
	ts := newTestServer(t, DefaultConfig())
	for _, host := range []string{"evil.example:8080", "127.0.0.1.nip.io:8080", "localhost.evil.example", "0.0.0.0:8080"} {
		r := ts.do(t, "GET", "/healthz", "", "", "Host", host)
		if r.status != 403 || !strings.Contains(r.envelope(t).Message, "loopback Host") {
			t.Errorf("Host %q = %d %s, want 403", host, r.status, r.body)
		}
	}
	for _, host := range []string{"localhost:8080", "127.0.0.1:8080", "[::1]:8080", "app.localhost:8080", "LOCALHOST"} {
		if r := ts.do(t, "GET", "/healthz", "", "", "Host", host); r.status != 200 {
			t.Errorf("Host %q = %d, want 200", host, r.status)
		}
	}
	for _, ct := range []string{"", "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req := httptest.NewRequest("POST", "/v1/echo", strings.NewReader(`{"text":"x"}`))
		req.RemoteAddr, req.Host = "127.0.0.1:40000", "localhost:8080"
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		rec := httptest.NewRecorder()
		ts.Handler().ServeHTTP(rec, req)
		if rec.Code != 415 {
			t.Errorf("dev mode POST with Content-Type %q = %d %s, want 415", ct, rec.Code, rec.Body)
		}
	}
	if ts.calls != 0 {
		t.Fatalf("a refused cross-site request reached the handler (%d calls)", ts.calls)
	}
	if r := ts.do(t, "POST", "/v1/echo", "", `{"text":"x"}`); r.status != 201 {
		t.Fatalf("dev mode JSON POST = %d %s", r.status, r.body)
	}
	// With keys, Bearer auth already needs a preflight; Host is not checked.
	keyed := newTestServer(t, testConfig())
	if r := keyed.do(t, "GET", "/healthz", "", "", "Host", "api.example.com"); r.status != 200 {
		t.Fatalf("keyed Host = %d", r.status)
	}
}

// TestAbuseIdempotencyCapacityPerPartner: one partner's burst of
// Idempotency-Keys once evicted another's from a shared FIFO, so the
// other's retry ran twice. Capacity is per partner now: after partner a
// fills its own, partner b's stored response still replays.
func TestAbuseIdempotencyCapacityPerPartner(t *testing.T) {
	cfg := testConfig()
	cfg.Idempotency.MaxEntries = 5
	cfg.Limits.RequestsPerMinute = 1000
	cfg.Limits.PerEndUserRPM = 1000
	ts := newTestServer(t, cfg)
	if r := ts.do(t, "POST", "/v1/echo", keyB, `{"text":"b"}`, "Idempotency-Key", "b-1"); r.status != 201 {
		t.Fatalf("b's first = %d", r.status)
	}
	for i := 0; i < 50; i++ {
		ts.do(t, "POST", "/v1/echo", keyA, `{"text":"a"}`, "Idempotency-Key", "a-"+strings.Repeat("x", i+1))
	}
	calls := ts.calls
	r := ts.do(t, "POST", "/v1/echo", keyB, `{"text":"b"}`, "Idempotency-Key", "b-1")
	if r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" || ts.calls != calls {
		t.Fatalf("b's retry after a's burst = %d replayed=%q (handler ran %d more times), want the stored response",
			r.status, r.header.Get("Idempotent-Replayed"), ts.calls-calls)
	}
}

// TestAbuseMetricsNameNoPartner: /metrics is public (no scope); its labels
// never carry a partner id, an end user id or a raw path, however the
// partners used the gateway.
func TestAbuseMetricsNameNoPartner(t *testing.T) {
	ts := newTestServer(t, testConfig())
	ts.do(t, "POST", "/v1/echo", keyA, `{"text":"x"}`)
	ts.do(t, "POST", "/v1/client_tokens", keyB, `{"end_user_id":"usr_secret_77","device":"phone"}`)
	ts.do(t, "GET", "/v1/nope/partner-a", keyA, "")
	r := ts.do(t, "GET", "/metrics", "", "")
	if r.status != 200 {
		t.Fatalf("/metrics = %d", r.status)
	}
	for _, s := range []string{"partner-a", "partner-b", "usr_secret_77", "/v1/nope"} {
		if strings.Contains(string(r.body), s) {
			t.Errorf("/metrics names %q", s)
		}
	}
}
