package router

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/safety"
)

// fakeVERA follows the Partner API: it checks auth and version headers,
// creates conversations and answers messages; fail, when set, answers the
// n-th message request (1-based) with an error instead.
type fakeVERA struct {
	mu       sync.Mutex
	convs    []string // end_user_id per created conversation
	msgKeys  []string
	msgTexts []string
	paths    []string
	reply    string // raw JSON of a successful message reply
	fail     func(n int, w http.ResponseWriter) bool
}

func (f *fakeVERA) handler(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		envelope := func(status int, typ, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"type":%q,"message":%q,"request_id":"req_%d"}}`, typ, msg, status)
		}
		if r.Header.Get("Authorization") != "Bearer vera_sk_test" {
			envelope(401, "authentication_error", "bad key")
			return
		}
		if r.Header.Get("VERA-Version") != VERAVersion || r.Header.Get("Idempotency-Key") == "" {
			envelope(400, "invalid_request", "missing VERA-Version or Idempotency-Key")
			return
		}
		var body map[string]string
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil {
			envelope(400, "invalid_request", "bad json")
			return
		}
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.Path)
		f.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/conversations":
			f.mu.Lock()
			f.convs = append(f.convs, body["end_user_id"])
			id := fmt.Sprintf("conv_%d", len(f.convs))
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"id":%q,"end_user_id":%q}`, id, body["end_user_id"])
		case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/conversations/conv_") && strings.HasSuffix(r.URL.Path, "/messages"):
			f.mu.Lock()
			f.msgKeys = append(f.msgKeys, r.Header.Get("Idempotency-Key"))
			f.msgTexts = append(f.msgTexts, body["text"])
			n := len(f.msgKeys)
			f.mu.Unlock()
			if f.fail != nil && f.fail(n, w) {
				return
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			fmt.Fprint(w, f.reply)
		default:
			envelope(404, "not_found", "no such route")
		}
	}
}

func veraModel(name, url string) ModelConfig {
	return ModelConfig{Name: name, Provider: ProviderVERA, BaseURL: url + "/v1", APIKeyEnv: "VERA_KEY"}
}

var veraEnv = map[string]string{"VERA_KEY": "vera_sk_test"}

const veraCrisisReply = `{"id":"msg_1","message":{"role":"assistant","text":"I'm here with you."},
"safety":{"level":"crisis","display_required":true,"resources":[{"id":"us-988","name":"988 Suicide & Crisis Lifeline","country":"US","actions":[{"type":"call","value":"988"},{"type":"text","value":"988"}]}]},
"proposed_actions":[{"id":"act_1","type":"call_contact","title":"Call Sam","summary":"Ring your sister","input":{"contact":"sam"},"expires_at":"2026-12-02T00:00:00Z"}]}`

func TestVERAConverseMapsReplyAndReusesConversation(t *testing.T) {
	f := &fakeVERA{reply: veraCrisisReply}
	s, _ := server(t, f.handler(t))
	cfg := textConfig(veraModel("engine", s.URL))
	cfg.Slots[SlotConverse] = []string{"engine"}
	r, _, _ := testRouter(t, cfg, veraEnv)
	th := NewThread("eu_123")
	var deltas []string
	reply, err := r.Converse(tctx(t), ConverseRequest{Thread: th, Text: "I can't do this anymore", IdempotencyKey: "turn-1"}, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Message != "I'm here with you." || reply.Model != "engine" || reply.Provider != ProviderVERA {
		t.Fatalf("reply %+v", reply)
	}
	a := reply.Safety
	if a.Level != safety.LevelCrisis || !a.DisplayRequired || len(a.Resources) != 1 || a.Resources[0].Actions[0].Value != "988" || a.Source != safety.SourceEngine {
		t.Fatalf("safety %+v", a)
	}
	pa := reply.ProposedActions
	if len(pa) != 1 || pa[0].ID != "act_1" || pa[0].Type != "call_contact" || string(pa[0].Input) != `{"contact":"sam"}` || !pa[0].ExpiresAt.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("actions %+v", pa)
	}
	if strings.Join(deltas, "") != reply.Message {
		t.Fatalf("deltas %q", deltas)
	}
	// Second turn: same engine conversation, a new idempotency key.
	f.reply = `{"id":"msg_2","message":"Plain string reply.","safety":{"level":"none","display_required":false,"resources":[]},"proposed_actions":[]}`
	reply, err = r.Converse(tctx(t), ConverseRequest{Thread: th, Text: "thanks", IdempotencyKey: "turn-2"}, nil)
	if err != nil || reply.Message != "Plain string reply." || reply.Safety.Level != safety.LevelNone {
		t.Fatalf("second turn %+v %v", reply, err)
	}
	if len(f.convs) != 1 || f.convs[0] != "eu_123" {
		t.Fatalf("conversations created %q, want one for eu_123", f.convs)
	}
	if f.msgKeys[0] == f.msgKeys[1] || !strings.HasPrefix(f.msgKeys[0], "turn-1") {
		t.Fatalf("message keys %q: one per turn, from the turn's key", f.msgKeys)
	}
	if f.msgTexts[1] != "thanks" {
		t.Fatalf("engine keeps context: only the new text is sent, got %q", f.msgTexts[1])
	}
}

