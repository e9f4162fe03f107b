package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
)

const (
	keyA = "vera_sk_test_partner_a_0123456789"
	keyB = "vera_sk_test_partner_b_0123456789"
	keyC = "vera_sk_test_partner_c_audit_only"
)

func newFakeClock() *clocktest.Clock {
	return clocktest.NewClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.Auth.Keys = []KeyConfig{
		{ID: "partner-a", Secret: keyA, Scopes: AllScopes},
		{ID: "partner-b", Secret: keyB, Scopes: AllScopes},
		{ID: "partner-c", Secret: keyC, Scopes: []string{ScopeAuditRead}},
	}
	return cfg
}

type testServer struct {
	*Server
	clock *clocktest.Clock
	calls int
	mu    sync.Mutex
}

// newTestServer mounts /v1/echo (conversations:write, idempotent, echoes the
// decoded body and counts calls), /v1/device (client tokens allowed) and
// /v1/fail (always 502).
func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	ts := &testServer{clock: newFakeClock()}
	s, err := New(cfg, Options{Clock: ts.clock})
	if err != nil {
		t.Fatal(err)
	}
	ts.Server = s
	s.Mount(Route{Method: "POST", Path: "/v1/echo", Scope: ScopeConversationsWrite, Idempotent: true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Text  string `json:"text"`
				Count int    `json:"count"`
			}
			if err := DecodeJSON(r, &body); err != nil {
				WriteError(w, r, err)
				return
			}
			ts.mu.Lock()
			ts.calls++
			n := ts.calls
			ts.mu.Unlock()
			WriteJSON(w, http.StatusCreated, map[string]any{"text": body.Text, "call": n})
		})})
	s.Mount(Route{Method: "POST", Path: "/v1/device", Scope: ScopeSessionsWrite, AllowClientToken: true, CreatesSession: true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := PrincipalFrom(r.Context())
			WriteJSON(w, http.StatusOK, p)
		})})
	s.Mount(Route{Method: "POST", Path: "/v1/fail", Scope: ScopeConversationsWrite, Idempotent: true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ts.mu.Lock()
			ts.calls++
			ts.mu.Unlock()
			WriteError(w, r, Errorf(EngineUnavailable, "engine down"))
		})})
	return ts
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) envelope(t *testing.T) envelopeBody {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("body %q is not an error envelope: %v", r.body, err)
	}
	if e.Error.RequestID == "" || e.Error.RequestID != r.header.Get("X-Request-Id") {
		t.Fatalf("envelope request_id %q does not match X-Request-Id %q", e.Error.RequestID, r.header.Get("X-Request-Id"))
	}
	return e.Error
}

func (ts *testServer) do(t *testing.T, method, path, key string, body string, hdr ...string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Host = "localhost:8080"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "RemoteAddr" {
			req.RemoteAddr = hdr[i+1]
			continue
		}
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	ts.Handler().ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return response{status: rec.Code, header: rec.Result().Header, body: b}
}

