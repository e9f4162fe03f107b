package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

type receivedHook struct {
	sig, id string
	body    []byte
}

// TestInboxTurnAndSignedWebhook: a partner pushes a message into a live
// session; it becomes a spawned turn the transcript shows, and the
// partner's receiver gets a turn_finished whose signature an independent
// HMAC check accepts.
func TestInboxTurnAndSignedWebhook(t *testing.T) {
	const secret = "whsec_test_0123456789abcdef"
	var mu sync.Mutex
	var got []receivedHook
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, receivedHook{sig: r.Header.Get("VERA-Signature"), id: r.Header.Get("VERA-Event-Id"), body: b})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()

	cfg := testFileConfig()
	cfg.Webhooks = []webhook.Endpoint{{URL: recv.URL, Secret: secret, Events: []string{webhook.TypeTurnFinished}}}
	cfg.Store.Path = filepath.Join(t.TempDir(), "vera.db")
	a, srv := startApp(t, cfg)

	s, st, err := a.sessions.Open(session.Owner{PartnerID: "dev", EndUserID: "u_42"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Detach()
	post := func(id, body string) int {
		resp, err := http.Post(srv.URL+"/v1/sessions/"+id+"/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post("sess_nope", `{"text":"hi","source":"rides/dispatch"}`); c != 404 {
		t.Fatalf("unknown session = %d, want 404", c)
	}
	if c := post(s.ID(), `{"text":"   ","source":"rides/dispatch"}`); c != 400 {
		t.Fatalf("blank text = %d, want 400", c)
	}
	if c := post(s.ID(), `{"text":"Your ride is here","source":"rides/dispatch"}`); c != 202 {
		t.Fatalf("queue = %d, want 202", c)
	}

	deadline := time.Now().Add(20 * time.Second)
	var hook receivedHook
	for {
		mu.Lock()
		if len(got) > 0 {
			hook = got[0]
		}
		mu.Unlock()
		if hook.body != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if hook.body == nil {
		t.Fatal("no turn_finished webhook within 20 s")
	}
	// Verify as a receiver would, without the package's own code.
	var ts, v1 string
	for _, part := range strings.Split(hook.sig, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + string(hook.body)))
	if want := hex.EncodeToString(m.Sum(nil)); v1 != want {
		t.Fatalf("signature %q does not verify (want v1=%s)", hook.sig, want)
	}
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			SessionID string `json:"session_id"`
			Spawned   bool   `json:"spawned"`
			Prompt    string `json:"prompt"`
			Reply     string `json:"reply"`
			Turns     int    `json:"turns"`
		} `json:"data"`
	}
	if err := json.Unmarshal(hook.body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "turn_finished" || ev.ID != hook.id || ev.Data.SessionID != s.ID() || !ev.Data.Spawned ||
		ev.Data.Prompt != "" || ev.Data.Reply == "" || ev.Data.Turns != 1 {
		t.Fatalf("turn_finished = %s", hook.body)
	}
	found := false
	for _, m := range s.History() {
		found = found || (m.Role == "user" && m.Text == "Your ride is here")
	}
	if !found {
		t.Fatalf("the transcript does not show the inbox message: %+v", s.History())
	}

	// Tools are mounted and isolated per partner.
	req, _ := http.NewRequestWithContext(context.Background(), "PUT", srv.URL+"/v1/tools/send_message",
		strings.NewReader(`{"description":"Send a text","input_schema":{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("PUT tool = %d", resp.StatusCode)
	}
}

func routerModel(name, provider, baseURL, keyEnv string) router.ModelConfig {
	return router.ModelConfig{Name: name, Provider: provider, BaseURL: baseURL, APIKeyEnv: keyEnv, Model: "m", ContextWindow: 8192, TTFTMs: 5000, TimeoutMs: 20000}
}
