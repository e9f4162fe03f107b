package router

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// silent sends headers, then nothing until the client goes away.
func silent(got chan<- struct{}, done <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		got <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}
}

func TestTTFTMissMovesToNextModelAtOnce(t *testing.T) {
	got := make(chan struct{}, 4)
	var ha hits
	var silentDone chan struct{}
	a, silentDone := server(t, func(w http.ResponseWriter, r *http.Request) {
		ha.add(r)
		silent(got, silentDone)(w, r)
	})
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) { sseReply(w, "Raid on ", "the button factory") })
	r, clk, reg := testRouter(t, textConfig(openAIModel("a", a.URL), openAIModel("b", b.URL)), nil)

	res := make(chan error, 1)
	var out OneshotResponse
	go func() {
		var err error
		out, err = oneshot(r, tctx(t))
		res <- err
	}()
	<-got // headers sent, now silence
	clk.Advance(testTTFT)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if out.Model != "b" || out.Provider != ProviderOpenAI || out.Text != "Raid on the button factory" {
		t.Fatalf("got %+v, want b's answer", out)
	}
	if ha.n() != 1 {
		t.Fatalf("silent model tried %d times, want once (a TTFT miss is never retried)", ha.n())
	}
	if v := metricValue(t, r.metrics.failures.WithLabelValues("a", ProviderOpenAI, string(KindTTFT))); v != 1 {
		t.Fatalf("ttft failures metric = %v, want 1", v)
	}
	if n := seriesCount(t, reg, "vera_router_ttft_seconds"); n != 1 {
		t.Fatalf("ttft histogram series = %d, want 1 (model b)", n)
	}
}

func TestRetryBackoffReusesIdempotencyKey(t *testing.T) {
	var h hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch h.add(r) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusBadGateway)
		default:
			sseReply(w, "ok")
		}
	})
	r, clk, _ := testRouter(t, textConfig(openAIModel("a", a.URL)), nil)
	res := make(chan error, 1)
	go func() { _, err := oneshot(r, tctx(t)); res <- err }()
	// Jitter 0: the sleeps are exactly initial, initial*multiplier.
	for _, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond} {
		d := waitTimer(t, clk, sleepTimer)
		if d != want {
			t.Fatalf("backoff sleep %v, want %v", d, want)
		}
		clk.Advance(d)
	}
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if len(h.keys) != 3 || h.keys[0] == "" || h.keys[0] != h.keys[1] || h.keys[1] != h.keys[2] {
		t.Fatalf("idempotency keys %q: want one non-empty key reused on every retry", h.keys)
	}
}