func TestHealthReadyAndDrain(t *testing.T) {
	ts := newTestServer(t, testConfig())
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := ts.do(t, "GET", p, "", ""); r.status != 200 {
			t.Fatalf("%s = %d", p, r.status)
		}
	}
	ts.StartDrain()
	if r := ts.do(t, "GET", "/readyz", "", ""); r.status != 503 {
		t.Fatalf("readyz while draining = %d, want 503", r.status)
	}
	if r := ts.do(t, "GET", "/healthz", "", ""); r.status != 200 {
		t.Fatalf("healthz while draining = %d, want 200", r.status)
	}
	r := ts.do(t, "POST", "/v1/device", keyA, "{}")
	if r.status != 503 || r.header.Get("Retry-After") == "" || r.envelope(t).Type != Unavailable {
		t.Fatalf("new session while draining = %d %s, want 503 unavailable with Retry-After", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"hi"}`); r.status != 201 {
		t.Fatalf("non-session route while draining = %d, want 201", r.status)
	}
}

func TestRequestIDAndVersion(t *testing.T) {
	ts := newTestServer(t, testConfig())
	r := ts.do(t, "GET", "/nope", "", "", "X-Request-Id", "trace-abc_123")
	if r.status != 404 || r.header.Get("X-Request-Id") != "trace-abc_123" {
		t.Fatalf("404 = %d, request id %q", r.status, r.header.Get("X-Request-Id"))
	}
	if e := r.envelope(t); e.Type != NotFound {
		t.Fatalf("type %q", e.Type)
	}
	if r.header.Get("VERA-Version") != DefaultConfig().APIVersion {
		t.Fatalf("VERA-Version = %q", r.header.Get("VERA-Version"))
	}
	r = ts.do(t, "GET", "/healthz", "", "", "X-Request-Id", "bad id with spaces <script>")
	if id := r.header.Get("X-Request-Id"); !strings.HasPrefix(id, "req_") {
		t.Fatalf("invalid caller id was echoed: %q", id)
	}
	r = ts.do(t, "DELETE", "/healthz", "", "")
	if r.status != 405 {
		t.Fatalf("wrong method = %d, want 405", r.status)
	}
	r.envelope(t)
}

func TestAuth(t *testing.T) {
	ts := newTestServer(t, testConfig())
	cases := []struct {
		name, key, auth string
		status          int
		typ             ErrorType
		msg             string
	}{
		{"missing key", "", "", 401, AuthenticationError, "missing API key"},
		{"wrong key", "vera_sk_wrong_wrong_wrong_wrong", "", 401, AuthenticationError, "invalid API key"},
		{"basic auth", "", "Basic dXNlcjpwYXNz", 401, AuthenticationError, "Bearer"},
		{"missing scope", keyC, "", 403, PermissionError, "conversations:write"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.auth != "" {
				hdr = []string{"Authorization", c.auth}
			}
			r := ts.do(t, "POST", "/v1/echo", c.key, `{"text":"x"}`, hdr...)
			e := r.envelope(t)
			if r.status != c.status || e.Type != c.typ || !strings.Contains(e.Message, c.msg) {
				t.Fatalf("got %d %+v, want %d %s containing %q", r.status, e, c.status, c.typ, c.msg)
			}
		})
	}
	if r := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"x"}`); r.status != 201 {
		t.Fatalf("valid key = %d %s", r.status, r.body)
	}
}

func TestDevMode(t *testing.T) {
	ts := newTestServer(t, DefaultConfig())
	if r := ts.do(t, "POST", "/v1/echo", "", `{"text":"x"}`); r.status != 201 {
		t.Fatalf("dev mode loopback = %d %s", r.status, r.body)
	}
	r := ts.do(t, "POST", "/v1/echo", "", `{"text":"x"}`, "RemoteAddr", "192.0.2.7:5555")
	if r.status != 401 || !strings.Contains(r.envelope(t).Message, "loopback") {
		t.Fatalf("dev mode remote = %d %s", r.status, r.body)
	}
	cfg := DefaultConfig()
	cfg.Listen = "0.0.0.0:8080"
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "listen") || !strings.Contains(err.Error(), "auth.keys") {
		t.Fatalf("dev mode on a public address: %v", err)
	}
}

