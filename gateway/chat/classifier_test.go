package chat_test

import (
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

	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/converse"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// TestClassifierCrisisCardBeforeReply: typed text the local detector
// judges none, which the safety slot's classifier (a real moderation
// endpoint on loopback, the public response shape) judges self-harm
// intent: over the websocket the crisis card comes before the reply's
// first text, the reply is crisis, and the classifier was sent the turn's
// text and nothing else.
func TestClassifierCrisisCardBeforeReply(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	mod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":true,
"categories":{"self-harm":true,"self-harm/intent":true,"self-harm/instructions":false,"violence":false},
"category_scores":{"self-harm":0.88,"self-harm/intent":0.93,"self-harm/instructions":0.001,"violence":0.001}}]}`)
	}))
	defer mod.Close()

	local, err := session.NewLocalSafety("US")
	if err != nil {
		t.Fatal(err)
	}
	const text = "it does not matter what happens to me now"
	if a := local.Assess(nil, text, "US"); a.Level != safety.LevelNone || a.DisplayRequired {
		t.Fatalf("the local detector judges %q %v: pick a text it calls none", text, a.Level)
	}
	rc := router.DefaultConfig()
	rc.Models = append(rc.Models, router.ModelConfig{Name: "mod", Provider: router.ProviderModeration, BaseURL: mod.URL + "/v1",
		Model: "omni-moderation-latest", APIKeyEnv: "MOD_KEY", TimeoutMs: 5000})
	rc.Slots = map[string][]string{router.SlotSafety: {"mod"}}
	r, err := router.New(rc, func(k string) string { return map[string]string{"MOD_KEY": "sk-mod"}[k] }, router.Options{
		Assess: func(history []string, text string) safety.Assessment { return local.Assess(history, text, "") }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	conv, err := converse.New(r, rc, converse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	layout, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	// A generous budget: the loopback classifier answers well within it
	// even on a loaded machine, so the verdict is known when the reply starts.
	mgr, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: conv, Safety: local, Layout: layout,
		Classifier: converse.NewClassifier(r), ClassifyBudget: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h, err := chat.New(chat.DefaultConfig(), mgr, auth, chat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/chat", h)
	s := &server{Server: httptest.NewServer(mux), h: h, mgr: mgr}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		s.Server.Close()
		_ = mgr.Close(ctx)
	}()

	c := s.dial(t, "good")
	c.hello(`,"region":"US"`)
	c.until(event.TypeNotice)
	c.send(`{"type":"input.text","text":"` + text + `"}`)
	evs := c.until(event.TypeReplyDone)
	var order []string
	for _, e := range evs {
		order = append(order, string(e.Type))
	}
	ci, di := -1, -1
	for i, e := range evs {
		switch {
		case e.Type == event.TypeSafetyCard && ci < 0:
			ci = i
		case e.Type == event.TypeReplyDelta && di < 0:
			di = i
		}
	}
	if ci < 0 || di < 0 || ci > di {
		t.Fatalf("card at %d, first reply text at %d: %v", ci, di, order)
	}
	card := evs[ci]
	var res []safety.Resource
	_ = json.Unmarshal(card.raw["resources"], &res)
	if card.str("level") != "crisis" || len(res) == 0 || evs[len(evs)-1].str("safety_level") != "crisis" {
		t.Fatalf("card %s, reply level %s", card.raw["level"], evs[len(evs)-1].raw["safety_level"])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || len(bodies[0]) != 2 || bodies[0]["input"] != text || strings.Contains(fmt.Sprint(bodies[0]), "u1") {
		t.Fatalf("the classifier was sent %v", bodies)
	}
}