func TestRetryJitterBounded(t *testing.T) {
	var h hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if h.add(r) == 1 {
			w.WriteHeader(http.StatusGatewayTimeout)
			return
		}
		sseReply(w, "ok")
	})
	cfg := textConfig(openAIModel("a", a.URL))
	cfg.Retry.Jitter = 0.5
	r, clk, _ := testRouter(t, cfg, nil)
	res := make(chan error, 1)
	go func() { _, err := oneshot(r, tctx(t)); res <- err }()
	d := waitTimer(t, clk, sleepTimer)
	if d < 100*time.Millisecond || d > 300*time.Millisecond {
		t.Fatalf("jittered sleep %v outside 200ms ± 50%%", d)
	}
	clk.Advance(d)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	var h hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if h.add(r) == 1 {
			w.Header().Set("Retry-After", "2")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"type":"rate_limited","message":"slow down","request_id":"req_1"}}`)
			return
		}
		sseReply(w, "ok")
	})
	r, clk, _ := testRouter(t, textConfig(openAIModel("a", a.URL)), nil)
	res := make(chan error, 1)
	go func() { _, err := oneshot(r, tctx(t)); res <- err }()
	if d := waitTimer(t, clk, sleepTimer); d != 2*time.Second {
		t.Fatalf("slept %v after Retry-After: 2, want 2s", d)
	}
	clk.Advance(2 * time.Second)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
}

func TestRetryAfterBeyondBoundMovesOn(t *testing.T) {
	var ha, hb hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		ha.add(r)
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) { hb.add(r); sseReply(w, "from b") })
	r, _, _ := testRouter(t, textConfig(openAIModel("a", a.URL), openAIModel("b", b.URL)), nil)
	out, err := oneshot(r, tctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if out.Model != "b" || ha.n() != 1 {
		t.Fatalf("model %s, a tried %d times: a 2-minute Retry-After should move on at once", out.Model, ha.n())
	}
}

func TestRetriesExhaustedThenNextModelThenError(t *testing.T) {
	var ha, hb hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) { ha.add(r); w.WriteHeader(http.StatusServiceUnavailable) })
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		hb.add(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"bad model","type":"invalid_request_error"}}`)
	})
	cfg := textConfig(openAIModel("a", a.URL), openAIModel("b", b.URL))
	cfg.Retry.MaxRetries = 1
	r, clk, _ := testRouter(t, cfg, nil)
	res := make(chan error, 1)
	go func() { _, err := oneshot(r, tctx(t)); res <- err }()
	clk.Advance(waitTimer(t, clk, sleepTimer))
	err := <-res
	var nm *NoModelError
	if !errors.As(err, &nm) || !errors.Is(err, ErrNoModel) {
		t.Fatalf("got %v, want *NoModelError", err)
	}
	if got := attemptSummary(err); got != "a:unavailable,a:unavailable,b:rejected" {
		t.Fatalf("attempts %s", got)
	}
	if nm.Attempts[1].Retry != 1 || !strings.Contains(err.Error(), "bad model") || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("error does not say why: %v", err)
	}
	if hb.n() != 1 {
		t.Fatalf("4xx retried: b tried %d times", hb.n())
	}
	sum := nm.Summary()
	if sum != `no model of slot "snappy" answered: a (openai): unavailable (HTTP 503); a (openai): unavailable (HTTP 503); b (openai): rejected (HTTP 400)` {
		t.Fatalf("summary %q", sum)
	}
	if strings.Contains(sum, "127.0.0.1") {
		t.Fatal("summary leaks provider addresses")
	}
}

