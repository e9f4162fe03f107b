package router

import (
	"context"
	"testing"
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