func TestConfigValidateNamesKey(t *testing.T) {
	cases := map[string]func(*Config){
		"limits.requests_per_minute": func(c *Config) { c.Limits.RequestsPerMinute = 0 },
		"limits.body_bytes":          func(c *Config) { c.Limits.BodyBytes = 10 },
		"auth.keys[0].scopes":        func(c *Config) { c.Auth.Keys = []KeyConfig{{ID: "a", Secret: keyA, Scopes: []string{"root"}}} },
		"auth.keys[0].secret_env":    func(c *Config) { c.Auth.Keys = []KeyConfig{{ID: "a", SecretEnv: "X", Scopes: AllScopes}} },
		"auth.keys[1].id": func(c *Config) {
			c.Auth.Keys = []KeyConfig{{ID: "a", Secret: keyA, Scopes: AllScopes}, {ID: "a", Secret: keyB, Scopes: AllScopes}}
		},
		"debug_listen":           func(c *Config) { c.DebugListen = "0.0.0.0:6060" },
		"auth.token_ttl_seconds": func(c *Config) { c.Auth.TokenTTLSeconds = 601 },
		"listen":                 func(c *Config) { c.Listen = "nonsense" },
	}
	for key, mutate := range cases {
		cfg := DefaultConfig()
		mutate(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("%s: Validate() = %v, want an error naming the key", key, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
}

func TestStrictJSON(t *testing.T) {
	ts := newTestServer(t, testConfig())
	cases := []struct{ body, msg string }{
		{`{"text":`, "malformed JSON"},
		{`{"text":"a",}`, "malformed JSON"},
		{`{"text":"a","extra":1}`, `unknown field "extra"`},
		{`{"text":"a"} {"text":"b"}`, "data after the JSON object"},
		{`{"text":5}`, `field "text" must be a string`},
		{`{"count":"many"}`, `field "count" must be an integer`},
		{`[1,2]`, "must be a JSON object"},
		{``, "empty"},
	}
	for _, c := range cases {
		r := ts.do(t, "POST", "/v1/echo", keyA, c.body, "Content-Type", "application/json")
		e := r.envelope(t)
		if r.status != 400 || e.Type != InvalidRequest || !strings.Contains(e.Message, c.msg) {
			t.Errorf("body %q: %d %+v, want 400 mentioning %q", c.body, r.status, e, c.msg)
		}
	}
	r := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"a"}`, "Content-Type", "text/plain")
	if r.status != 415 {
		t.Errorf("text/plain = %d, want 415", r.status)
	}
}

func TestBodyLimit(t *testing.T) {
	ts := newTestServer(t, testConfig())
	big := `{"text":"` + strings.Repeat("a", 70*1024) + `"}`
	r := ts.do(t, "POST", "/v1/echo", keyA, big)
	if r.status != 413 || r.envelope(t).Type != InvalidRequest {
		t.Fatalf("70 KB body = %d %s, want 413", r.status, r.body)
	}
	// Without Content-Length (chunked) the limit still holds while reading.
	req := httptest.NewRequest("POST", "/v1/echo", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.RemoteAddr = "127.0.0.1:1"
	req.Header.Set("Authorization", "Bearer "+keyA)
	rec := httptest.NewRecorder()
	ts.Handler().ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Fatalf("chunked 70 KB body = %d %s, want 413", rec.Code, rec.Body)
	}
}

func TestRateLimit(t *testing.T) {
	ts := newTestServer(t, testConfig())
	for i := 1; i <= 60; i++ {
		if r := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"x"}`); r.status != 201 {
			t.Fatalf("request %d = %d", i, r.status)
		}
	}
	r := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"x"}`)
	if r.status != 429 || r.envelope(t).Type != RateLimited || r.header.Get("Retry-After") != "1" {
		t.Fatalf("61st = %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Another key is not affected.
	if r := ts.do(t, "POST", "/v1/echo", keyB, `{"text":"x"}`); r.status != 201 {
		t.Fatalf("other key = %d", r.status)
	}
	ts.clock.Advance(time.Second)
	if r := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"x"}`); r.status != 201 {
		t.Fatalf("after Retry-After = %d", r.status)
	}
}

func TestIdempotency(t *testing.T) {
	ts := newTestServer(t, testConfig())
	first := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"hello"}`, "Idempotency-Key", "k1")
	again := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"hello"}`, "Idempotency-Key", "k1")
	if first.status != 201 || again.status != 201 || !bytes.Equal(first.body, again.body) {
		t.Fatalf("replay differs: %d %s vs %d %s", first.status, first.body, again.status, again.body)
	}
	if again.header.Get("Idempotent-Replayed") != "true" || ts.calls != 1 {
		t.Fatalf("handler ran %d times, replay header %q", ts.calls, again.header.Get("Idempotent-Replayed"))
	}
	conflict := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"other"}`, "Idempotency-Key", "k1")
	if conflict.status != 409 || conflict.envelope(t).Type != Conflict {
		t.Fatalf("different body = %d %s", conflict.status, conflict.body)
	}
	// Keys are per partner: partner B's k1 is a new request.
	if r := ts.do(t, "POST", "/v1/echo", keyB, `{"text":"other"}`, "Idempotency-Key", "k1"); r.status != 201 || ts.calls != 2 {
		t.Fatalf("other partner's key = %d, calls %d", r.status, ts.calls)
	}
	// 5xx releases the key: the retry runs again.
	ts.do(t, "POST", "/v1/fail", keyA, `{}`, "Idempotency-Key", "k2")
	ts.do(t, "POST", "/v1/fail", keyA, `{}`, "Idempotency-Key", "k2")
	if ts.calls != 4 {
		t.Fatalf("5xx was replayed instead of retried: calls %d", ts.calls)
	}
	// After 24 h the key is forgotten.
	ts.clock.Advance(24*time.Hour + time.Second)
	if r := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"other"}`, "Idempotency-Key", "k1"); r.status != 201 || ts.calls != 5 {
		t.Fatalf("expired key = %d, calls %d", r.status, ts.calls)
	}
}

