package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// moderationServer is a loopback moderation endpoint (the public
// response shape) that says self-harm/intent for any input containing
// "quietly", and records what it was sent.
func moderationServer(t *testing.T, sent chan<- map[string]any) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
		if sent != nil {
			sent <- body
		}
		score := 0.001
		if in, _ := body["input"].(string); strings.Contains(in, "quietly") {
			score = 0.97
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":%v,
"categories":{"self-harm":%v,"self-harm/intent":%v,"violence":false},
"category_scores":{"self-harm":%v,"self-harm/intent":%v,"self-harm/instructions":0.001,"violence":0.001}}]}`,
			score > 0.5, score > 0.5, score > 0.5, score, score)
	}))
	t.Cleanup(s.Close)
	return s
}

// NewClassifier puts the router's safety slot behind the session's
// Classifier: none without a slot; with one, the turn's text alone is
// sent and the verdict comes back as a level.
func TestClassifierOnTheSafetySlot(t *testing.T) {
	plain, err := router.New(router.DefaultConfig(), func(string) string { return "" }, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if NewClassifier(plain) != nil {
		t.Fatal("a Classifier without a safety slot")
	}

	sent := make(chan map[string]any, 4)
	mod := moderationServer(t, sent)
	cfg := router.DefaultConfig()
	cfg.Models = append(cfg.Models, router.ModelConfig{Name: "mod", Provider: router.ProviderModeration, BaseURL: mod.URL + "/v1",
		Model: "omni-moderation-latest", APIKeyEnv: "MOD_KEY", TimeoutMs: 1500})
	cfg.Slots = map[string][]string{router.SlotSafety: {"mod"}}
	r, err := router.New(cfg, func(k string) string { return map[string]string{"MOD_KEY": "sk-mod"}[k] }, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := NewClassifier(r)
	if c == nil {
		t.Fatal("no Classifier on a safety slot")
	}
	cl := c.StartClassify(context.Background(), "I'll just go quietly tonight")
	defer cl.Stop()
	if l := cl.Wait(10 * time.Second); l != safety.LevelCrisis || cl.Level() != safety.LevelCrisis {
		t.Fatalf("level %v", l)
	}
	select {
	case <-cl.Reached(safety.LevelCrisis):
	default:
		t.Fatal("Reached(crisis) not closed")
	}
	<-cl.Done()
	body := <-sent
	if len(body) != 2 || body["input"] != "I'll just go quietly tonight" || body["model"] != "omni-moderation-latest" {
		t.Fatalf("sent %v", body)
	}
}

// A turn whose every model failed still returns the engine's card (the
// safety of a reply whose message could not be read) with the error.
func TestFailedTurnReturnsEngineSafety(t *testing.T) {
	es := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/conversations" {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id":"conv_1"}`)
			return
		}
		fmt.Fprint(w, `{"id":"m","message":{"parts":[1]},"safety":{"level":"crisis","display_required":true,
"resources":[{"id":"us-988","name":"988 Suicide & Crisis Lifeline","actions":[{"type":"call","value":"988"}]}]}}`)
	}))
	defer es.Close()
	cfg := router.DefaultConfig()
	cfg.Models = append(cfg.Models, engineModel(es.URL+"/v1"))
	cfg.Slots = map[string][]string{router.SlotConverse: {"engine"}}
	c := newConverser(t, cfg, map[string]string{"VERA_KEY": "vera_sk_engine"})
	rep, err := c.Converse(context.Background(), session.ConverseRequest{SessionID: "s1", Text: "hello",
		SafetyFinal: func(safety.Assessment) {}}, func(string) {})
	if !errors.Is(err, router.ErrNoModel) {
		t.Fatalf("err %v", err)
	}
	if a := rep.Safety; a.Level != safety.LevelCrisis || !a.DisplayRequired || len(a.Resources) != 1 || a.Resources[0].ID != "us-988" {
		t.Fatalf("safety of the failed turn %+v", a)
	}
}
