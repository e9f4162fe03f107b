package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// TestSafetySlotWired: the configuration (router.slots.safety,
// safety.classify_budget_ms) decodes, and a turn the local detector calls
// none but the moderation classifier (loopback, the public response
// shape) calls self-harm intent shows the crisis card before any reply
// text. An engine whose safety object cannot be read gets an elevated
// card with the deployment's region's resources (the router's
// FallbackResources), never none.
func TestSafetySlotWired(t *testing.T) {
	mod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Input string }
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
		score := 0.0
		if strings.Contains(body.Input, "matter") {
			score = 0.9
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":%v,
"categories":{},"category_scores":{"self-harm":%v,"self-harm/intent":%v,"self-harm/instructions":0.0,"violence":0.0}}]}`, score > 0, score, score)
	}))
	defer mod.Close()
	eng := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/conversations" {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id":"conv_1"}`)
			return
		}
		fmt.Fprint(w, `{"id":"m","message":"I'm here with you.","safety":"unreadable"}`)
	}))
	defer eng.Close()
	p := writeConfig(t, fmt.Sprintf(`router:
  models:
    - {name: mod, provider: openai-moderation, base_url: "%s/v1", model: omni-moderation-latest, api_key_env: OPENAI_API_KEY, timeout_ms: 1500}
    - {name: engine, provider: vera, base_url: "%s/v1", api_key_env: VERA_KEY, model: m, ttft_ms: 5000, timeout_ms: 20000}
  slots:
    safety: [mod]
    converse: [engine]
safety:
  default_region: GB
  classify_budget_ms: 2000
rtc: {udp_port: 0, udp_address: 127.0.0.1, loopback_only: true, include_loopback: true}
`, mod.URL, eng.URL))
	env := map[string]string{"OPENAI_API_KEY": "sk-mod", "VERA_KEY": "vera_sk_engine"}
	cfg, _, err := loadConfig(p, "", envMap(env))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Safety.ClassifyBudgetMs != 2000 {
		t.Fatalf("classify_budget_ms %d", cfg.Safety.ClassifyBudgetMs)
	}
	a, _ := startAppEnv(t, cfg, env)
	turn := func(text string) ([]string, map[string]any) {
		t.Helper()
		s, st, err := a.sessions.Open(session.Owner{PartnerID: "dev", EndUserID: "u_9"}, &event.Hello{Device: "browser"})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Detach()
		_ = s.Handle(t.Context(), &event.InputText{Text: text})
		var order []string
		var card map[string]any
		for {
			ev := nextEvent(t, st, func(string, map[string]any) bool { return true })
			typ, _ := ev["type"].(string)
			order = append(order, typ)
			if typ == "safety.card" && card == nil {
				card = ev
			}
			if typ == "reply.done" {
				return order, card
			}
		}
	}
	order, card := turn("it does not matter what happens to me now")
	if card == nil || card["level"] != "crisis" || indexOf(order, "safety.card") > indexOf(order, "reply.delta") {
		t.Fatalf("classifier crisis: events %v, card %v", order, card)
	}
	order, card = turn("hello there")
	if card == nil || card["level"] != "elevated" || indexOf(order, "safety.card") > indexOf(order, "reply.delta") {
		t.Fatalf("unreadable engine safety: events %v, card %v", order, card)
	}
	// The router filled it with the resources of GB, the deployment's
	// default region (Samaritans), not the international directory.
	b, _ := json.Marshal(card["resources"])
	var res []struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(b, &res)
	found := false
	for _, r := range res {
		found = found || r.ID == "gb-samaritans"
	}
	if !found {
		t.Errorf("the engine's fallback card has no GB resources: %s", b)
	}
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}
