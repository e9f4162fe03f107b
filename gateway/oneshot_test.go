package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/router"
)

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
	ts := newTestServer(t, testConfig())
	f := &fakeOneshot{}
	ts.Mount(ts.OneshotRoute(f))

	r := ts.do(t, "POST", "/v1/oneshot", keyA, `{"assignment":"snappy","messages":[{"role":"user","text":"hi"}],"maxTokens":20}`, "Idempotency-Key", "one-1")
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
		r := ts.do(t, "POST", "/v1/oneshot", keyA, body)
		if r.status != 400 || !strings.Contains(r.envelope(t).Message, want) {
			t.Errorf("%.60s: %d %s, want 400 naming %q", body, r.status, r.body, want)
		}
	}
	if r := ts.do(t, "POST", "/v1/oneshot", keyC, `{}`); r.status != 403 {
		t.Errorf("audit-only key = %d, want 403", r.status)
	}

	f.err = &router.NoModelError{Slot: "converse", Attempts: []router.Attempt{
		{Model: "silent", Provider: "openai", Kind: router.KindTTFT, Err: errors.New("no token within 1.5s"), Duration: 1500 * time.Millisecond},
		{Model: "down", Provider: "openai", Kind: "http_503", Err: errors.New("503"), Duration: time.Millisecond},
	}}
	r = ts.do(t, "POST", "/v1/oneshot", keyA, `{"assignment":"converse","messages":[{"role":"user","text":"hi"}]}`)
	e := r.envelope(t)
	if r.status != 502 || e.Type != EngineUnavailable || !strings.Contains(e.Message, "silent") || !strings.Contains(e.Message, "down") {
		t.Fatalf("no model = %d %+v", r.status, e)
	}
	f.err = fmt.Errorf("%w: %q", router.ErrUnknownSlot, "nope")
	if r := ts.do(t, "POST", "/v1/oneshot", keyA, `{"assignment":"nope","messages":[{"role":"user","text":"hi"}]}`); r.status != 400 {
		t.Fatalf("unknown slot = %d %s", r.status, r.body)
	}
}