func TestVERAEngineUnavailableRetriesSameKey(t *testing.T) {
	f := &fakeVERA{reply: `{"id":"m","message":"ok","safety":{"level":"none","display_required":false,"resources":[]},"proposed_actions":[]}`}
	f.fail = func(n int, w http.ResponseWriter) bool {
		if n > 2 {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"type":"rate_limited","message":"60 per minute","request_id":"req_a"}}`)
			return true
		}
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, `{"error":{"type":"engine_unavailable","message":"warming up","request_id":"req_b"}}`)
		return true
	}
	s, _ := server(t, f.handler(t))
	r, clk, _ := testRouter(t, textConfig(veraModel("engine", s.URL)), veraEnv)
	res := make(chan error, 1)
	var out OneshotResponse
	go func() {
		var err error
		out, err = oneshot(r, tctx(t))
		res <- err
	}()
	if d := waitTimer(t, clk, sleepTimer); d != time.Second {
		t.Fatalf("slept %v after Retry-After: 1", d)
	}
	clk.Advance(time.Second)
	clk.Advance(waitTimer(t, clk, sleepTimer))
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if out.Text != "ok" || len(f.msgKeys) != 3 || f.msgKeys[0] != f.msgKeys[1] || f.msgKeys[1] != f.msgKeys[2] {
		t.Fatalf("out %+v keys %q: one key reused on every retry", out, f.msgKeys)
	}
	if len(f.convs) != 1 || f.convs[0] != defaultOneshotUser {
		t.Fatalf("oneshot conversations %q", f.convs)
	}
	if !strings.Contains(f.msgTexts[0], "Name this in five words.") || !strings.Contains(f.msgTexts[0], "plot a course") {
		t.Fatalf("oneshot text %q lacks prompt or message", f.msgTexts[0])
	}
}

func TestVERAOtherErrorFailsWithMessageAndRequestID(t *testing.T) {
	f := &fakeVERA{}
	f.fail = func(n int, w http.ResponseWriter) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"type":"invalid_request","message":"end_user_id looks like an email","request_id":"req_xyz"}}`)
		return true
	}
	s, _ := server(t, f.handler(t))
	r, _, _ := testRouter(t, textConfig(veraModel("engine", s.URL)), veraEnv)
	_, err := oneshot(r, tctx(t))
	var nm *NoModelError
	if !errors.As(err, &nm) || len(nm.Attempts) != 1 {
		t.Fatalf("got %v", err)
	}
	var pe *ProviderError
	if !errors.As(nm.Attempts[0].Err, &pe) || pe.Type != "invalid_request" || pe.RequestID != "req_xyz" || pe.Kind != KindRejected {
		t.Fatalf("attempt error %#v", nm.Attempts[0].Err)
	}
	if msg := err.Error(); !strings.Contains(msg, "end_user_id looks like an email") || !strings.Contains(msg, "req_xyz") {
		t.Fatalf("message %q lacks the engine's message and request_id", msg)
	}
}

func TestVERAMalformedReplies(t *testing.T) {
	for name, body := range map[string]string{
		"no message":      `{"id":"m","safety":{"level":"none","display_required":false,"resources":[]}}`,
		"message number":  `{"id":"m","message":42}`,
		"not json at all": `<html>`,
		"json array":      `[{"message":"x"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeVERA{reply: body}
			s, _ := server(t, f.handler(t))
			r, _, _ := testRouter(t, textConfig(veraModel("engine", s.URL)), veraEnv)
			_, err := oneshot(r, tctx(t))
			if got := attemptSummary(err); got != "engine:protocol" {
				t.Fatalf("attempts %s (%v)", got, err)
			}
		})
	}
}

func TestVERAUnknownLevelIsNotDowngraded(t *testing.T) {
	rep, err := decodeVERAReply([]byte(`{"message":"x","safety":{"level":"severe","display_required":true,"resources":[]}}`), time.Time{}, defaultFallbackResources)
	if err != nil || rep.Safety.Level != safety.LevelCrisis || len(rep.Safety.Resources) == 0 {
		t.Fatalf("unknown level mapped to %+v (%v)", rep.Safety, err)
	}
}

func TestMissingCredentialNamesEnv(t *testing.T) {
	cfg := textConfig(veraModel("engine", "http://127.0.0.1:1"))
	_, err := New(cfg, func(string) string { return "" }, Options{})
	if err == nil || !strings.Contains(err.Error(), "VERA_KEY") || !strings.Contains(err.Error(), "api_key_env") {
		t.Fatalf("got %v, want an error naming VERA_KEY", err)
	}
}
