package pairing_test

import (
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/boltstore"
	"github.com/veraneural/vera-gateway/gateway/pairing"
)

var codeRe = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$`)

// TestPairingFlow walks the glasses' life: a code from the partner, one
// exchange, tokens bound to the end user and device, rotation on every
// refresh with a grace copy for a lost answer, and reuse detection.
func TestPairingFlow(t *testing.T) {
	h := newHarness(t, pairing.NewMemoryStore(), pairing.DefaultConfig())
	c := h.code(keyA, "u_7f3a", device)
	code := c.str("code")
	if !codeRe.MatchString(code) || !strings.HasPrefix(c.str("pairing_id"), "pair_") || c.str("device") != device ||
		c.str("end_user_id") != "u_7f3a" || c.body["ttl_seconds"] != float64(300) ||
		c.str("app_path") != "/glasses#pair="+strings.ReplaceAll(code, "-", "") {
		t.Fatalf("code response %v", c.body)
	}
	if exp, _ := time.Parse(time.RFC3339, c.str("expires_at")); !exp.Equal(h.clock.Now().Add(5 * time.Minute)) {
		t.Errorf("expires_at %s", c.str("expires_at"))
	}
	if c.header.Get("Cache-Control") != "no-store" {
		t.Errorf("code response cacheable: %q", c.header.Get("Cache-Control"))
	}
	// As written on the glasses: lower case, spaces, O for zero.
	typed := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(code, "-", " "), "0", "o"))
	ex := h.exchange(typed, device, "")
	if ex.status != http.StatusCreated {
		t.Fatalf("exchange %q: %d %v", typed, ex.status, ex.body)
	}
	if ex.str("pairing_id") != c.str("pairing_id") || !strings.HasPrefix(ex.str("refresh_token"), "vera_rt_") ||
		ex.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("exchange response %v %v", ex.body, ex.header)
	}
	cl := h.claims(ex.str("token"))
	if cl.Partner != "partner-a" || cl.Subject != "u_7f3a" || cl.Device != device ||
		!slices.Equal(cl.Scopes, []string{gateway.ScopeSessionsWrite}) || !cl.ExpiresAt.Equal(h.clock.Now().Add(time.Minute)) {
		t.Fatalf("token claims %+v", cl)
	}
	rt0 := ex.str("refresh_token")

	// The token lives a minute; the refresh credential gets another.
	h.clock.Advance(2 * time.Minute)
	if _, err := h.srv.Tokens().Verify(ex.str("token")); err == nil {
		t.Fatal("a two-minute-old token still verifies")
	}
	r1 := h.refresh(rt0, device)
	if r1.status != http.StatusOK || r1.str("refresh_token") == rt0 || r1.str("pairing_id") != c.str("pairing_id") {
		t.Fatalf("refresh: %d %v", r1.status, r1.body)
	}
	if cl := h.claims(r1.str("token")); cl.Subject != "u_7f3a" || cl.Device != device || cl.Partner != "partner-a" {
		t.Fatalf("refreshed claims %+v", cl)
	}
	if exp, _ := time.Parse(time.RFC3339, r1.str("refresh_expires_at")); !exp.Equal(h.clock.Now().Add(30 * 24 * time.Hour)) {
		t.Errorf("refresh_expires_at %s: the idle window slides from the last refresh", r1.str("refresh_expires_at"))
	}
	// The answer was lost on the way: the old credential still works
	// within the grace, once more.
	r1b := h.refresh(rt0, device)
	if r1b.status != http.StatusOK {
		t.Fatalf("refresh with the grace copy: %d %v", r1b.status, r1b.body)
	}
	rt1 := r1b.str("refresh_token")
	r2 := h.refresh(rt1, device)
	if r2.status != http.StatusOK {
		t.Fatalf("refresh with the newest: %d %v", r2.status, r2.body)
	}
	// Now the first one is retired: presenting it means a copy exists, and
	// the pairing ends for everyone.
	if r := h.refresh(rt0, device); r.status != http.StatusUnauthorized || !strings.Contains(r.errMsg(), "pairing has ended") {
		t.Fatalf("reuse of a retired credential: %d %v", r.status, r.body)
	}
	if r := h.refresh(r2.str("refresh_token"), device); r.status != http.StatusUnauthorized || r.errType() != "authentication_error" {
		t.Fatalf("refresh after the pairing ended: %d %v", r.status, r.body)
	}
	if got := h.counter("vera_pairing_refreshes_total", "reused"); got != 1 {
		t.Errorf("reused counter %v", got)
	}
}

// TestCodeRefusals: a code works once, for its device, within its life.
func TestCodeRefusals(t *testing.T) {
	checkCodeRefusals(t, newHarness(t, pairing.NewMemoryStore(), pairing.DefaultConfig()))
}

// checkCodeRefusals is TestCodeRefusals on h's code store.
func checkCodeRefusals(t *testing.T, h *harness) {
	cases := []struct {
		name     string
		setup    func() string // returns the code to present
		dev      string
		status   int
		contains string
	}{
		{"unknown", func() string { return "7KQM-2XWP" }, device, 401, "unknown pairing code"},
		{"malformed", func() string { return "12345" }, device, 400, "8 letters and digits"},
		{"expired", func() string {
			c := h.code(keyA, "u_exp_7", device).str("code")
			h.clock.Advance(5 * time.Minute)
			return c
		}, device, 401, "expired"},
		{"reused", func() string {
			c := h.code(keyA, "u_reuse_7", device).str("code")
			if r := h.exchange(c, device, "198.51.100.7:1"); r.status != 201 {
				t.Fatalf("first exchange %d %v", r.status, r.body)
			}
			return c
		}, device, 401, "already used"},
		{"wrong device", func() string { return h.code(keyA, "u_dev_7", device).str("code") }, "browser", 403, "another device"},
		{"replaced by a newer code", func() string {
			c := h.code(keyA, "u_new_7", device).str("code")
			h.code(keyA, "u_new_7", device)
			return c
		}, device, 401, "unknown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := c.setup()
			r := h.exchange(code, c.dev, "203.0.113."+string(rune('1'+len(c.name)%9))+":9")
			if r.status != c.status || !strings.Contains(r.errMsg(), c.contains) || r.str("token") != "" {
				t.Fatalf("%d %v, want %d containing %q", r.status, r.body, c.status, c.contains)
			}
			if c.name == "wrong device" {
				// A code shown to the wrong device is burnt.
				if r := h.exchange(code, device, "203.0.113.50:9"); r.status != 401 || !strings.Contains(r.errMsg(), "already used") {
					t.Fatalf("burnt code exchanged: %d %v", r.status, r.body)
				}
			}
		})
	}
}

func TestCreateRefusals(t *testing.T) {
	h := newHarness(t, pairing.NewMemoryStore(), pairing.DefaultConfig())
	tok, _, err := h.srv.Tokens().Issue("partner-a", "u_1", device, []string{gateway.ScopeSessionsWrite}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, key, body string
		status          int
		contains        string
	}{
		{"no key", "", `{"end_user_id":"u_1","device":"meta-rayban-display"}`, 401, "missing API key"},
		{"client token", tok, `{"end_user_id":"u_1","device":"meta-rayban-display"}`, 401, "client tokens are not accepted"},
		{"email as end user", keyA, `{"end_user_id":"sam@example.com","device":"meta-rayban-display"}`, 400, "email"},
		{"no device", keyA, `{"end_user_id":"u_1"}`, 400, "device is required"},
		{"unknown device", keyA, `{"end_user_id":"u_1","device":"toaster"}`, 400, "unknown device profile"},
		{"unknown field", keyA, `{"end_user_id":"u_1","device":"meta-rayban-display","ttl":5}`, 400, "ttl"},
	}
	for _, c := range cases {
		r := h.do("POST", "/v1/pairings", c.key, c.body, "")
		if r.status != c.status || !strings.Contains(r.errMsg(), c.contains) {
			t.Errorf("%s: %d %v, want %d containing %q", c.name, r.status, r.body, c.status, c.contains)
		}
	}
}

// TestRateLimited: guesses from one address stop at the limit; another
// address is unaffected.
func TestRateLimited(t *testing.T) {
	h := newHarness(t, pairing.NewMemoryStore(), pairing.DefaultConfig())
	for i := range 10 {
		if r := h.exchange("AAAA-AAA"+string(rune('0'+i)), device, "192.0.2.9:1"); r.status != 401 {
			t.Fatalf("guess %d: %d %v", i, r.status, r.body)
		}
	}
	r := h.exchange("AAAA-BBBB", device, "192.0.2.9:2")
	if r.status != http.StatusTooManyRequests || r.errType() != "rate_limited" || r.header.Get("Retry-After") == "" {
		t.Fatalf("11th guess: %d %v %v", r.status, r.body, r.header)
	}
	code := h.code(keyA, "u_ok_7", device).str("code")
	if r := h.exchange(code, device, "192.0.2.10:1"); r.status != 201 {
		t.Fatalf("another address: %d %v", r.status, r.body)
	}
	h.clock.Advance(time.Minute)
	if r := h.exchange("AAAA-BBBB", device, "192.0.2.9:3"); r.status != 401 {
		t.Fatalf("after a minute: %d %v", r.status, r.body)
	}
}

// TestRefreshRefusals: another device, a guessed secret, idle expiry and
// the partner ending the pairing.
func TestRefreshRefusals(t *testing.T) {
	h := newHarness(t, pairing.NewMemoryStore(), pairing.DefaultConfig())
	pair := func(endUser string) (id, rt string) {
		c := h.code(keyA, endUser, device)
		ex := h.exchange(c.str("code"), device, "")
		if ex.status != 201 {
			t.Fatalf("exchange: %d %v", ex.status, ex.body)
		}
		return ex.str("pairing_id"), ex.str("refresh_token")
	}

	_, rt := pair("u_a_7")
	if r := h.refresh(rt, "browser"); r.status != 403 || !strings.Contains(r.errMsg(), "another device") {
		t.Fatalf("another device: %d %v", r.status, r.body)
	}
	if r := h.refresh(rt, device); r.status != 401 {
		t.Fatalf("a credential shown to another device still works: %d %v", r.status, r.body)
	}

	// A guess at the secret of a real pairing fails and unpairs nobody.
	_, rt = pair("u_b_7")
	guess := rt[:len(rt)-64] + strings.Repeat("0", 64)
	if r := h.refresh(guess, device); r.status != 401 {
		t.Fatalf("guess: %d %v", r.status, r.body)
	}
	if r := h.refresh(rt, device); r.status != 200 {
		t.Fatalf("the guess ended the pairing: %d %v", r.status, r.body)
	}
	if r := h.refresh("vera_rt_nonsense", device); r.status != 401 || !strings.Contains(r.errMsg(), "not a refresh credential") {
		t.Fatalf("malformed: %d %v", r.status, r.body)
	}

	// Idle for longer than refresh_idle_days.
	_, rt = pair("u_c_7")
	h.clock.Advance(30*24*time.Hour + time.Second)
	if r := h.refresh(rt, device); r.status != 401 {
		t.Fatalf("idle pairing: %d %v", r.status, r.body)
	}

	// The partner ends a pairing; another partner cannot see it.
	id, rt := pair("u_d_7")
	if r := h.do("DELETE", "/v1/pairings/"+id, keyB, "", ""); r.status != 404 {
		t.Fatalf("another partner's delete: %d %v", r.status, r.body)
	}
	if r := h.refresh(rt, device); r.status != 200 {
		t.Fatalf("refresh after another partner's delete: %d %v", r.status, r.body)
	}
	if r := h.do("DELETE", "/v1/pairings/"+id, keyA, "", ""); r.status != 204 {
		t.Fatalf("delete: %d %v", r.status, r.body)
	}
	if r := h.refresh(rt, device); r.status != 401 {
		t.Fatalf("refresh after delete: %d %v", r.status, r.body)
	}
	// An unused code can be withdrawn too.
	c := h.code(keyA, "u_e_7", device)
	if r := h.do("DELETE", "/v1/pairings/"+c.str("pairing_id"), keyA, "", ""); r.status != 204 {
		t.Fatalf("withdraw a code: %d %v", r.status, r.body)
	}
	if r := h.exchange(c.str("code"), device, "198.51.100.200:1"); r.status != 401 {
		t.Fatalf("withdrawn code exchanged: %d %v", r.status, r.body)
	}
}

// TestPerEndUserBound: the sixth pairing of one end user ends the least
// recently refreshed one.
func TestPerEndUserBound(t *testing.T) {
	h := newHarness(t, pairing.NewMemoryStore(), pairing.DefaultConfig())
	var rts []string
	for i := range 6 {
		c := h.code(keyA, "u_many_7", device)
		ex := h.exchange(c.str("code"), device, "198.51.100."+string(rune('1'+i))+":1")
		if ex.status != 201 {
			t.Fatalf("exchange %d: %d %v", i, ex.status, ex.body)
		}
		rts = append(rts, ex.str("refresh_token"))
		h.clock.Advance(time.Second)
	}
	if r := h.refresh(rts[0], device); r.status != 401 {
		t.Errorf("the oldest pairing survived: %d", r.status)
	}
	for i, rt := range rts[1:] {
		if r := h.refresh(rt, device); r.status != 200 {
			t.Errorf("pairing %d: %d %v", i+1, r.status, r.body)
		}
	}
}

// TestBoltStoreSurvivesRestart: a pairing kept in the bbolt file works
// after the gateway restarts (a new service on the same file).
func TestBoltStoreSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gw.db")
	db, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pairing.NewBoltStore(db)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, pairing.DefaultConfig())
	ex := h.exchange(h.code(keyA, "u_bolt_7", device).str("code"), device, "")
	r := h.refresh(ex.str("refresh_token"), device)
	if r.status != 200 {
		t.Fatalf("refresh: %d %v", r.status, r.body)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err = pairing.NewBoltStore(db)
	if err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, st, pairing.DefaultConfig())
	// The gateway's token secret is random per process here; the refresh
	// credential is what survives.
	r2 := h2.refresh(r.str("refresh_token"), device)
	if r2.status != 200 || h2.claims(r2.str("token")).Subject != "u_bolt_7" {
		t.Fatalf("refresh after restart: %d %v", r2.status, r2.body)
	}
	// Reuse detection survives as well.
	if r3 := h2.refresh(ex.str("refresh_token"), device); r3.status != 401 {
		t.Fatalf("retired credential after restart: %d %v", r3.status, r3.body)
	}
	list, err := st.ByEndUser("partner-a", "u_bolt_7")
	if err != nil || len(list) != 0 {
		t.Fatalf("after reuse the pairing is gone: %v %v", list, err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := pairing.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := pairing.DefaultConfig()
	c.CodeTTLSeconds = 5
	c.MaxPerEndUser = 0
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "code_ttl_seconds") || !strings.Contains(err.Error(), "max_per_end_user") {
		t.Fatalf("validate: %v", err)
	}
	if _, err := pairing.New(pairing.DefaultConfig(), nil, pairing.Options{}); err == nil {
		t.Fatal("New without a store or issuer succeeded")
	}
}