func TestContextWindowSkip(t *testing.T) {
	var ha hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) { ha.add(r); sseReply(w, "from a") })
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) { sseReply(w, "from b") })
	small := openAIModel("small", a.URL)
	small.ContextWindow, small.MaxOutputTokens = 64, 16
	big := openAIModel("big", b.URL)
	big.ContextWindow = 8192
	r, _, reg := testRouter(t, textConfig(small, big), nil)
	long := strings.Repeat("word ", 60) // 300 bytes: about 100 tokens by the estimate
	out, err := r.Oneshot(tctx(t), OneshotRequest{Assignment: SlotSnappy, Messages: []Message{{Role: RoleUser, Text: long}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Model != "big" || ha.n() != 0 {
		t.Fatalf("got %s (small contacted %d times): small's window cannot hold the request", out.Model, ha.n())
	}
	if v := metricValue(t, r.metrics.skips.WithLabelValues("small", ProviderOpenAI, string(KindContextWindow))); v != 1 {
		t.Fatalf("skip metric %v", v)
	}
	_ = reg
	// A short request fits the small model, which comes first.
	out, err = oneshot(r, tctx(t))
	if err != nil || out.Model != "small" {
		t.Fatalf("short request: %+v %v, want small", out, err)
	}
	// Nothing fits: the error lists the skip.
	r2, _, _ := testRouter(t, textConfig(small), nil)
	_, err = r2.Oneshot(tctx(t), OneshotRequest{Assignment: SlotSnappy, Messages: []Message{{Role: RoleUser, Text: long}}})
	if got := attemptSummary(err); got != "small:context_window" || !strings.Contains(err.Error(), "context_window is 64") {
		t.Fatalf("got %v", err)
	}
}

func TestNeverFallsBackToAnotherSlot(t *testing.T) {
	var hc hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	c, _ := server(t, func(w http.ResponseWriter, r *http.Request) { hc.add(r); sseReply(w, "converse model") })
	cfg := textConfig(openAIModel("a", a.URL), openAIModel("c", c.URL))
	cfg.Slots = map[string][]string{SlotSnappy: {"a"}, SlotConverse: {"c"}, SlotEco: {"c"}}
	r, _, _ := testRouter(t, cfg, nil)
	_, err := oneshot(r, tctx(t))
	if got := attemptSummary(err); got != "a:server_error" {
		t.Fatalf("attempts %s, want only a", got)
	}
	if hc.n() != 0 {
		t.Fatal("another slot's model was contacted")
	}
	if _, err := r.Oneshot(tctx(t), OneshotRequest{Assignment: "nope", Messages: []Message{{Role: RoleUser, Text: "x"}}}); !errors.Is(err, ErrUnknownSlot) {
		t.Fatalf("unknown slot: %v", err)
	}
}

func TestCancellationAbortsInFlight(t *testing.T) {
	got := make(chan struct{}, 1)
	var done chan struct{}
	a, done := server(t, func(w http.ResponseWriter, r *http.Request) { silent(got, done)(w, r) })
	var hb hits
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) { hb.add(r); sseReply(w, "b") })
	r, _, _ := testRouter(t, textConfig(openAIModel("a", a.URL), openAIModel("b", b.URL)), nil)
	ctx, cancel := context.WithCancel(tctx(t))
	res := make(chan error, 1)
	go func() { _, err := oneshot(r, ctx); res <- err }()
	<-got
	start := time.Now()
	cancel()
	select {
	case err := <-res:
		t.Logf("cancellation latency %v", time.Since(start))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		var nm *NoModelError
		if errors.As(err, &nm) {
			t.Fatal("a cancelled call must not look like an engine failure")
		}
	case <-time.After(2 * time.Second): // hang guard, not a performance bound
		t.Fatal("cancellation did not abort the attempt in flight")
	}
	if hb.n() != 0 {
		t.Fatal("cancelled call moved on to the next model")
	}
	if s := r.BreakerState("a"); s != BreakerClosed {
		t.Fatalf("a cancel counted against the breaker: %v", s)
	}
}

func TestBreakerOpensAndHalfOpenProbe(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	var h hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		h.add(r)
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		sseReply(w, "back")
	})
	cfg := textConfig(openAIModel("a", a.URL))
	cfg.Breaker = BreakerConfig{Failures: 2, CooldownMs: 10000}
	r, clk, _ := testRouter(t, cfg, nil)
	for range 2 {
		if _, err := oneshot(r, tctx(t)); err == nil {
			t.Fatal("want failure")
		}
	}
	if s := r.BreakerState("a"); s != BreakerOpen {
		t.Fatalf("after 2 failures breaker %v, want open", s)
	}
	if v := metricValue(t, r.metrics.breaker.WithLabelValues("a", ProviderOpenAI)); v != 2 {
		t.Fatalf("breaker gauge %v, want 2 (open)", v)
	}
	_, err := oneshot(r, tctx(t))
	if got := attemptSummary(err); got != "a:breaker_open" || h.n() != 2 {
		t.Fatalf("open breaker: attempts %s, server hits %d", got, h.n())
	}
	// After the cool-down one probe goes through; it fails: open again.
	clk.Advance(10 * time.Second)
	if _, err := oneshot(r, tctx(t)); attemptSummary(err) != "a:server_error" || h.n() != 3 {
		t.Fatalf("probe: %v, hits %d", err, h.n())
	}
	if s := r.BreakerState("a"); s != BreakerOpen {
		t.Fatalf("failed probe left breaker %v", s)
	}
	// Next probe succeeds: closed.
	clk.Advance(10 * time.Second)
	fail.Store(false)
	if out, err := oneshot(r, tctx(t)); err != nil || out.Text != "back" {
		t.Fatalf("probe: %+v %v", out, err)
	}
	if s := r.BreakerState("a"); s != BreakerClosed {
		t.Fatalf("successful probe left breaker %v", s)
	}
}

