package router

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/safety"
)

// echo is an in-process text provider that answers at once, so the
// benchmark measures the router's own overhead per request.
type echo struct{}

func (echo) complete(_ context.Context, c *call, req textRequest, delta func(string) error) (Reply, error) {
	text := req.Messages[len(req.Messages)-1].Text
	if err := emitDelta(c, delta, text); err != nil {
		return Reply{}, err
	}
	return Reply{Message: text}, nil
}

func benchRouter(b *testing.B) *Router {
	cfg := DefaultConfig()
	cfg.Models = []ModelConfig{
		{Name: "small", Provider: ProviderCompanion, ContextWindow: 16, MaxOutputTokens: 8},
		{Name: "local", Provider: ProviderCompanion},
		{Name: "asr", Provider: ProviderOpenAI, BaseURL: "http://127.0.0.1:1", Model: "w"},
	}
	cfg.Slots = map[string][]string{SlotSnappy: {"small", "local"}, SlotListen: {"asr"}}
	r, err := New(cfg, nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	r.models["small"].text = echo{}
	r.models["local"].text = echo{}
	return r
}

// BenchmarkOneshotOverhead: one context-window skip, then an in-process
// answer: deadlines, breaker, metrics and the idempotency key included.
func BenchmarkOneshotOverhead(b *testing.B) {
	r := benchRouter(b)
	req := OneshotRequest{Assignment: SlotSnappy, Messages: []Message{{Role: RoleUser, Text: "plot a course for the shiny buttons and more"}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := r.Oneshot(ctx, req)
		if err != nil || out.Model != "local" {
			b.Fatal(out, err)
		}
	}
}

// BenchmarkConverseCompanion: a whole offline converse turn.
func BenchmarkConverseCompanion(b *testing.B) {
	r := benchRouter(b)
	r.slots[SlotConverse] = []*model{r.models[EmbeddedConverse]}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Converse(ctx, ConverseRequest{Text: "I feel like my job is crushing me and I can't sleep."}, func(string) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassifyNoSlot: what a turn pays for Classify when no safety
// slot is configured (the target is nothing: no allocation, no goroutine).
func BenchmarkClassifyNoSlot(b *testing.B) {
	r := benchRouter(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if v, err := r.Classify(ctx, "i can't sleep and work is crushing me", DefaultClassifyBudget); err != nil || v.Level != safety.LevelNone {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkClassifyOneFake: one openai-moderation classifier on a loopback
// httptest server that answers at once; wall clock. Dominated by the HTTP
// round trip, which a real deployment pays on the network instead.
func BenchmarkClassifyOneFake(b *testing.B) {
	body := `{"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":false,"categories":{"self-harm":false,"self-harm/intent":false,"self-harm/instructions":false,"violence":false},"category_scores":{"self-harm":0.001,"self-harm/intent":0.0004,"self-harm/instructions":0.0002,"violence":0.003}}]}`
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	defer s.Close()
	cfg := DefaultConfig()
	cfg.Models = []ModelConfig{
		{Name: "asr", Provider: ProviderOpenAI, BaseURL: "http://127.0.0.1:1", Model: "w"},
		{Name: "mod", Provider: ProviderModeration, BaseURL: s.URL + "/v1", Model: "omni-moderation-latest"},
	}
	cfg.Slots = map[string][]string{SlotListen: {"asr"}, SlotSafety: {"mod"}}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	r, err := New(cfg, nil, Options{HTTPClient: client})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if v, err := r.Classify(ctx, "i can't sleep and work is crushing me", time.Second); err != nil || v.Answered != 1 {
			b.Fatal(v, err)
		}
	}
}