func TestIdempotencyStoreBounded(t *testing.T) {
	clock := newFakeClock()
	ctx := context.Background()
	s := NewMemoryIdempotencyStore(time.Hour, 3, clock)
	key := func(partner, k string) IdempotencyKey {
		return IdempotencyKey{Partner: partner, Scope: "POST /v1/echo", Key: k}
	}
	if _, err := s.Begin(ctx, key("b", "kept"), [32]byte{1}); err != nil {
		t.Fatal(err)
	}
	_ = s.Complete(ctx, key("b", "kept"), StoredResponse{Status: 200})
	for i := 0; i < 10; i++ {
		k := key("a", fmt.Sprint(i))
		if _, err := s.Begin(ctx, k, [32]byte{1}); err != nil {
			t.Fatal(err)
		}
		_ = s.Complete(ctx, k, StoredResponse{Status: 200})
	}
	if s.Len("a") != 3 {
		t.Fatalf("partner a holds %d entries, want at most 3", s.Len("a"))
	}
	if _, err := s.Begin(ctx, key("a", "9"), [32]byte{2}); err != ErrIdempotencyMismatch {
		t.Fatalf("newest key lost: %v", err)
	}
	// Partner a's ten keys evicted only its own: b's key still replays.
	if r, err := s.Begin(ctx, key("b", "kept"), [32]byte{1}); err != nil || r == nil || r.Status != 200 {
		t.Fatalf("partner b's key after a's burst = %v, %v; want its stored response", r, err)
	}
	if _, err := s.Begin(ctx, key("a", "x"), [32]byte{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(ctx, key("a", "x"), [32]byte{1}); err != ErrIdempotencyInFlight {
		t.Fatalf("in-flight key: %v", err)
	}
	// The same header value on another route or of another partner is
	// another key.
	if r, err := s.Begin(ctx, IdempotencyKey{Partner: "a", Scope: "POST /v1/other", Key: "x"}, [32]byte{9}); err != nil || r != nil {
		t.Fatalf("other scope = %v, %v", r, err)
	}
}

func TestClientTokens(t *testing.T) {
	ts := newTestServer(t, testConfig())
	r := ts.do(t, "POST", "/v1/client_tokens", keyA, `{"end_user_id":"u_42","device":"meta-rayban-display","ttl_seconds":120}`)
	if r.status != 201 {
		t.Fatalf("mint = %d %s", r.status, r.body)
	}
	var tok clientTokenResponse
	if err := json.Unmarshal(r.body, &tok); err != nil || tok.Token == "" {
		t.Fatalf("token response %s", r.body)
	}
	if want := ts.clock.Now().Add(120 * time.Second).Format(time.RFC3339); tok.ExpiresAt != want {
		t.Fatalf("expires_at %s, want %s", tok.ExpiresAt, want)
	}
	r = ts.do(t, "POST", "/v1/device", tok.Token, `{}`)
	var p Principal
	_ = json.Unmarshal(r.body, &p)
	if r.status != 200 || p.PartnerID != "partner-a" || p.EndUserID != "u_42" || p.Device != "meta-rayban-display" || p.Via != "token" {
		t.Fatalf("token use = %d %s", r.status, r.body)
	}
	// Partner-only routes refuse tokens; tokens cannot mint tokens.
	if r := ts.do(t, "POST", "/v1/echo", tok.Token, `{"text":"x"}`); r.status != 401 {
		t.Fatalf("token on partner route = %d", r.status)
	}
	if r := ts.do(t, "POST", "/v1/client_tokens", tok.Token, `{"end_user_id":"u_1","device":"phone"}`); r.status != 401 {
		t.Fatalf("token minting = %d %s", r.status, r.body)
	}
	// Tampered: flip a character of the signature.
	bad := tok.Token[:len(tok.Token)-2] + string("AB"[len(tok.Token)%2]) + "A"
	if r := ts.do(t, "POST", "/v1/device", bad, `{}`); r.status != 401 || !strings.Contains(r.envelope(t).Message, "invalid client token") {
		t.Fatalf("tampered = %d %s", r.status, r.body)
	}
	// Signed by another gateway's secret.
	other, _, _ := NewTokenIssuer("", ts.clock).Issue("partner-a", "u_42", "phone", []string{ScopeSessionsWrite}, time.Minute)
	if r := ts.do(t, "POST", "/v1/device", other, `{}`); r.status != 401 {
		t.Fatalf("foreign signature = %d", r.status)
	}
	ts.clock.Advance(121 * time.Second)
	r = ts.do(t, "POST", "/v1/device", tok.Token, `{}`)
	if r.status != 401 || !strings.Contains(r.envelope(t).Message, "expired") {
		t.Fatalf("expired = %d %s", r.status, r.body)
	}
	for body, want := range map[string]string{
		`{"end_user_id":"jane@example.com","device":"phone"}`:      "email",
		`{"end_user_id":"u_1","device":"phone","ttl_seconds":601}`: "ttl_seconds",
		`{"end_user_id":"u_1"}`:                                    "device",
	} {
		r := ts.do(t, "POST", "/v1/client_tokens", keyA, body)
		if r.status != 400 || !strings.Contains(r.envelope(t).Message, want) {
			t.Errorf("%s = %d %s, want 400 naming %s", body, r.status, r.body, want)
		}
	}
}

func TestWrongAudienceToken(t *testing.T) {
	clock := newFakeClock()
	iss := NewTokenIssuer(strings.Repeat("s", 32), clock)
	tok, _, err := iss.Issue("p", "u_1", "phone", nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, e := iss.Verify(tok); e != nil {
		t.Fatalf("valid token refused: %v", e)
	}
	// Re-sign the same claims with another audience.
	c, _ := iss.Verify(tok)
	c.Audience = []string{"someone-else"}
	forged := signClaims(t, iss, c)
	if _, e := iss.Verify(forged); e == nil || !strings.Contains(e.Message, "audience") {
		t.Fatalf("wrong audience: %v", e)
	}
}

func TestMetricsExposed(t *testing.T) {
	ts := newTestServer(t, testConfig())
	ts.do(t, "GET", "/healthz", "", "")
	r := ts.do(t, "GET", "/metrics", "", "")
	if r.status != 200 || !bytes.Contains(r.body, []byte("vera_http_requests_total")) || !bytes.Contains(r.body, []byte("process_cpu_seconds_total")) {
		t.Fatalf("metrics = %d, missing series:\n%.500s", r.status, r.body)
	}
}

// TestRateLimitScopes: client tokens count per end user, not against the
// partner key's budget; dev mode is not limited.
func TestRateLimitScopes(t *testing.T) {
	ts := newTestServer(t, testConfig())
	mint := func(user string) string {
		r := ts.do(t, "POST", "/v1/client_tokens", keyB, `{"end_user_id":"`+user+`","device":"phone"}`)
		var tok clientTokenResponse
		if err := json.Unmarshal(r.body, &tok); err != nil || r.status != 201 {
			t.Fatalf("mint = %d %s", r.status, r.body)
		}
		return tok.Token
	}
	u1, u2, u3 := mint("u_1"), mint("u_2"), mint("u_3") // 3 of partner b's 60
	for i := 0; i < 20; i++ {
		if r := ts.do(t, "POST", "/v1/device", u1, `{}`); r.status != 200 {
			t.Fatalf("u_1 request %d = %d", i+1, r.status)
		}
	}
	// u_1's own bucket (20 a minute) is empty: the 21st waits 3 s for the
	// next token, exactly.
	r := ts.do(t, "POST", "/v1/device", u1, `{}`)
	if r.status != 429 || r.header.Get("Retry-After") != "3" || !strings.Contains(r.envelope(t).Message, "end user") {
		t.Fatalf("u_1's 21st = %d Retry-After %q %s, want 429 after 3 s naming the end user", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Another end user of the same partner still has its own bucket.
	for i := 0; i < 20; i++ {
		if r := ts.do(t, "POST", "/v1/device", u2, `{}`); r.status != 200 {
			t.Fatalf("u_2 request %d = %d", i+1, r.status)
		}
	}
	// 43 of the partner's 60 are spent (3 mints, 40 by its tokens; the
	// refused request took nothing): 17 left for everyone of partner b.
	for i := 0; i < 17; i++ {
		if r := ts.do(t, "POST", "/v1/device", u3, `{}`); r.status != 200 {
			t.Fatalf("u_3 request %d = %d", i+1, r.status)
		}
	}
	r = ts.do(t, "POST", "/v1/echo", keyB, `{"text":"x"}`)
	if r.status != 429 || r.header.Get("Retry-After") != "1" || !strings.Contains(r.envelope(t).Message, "partner key") {
		t.Fatalf("the partner key after its tokens spent its budget = %d %q %s, want 429 naming the partner key", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Partner a is untouched.
	if r := ts.do(t, "POST", "/v1/echo", keyA, `{"text":"x"}`); r.status != 201 {
		t.Fatalf("another partner = %d, want 201", r.status)
	}

	dev := newTestServer(t, DefaultConfig())
	for i := 0; i < 100; i++ {
		if r := dev.do(t, "POST", "/v1/echo", "", `{"text":"x"}`); r.status != 201 {
			t.Fatalf("dev mode request %d = %d", i+1, r.status)
		}
	}
}