func TestHalfOpenAllowsOneProbe(t *testing.T) {
	clk := newFakeClock()
	var states []BreakerState
	b := newBreaker(1, time.Second, func(s BreakerState) { states = append(states, s) })
	no := false
	b.allow(clk.Now())
	b.record(clk.Now(), &no)
	if b.allow(clk.Now()) {
		t.Fatal("open breaker allowed a request")
	}
	clk.Advance(time.Second)
	if !b.peek(clk.Now()) || !b.allow(clk.Now()) {
		t.Fatal("cool-down over: probe refused")
	}
	if b.allow(clk.Now()) || b.peek(clk.Now()) {
		t.Fatal("second concurrent probe allowed")
	}
	b.record(clk.Now(), nil) // a neutral outcome ends the probe without judging
	if !b.allow(clk.Now()) {
		t.Fatal("probe slot not released after a neutral outcome")
	}
	want := []BreakerState{BreakerClosed, BreakerOpen, BreakerHalfOpen}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Fatalf("transitions %v, want %v", states, want)
	}
}

func TestStreamFaults(t *testing.T) {
	cases := []struct {
		name string
		h    http.HandlerFunc
		kind Kind
	}{
		{"malformed SSE", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\n\n")
		}, KindProtocol},
		{"wrong content type", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>proxy login</html>")
		}, KindProtocol},
		{"oversized body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": "+strings.Repeat("x", 4096)+"\n")
			for range 40 {
				fmt.Fprint(w, ": "+strings.Repeat("x", 1000)+"\n")
			}
		}, KindProtocol},
		{"truncated before content", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": keep-alive\n\n")
		}, KindConnection},
		{"error event in stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n")
		}, KindUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := server(t, tc.h)
			b, _ := server(t, func(w http.ResponseWriter, r *http.Request) { sseReply(w, "from b") })
			cfg := textConfig(openAIModel("a", a.URL), openAIModel("b", b.URL))
			cfg.MaxBodyBytes = 16 << 10
			cfg.Retry.MaxRetries = 0
			r, _, _ := testRouter(t, cfg, nil)
			out, err := oneshot(r, tctx(t))
			if err != nil || out.Model != "b" {
				t.Fatalf("got %+v %v, want b after a's fault", out, err)
			}
			if v := metricValue(t, r.metrics.failures.WithLabelValues("a", ProviderOpenAI, string(tc.kind))); v != 1 {
				t.Fatalf("failures{kind=%s} = %v", tc.kind, v)
			}
		})
	}
}

func TestSlowTrickleWithinBudgetSucceeds(t *testing.T) {
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		words := []string{"one ", "two ", "three"}
		for _, wd := range words {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", wd)
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond) // a slow server, not test logic
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	r, _, _ := testRouter(t, textConfig(openAIModel("a", a.URL)), nil)
	var deltas []string
	reply, err := r.Converse(tctx(t), ConverseRequest{Slot: SlotSnappy, Text: "count"}, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil || reply.Message != "one two three" || len(deltas) != 3 {
		t.Fatalf("reply %q deltas %q err %v", reply.Message, deltas, err)
	}
}

func TestConverseTruncatedAfterOutputDoesNotSplice(t *testing.T) {
	var hb hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Hello, \"}}]}\n\n")
	})
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) { hb.add(r); sseReply(w, "other") })
	cfg := textConfig(openAIModel("a", a.URL), openAIModel("b", b.URL))
	cfg.Retry.MaxRetries = 0
	r, _, _ := testRouter(t, cfg, nil)
	var deltas []string
	_, err := r.Converse(tctx(t), ConverseRequest{Slot: SlotSnappy, Text: "hi"}, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if got := attemptSummary(err); got != "a:truncated" || hb.n() != 0 {
		t.Fatalf("attempts %s, b hits %d: a reply must not be spliced from two models", got, hb.n())
	}
	if len(deltas) != 1 {
		t.Fatalf("deltas %q", deltas)
	}
	// Oneshot buffers, so the same fault (a connection fault before the
	// end of the stream) moves on to b.
	if out, err := oneshot(r, tctx(t)); err != nil || out.Model != "b" {
		t.Fatalf("oneshot: %+v %v", out, err)
	}
}

