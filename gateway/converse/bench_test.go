package converse

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
)

// BenchmarkTurnSafetySlot is one ordinary chat turn through the gateway's
// real path (session, local detector, router, embedded companion, events
// read back) without a safety slot and with one (a loopback moderation
// server that answers "safe" at once, the deployment's 300 ms budget).
// Without the slot, NewClassifier is nil and the turn runs no classifier
// code at all: its cost is the turn's (compare BenchmarkTextTurn in
// gateway/session against main). With it, the difference is the price of
// the second opinion: one HTTP call in parallel with converse, and the
// first reply text held until it answered.
func BenchmarkTurnSafetySlot(b *testing.B) {
	mod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":false,
"categories":{"self-harm":false,"self-harm/intent":false,"self-harm/instructions":false,"violence":false},
"category_scores":{"self-harm":0.001,"self-harm/intent":0.001,"self-harm/instructions":0.001,"violence":0.001}}]}`)
	}))
	defer mod.Close()
	withSlot := router.DefaultConfig()
	withSlot.Models = append(withSlot.Models, router.ModelConfig{Name: "mod", Provider: router.ProviderModeration,
		BaseURL: mod.URL + "/v1", Model: "omni-moderation-latest", APIKeyEnv: "MOD_KEY", TimeoutMs: 1500})
	withSlot.Slots = map[string][]string{router.SlotSafety: {"mod"}}
	for _, bc := range []struct {
		name string
		cfg  router.Config
	}{{"no_safety_slot", router.DefaultConfig()}, {"safety_slot", withSlot}} {
		b.Run(bc.name, func(b *testing.B) { benchSlotTurn(b, bc.cfg, bc.name == "safety_slot") })
	}
}

func benchSlotTurn(b *testing.B, cfg router.Config, wantClassifier bool) {
	r, err := router.New(cfg, func(k string) string { return map[string]string{"MOD_KEY": "sk-mod"}[k] }, router.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	conv, err := New(r, cfg, Options{Registerer: prometheus.NewRegistry(), Tools: schemaTools{}, Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	cl := NewClassifier(r)
	if (cl != nil) != wantClassifier {
		b.Fatalf("classifier %v, want %v", cl != nil, wantClassifier)
	}
	local, err := session.NewLocalSafety("US")
	if err != nil {
		b.Fatal(err)
	}
	layout, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: conv, Safety: local, Layout: layout,
		Classifier: cl, ClassifyBudget: 300 * time.Millisecond, Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, err := m.Open(session.Owner{PartnerID: "p"}, &event.Hello{Device: devices.Phone})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	until := func(want event.Type) {
		for {
			e, err := st.NextEvent(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if e.Type == event.TypeSafetyCard {
				b.Fatalf("a card on ordinary talk: %s", e.Data)
			}
			if e.Type == want {
				return
			}
		}
	}
	until(event.TypeNotice)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Handle(ctx, &event.InputText{Text: "how was your day"}); err != nil {
			b.Fatal(err)
		}
		until(event.TypeReplyDone)
	}
}
