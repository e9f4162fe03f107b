package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/router"
)

const (
	routeKey      = "vera_sk_test_partner_a_0123456789"
	routeAuditKey = "vera_sk_test_partner_c_audit_only"
)

// oneshotServer is the edge with POST /v1/oneshot mounted on o.
func oneshotServer(t *testing.T, o router.Oneshotter) http.Handler {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.Auth.Keys = []gateway.KeyConfig{
		{ID: "partner-a", Secret: routeKey, Scopes: gateway.AllScopes},
		{ID: "partner-c", Secret: routeAuditKey, Scopes: []string{gateway.ScopeAuditRead}},
	}
	s, err := gateway.New(cfg, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount(router.OneshotRoute(o, cfg.Limits, nil))
	return s.Handler()
}

type routeResponse struct {
	status int
	body   []byte
}

func (r routeResponse) envelope(t *testing.T) (typ gateway.ErrorType, msg string) {
	t.Helper()
	var e struct {
		Error struct {
			Type      gateway.ErrorType `json:"type"`
			Message   string            `json:"message"`
			RequestID string            `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error.RequestID == "" {
		t.Fatalf("not an envelope (%v): %s", err, r.body)
	}
	return e.Error.Type, e.Error.Message
}

func post(t *testing.T, h http.Handler, key, body string, hdr ...string) routeResponse {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/oneshot", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return routeResponse{status: rec.Code, body: rec.Body.Bytes()}
}

type fakeOneshot struct {
	got router.OneshotRequest
	err error
}

func (f *fakeOneshot) Oneshot(_ context.Context, req router.OneshotRequest) (router.OneshotResponse, error) {
	f.got = req
	if f.err != nil {
		return router.OneshotResponse{}, f.err
	}
	return router.OneshotResponse{Text: "reply to " + req.Messages[len(req.Messages)-1].Text, Model: "m2", Provider: "openai"}, nil
}

func TestOneshotRoute(t *testing.T) {
	f := &fakeOneshot{}
	h := oneshotServer(t, f)

	r := post(t, h, routeKey, `{"assignment":"snappy","messages":[{"role":"user","text":"hi"}],"maxTokens":20}`, "Idempotency-Key", "one-1")
	if r.status != 200 || !strings.Contains(string(r.body), `"text":"reply to hi"`) || !strings.Contains(string(r.body), `"model":"m2"`) {
		t.Fatalf("oneshot = %d %s", r.status, r.body)
	}
	if f.got.Assignment != "snappy" || f.got.MaxTokens != 20 || f.got.IdempotencyKey != "one-1" {
		t.Fatalf("request passed as %+v", f.got)
	}

	bad := map[string]string{
		`{"messages":[{"role":"user","text":"hi"}]}`:                                                      "assignment",
		`{"assignment":"snappy","messages":[]}`:                                                           "messages",
		`{"assignment":"snappy","messages":[{"role":"robot","text":"hi"}]}`:                               "messages[0].role",
		`{"assignment":"snappy","messages":[{"role":"user","text":"  "}]}`:                                "messages[0].text",
		`{"assignment":"snappy","messages":[{"role":"user","text":"hi"}],"x":1}`:                          "unknown field",
		`{"assignment":"snappy","messages":[{"role":"user","text":"` + strings.Repeat("a", 8001) + `"}]}`: "at most 8000",
	}
	for body, want := range bad {
		r := post(t, h, routeKey, body)
		if _, msg := r.envelope(t); r.status != 400 || !strings.Contains(msg, want) {
			t.Errorf("%.60s: %d %s, want 400 naming %q", body, r.status, r.body, want)
		}
	}
	if r := post(t, h, routeAuditKey, `{}`); r.status != 403 {
		t.Errorf("audit-only key = %d, want 403", r.status)
	}

	f.err = &router.NoModelError{Slot: "converse", Attempts: []router.Attempt{
		{Model: "silent", Provider: "openai", Kind: router.KindTTFT, Err: errors.New("no token within 1.5s"), Duration: 1500 * time.Millisecond},
		{Model: "down", Provider: "openai", Kind: "http_503", Err: errors.New("503"), Duration: time.Millisecond},
	}}
	r = post(t, h, routeKey, `{"assignment":"converse","messages":[{"role":"user","text":"hi"}]}`)
	typ, msg := r.envelope(t)
	if r.status != 502 || typ != gateway.EngineUnavailable || !strings.Contains(msg, "silent") || !strings.Contains(msg, "down") {
		t.Fatalf("no model = %d %s %s", r.status, typ, msg)
	}
	f.err = fmt.Errorf("%w: %q", router.ErrUnknownSlot, "nope")
	if r := post(t, h, routeKey, `{"assignment":"nope","messages":[{"role":"user","text":"hi"}]}`); r.status != 400 {
		t.Fatalf("unknown slot = %d %s", r.status, r.body)
	}
}