func TestCallbackErrorAbortsWithoutBlame(t *testing.T) {
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) { sseReply(w, "a ", "b") })
	r, _, _ := testRouter(t, textConfig(openAIModel("a", a.URL)), nil)
	stop := errors.New("barge-in")
	_, err := r.Converse(tctx(t), ConverseRequest{Slot: SlotSnappy, Text: "hi"}, func(string) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("got %v, want the callback's error", err)
	}
	if v := metricValue(t, r.metrics.failures.WithLabelValues("a", ProviderOpenAI, string(KindAborted))); v != 1 {
		t.Fatalf("aborted metric %v", v)
	}
	if r.models["a"].breaker.streak != 0 {
		t.Fatal("caller abort counted against the breaker")
	}
}

func TestModelTimeoutStopsRetries(t *testing.T) {
	var h hits
	a, _ := server(t, func(w http.ResponseWriter, r *http.Request) { h.add(r); w.WriteHeader(http.StatusServiceUnavailable) })
	m := openAIModel("a", a.URL)
	m.TTFTMs, m.TimeoutMs = 300, 300 // the 200 ms sleep fits once; the next 400 ms does not
	cfg := textConfig(m)
	cfg.Retry.MaxRetries = 5
	r, clk, _ := testRouter(t, cfg, nil)
	res := make(chan error, 1)
	go func() { _, err := oneshot(r, tctx(t)); res <- err }()
	clk.Advance(waitTimer(t, clk, func(d time.Duration) bool { return d == 200*time.Millisecond }))
	err := <-res
	if got := attemptSummary(err); got != "a:unavailable,a:unavailable" {
		t.Fatalf("attempts %s: retries must stop when the model's timeout cannot hold the next sleep", got)
	}
}

func TestBadRequests(t *testing.T) {
	r, _, _ := testRouter(t, DefaultConfig(), nil)
	ctx := tctx(t)
	for name, req := range map[string]OneshotRequest{
		"no messages": {Assignment: SlotSnappy},
		"bad role":    {Assignment: SlotSnappy, Messages: []Message{{Role: "system", Text: "x"}}},
		"blank text":  {Assignment: SlotSnappy, Messages: []Message{{Role: RoleUser, Text: "  "}}},
		"neg tokens":  {Assignment: SlotSnappy, Messages: []Message{{Role: RoleUser, Text: "x"}}, MaxTokens: -1},
		"audio slot":  {Assignment: SlotSpeak, Messages: []Message{{Role: RoleUser, Text: "x"}}},
	} {
		if _, err := r.Oneshot(ctx, req); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%s: got %v, want ErrBadRequest", name, err)
		}
	}
	if _, err := r.Converse(ctx, ConverseRequest{Text: " "}, nil); !errors.Is(err, ErrBadRequest) {
		t.Errorf("blank converse: %v", err)
	}
	if _, err := r.Speak(ctx, SpeakRequest{Text: "hi", SampleRate: 96000}, func(AudioChunk) error { return nil }); !errors.Is(err, ErrBadRequest) {
		t.Errorf("bad rate: %v", err)
	}
}

// TestTTFTOnWallClock runs the production clock: a model that sends headers
// and then nothing is abandoned by a real timer and the next model answers.
// Elapsed time is logged, never asserted.
func TestTTFTOnWallClock(t *testing.T) {
	got := make(chan struct{}, 1)
	var done chan struct{}
	a, done := server(t, func(w http.ResponseWriter, r *http.Request) { silent(got, done)(w, r) })
	b, _ := server(t, func(w http.ResponseWriter, r *http.Request) { sseReply(w, "from b") })
	ma, mb := openAIModel("a", a.URL), openAIModel("b", b.URL)
	ma.TTFTMs, ma.TimeoutMs = 150, 5000
	cfg := textConfig(ma, mb)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	r, err := New(cfg, nil, Options{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := time.Now()
	out, err := oneshot(r, tctx(t))
	t.Logf("answer after %v with a 150 ms TTFT budget on the first model", time.Since(start))
	if err != nil || out.Model != "b" {
		t.Fatalf("%+v %v", out, err)
	}
}
