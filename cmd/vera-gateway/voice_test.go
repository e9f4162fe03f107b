package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway"
)

// TestVoiceSessionBelongsToItsPartner: through the wired gateway (keys, rtc
// and voice), another partner's PATCH or DELETE
// on a live voice session is 404, the owner's DELETE hangs up.
func TestVoiceSessionBelongsToItsPartner(t *testing.T) {
	const keyA, keyB = "vera_sk_owner_a_0123456789abcdef", "vera_sk_owner_b_0123456789abcdef"
	cfg := testFileConfig()
	cfg.Auth.Keys = []keyConfig{
		{KeyConfig: gateway.KeyConfig{ID: "a", Secret: keyA, Scopes: []string{gateway.ScopeSessionsWrite}}},
		{KeyConfig: gateway.KeyConfig{ID: "b", Secret: keyB, Scopes: []string{gateway.ScopeSessionsWrite}}},
	}
	_, srv := startApp(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: srv.URL + "/v1/voice/sessions", Token: keyA, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	loc := c.Location()
	if !strings.HasPrefix(loc, "/v1/voice/sessions/") && !strings.Contains(loc, "/v1/voice/sessions/") {
		t.Fatalf("Location %q", loc)
	}
	if !strings.HasPrefix(loc, "http") {
		loc = srv.URL + loc
	}
	do := func(method, key, ct string) int {
		req, _ := http.NewRequest(method, loc, strings.NewReader("a=ice-ufrag:x\r\n"))
		req.Header.Set("Authorization", "Bearer "+key)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := do("PATCH", keyB, "application/trickle-ice-sdpfrag"); s != 404 {
		t.Fatalf("other partner's PATCH = %d, want 404", s)
	}
	if s := do("DELETE", keyB, ""); s != 404 {
		t.Fatalf("other partner's DELETE = %d, want 404", s)
	}
	if s := do("DELETE", keyA, ""); s != 200 && s != 204 {
		t.Fatalf("owner's DELETE = %d", s)
	}
	if s := do("DELETE", keyA, ""); s != 404 {
		t.Fatalf("DELETE after hang-up = %d, want 404", s)
	}

	// Admission: at the limit a new session is refused with 503 and
	// Retry-After, before any WebRTC work.
	cfg.Admission.MaxVoiceSessions = 1
	_, srv = startApp(t, cfg)
	c2, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: srv.URL + "/v1/voice/sessions", Token: keyA, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(context.Background())
	_, err = fixtures.Dial(ctx, fixtures.ClientOptions{URL: srv.URL + "/v1/voice/sessions", Token: keyB, LoopbackOnly: true})
	var he *fixtures.HTTPError
	if !errors.As(err, &he) || he.Status != 503 {
		t.Fatalf("over the limit: %v, want HTTP 503", err)
	}
}
