package router

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimer blocks until the router is waiting on a timer whose duration
// matches ok and returns that duration.
func waitTimer(t testing.TB, clk *clocktest.Clock, ok func(time.Duration) bool) time.Duration {
	t.Helper()
	return clk.WaitArmed(t, func(a clocktest.Armed) bool { return ok(a.D) }).D
}

// testStart is where every test clock starts.
var testStart = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func newFakeClock() *clocktest.Clock { return clocktest.NewClock(testStart) }

// sleepTimer matches a backoff sleep: test models use TTFT 5s and timeout
// 60s (less what has passed), and test sleeps are shorter than either.
func sleepTimer(d time.Duration) bool { return d < testTTFT }

const (
	testTTFT    = 5 * time.Second
	testTimeout = 60 * time.Second
)

// testRouter builds a router on cfg with a fake clock, a private registry
// and an HTTP client whose idle connections are closed at cleanup.
func testRouter(t testing.TB, cfg Config, env map[string]string) (*Router, *clocktest.Clock, *prometheus.Registry) {
	t.Helper()
	clk := newFakeClock()
	reg := prometheus.NewRegistry()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	r, err := New(cfg, func(k string) string { return env[k] }, Options{Registerer: reg, Clock: clk, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		r.Close()
	})
	return r, clk, reg
}

// textConfig is a config whose slot "snappy" holds the given models.
func textConfig(models ...ModelConfig) Config {
	c := DefaultConfig()
	c.Retry.Jitter = 0
	var names []string
	for _, m := range models {
		if m.TTFTMs == 0 {
			m.TTFTMs = int(testTTFT / time.Millisecond)
		}
		if m.TimeoutMs == 0 {
			m.TimeoutMs = int(testTimeout / time.Millisecond)
		}
		c.Models = append(c.Models, m)
		names = append(names, m.Name)
	}
	c.Slots = map[string][]string{SlotSnappy: names}
	if len(models) > 0 && models[0].Provider == ProviderOpenAI {
		// Keep the embedded decoders out of text tests: loading them is slow.
		c.Slots[SlotListen] = names[:1]
	}
	return c
}

func openAIModel(name, url string) ModelConfig {
	return ModelConfig{Name: name, Provider: ProviderOpenAI, BaseURL: url, Model: "m-" + name}
}

// server starts an httptest server closed at cleanup; handlers that block
// also watch done, closed first.
func server(t testing.TB, h http.HandlerFunc) (*httptest.Server, chan struct{}) {
	t.Helper()
	done := make(chan struct{})
	s := httptest.NewServer(h)
	t.Cleanup(func() {
		close(done)
		s.Close()
	})
	return s, done
}

// sseReply writes a well-formed chat completion stream of the given deltas.
func sseReply(w http.ResponseWriter, deltas ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, d := range deltas {
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", d)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// hits counts requests per server and records their idempotency keys.
type hits struct {
	mu   sync.Mutex
	keys []string
}

func (h *hits) add(r *http.Request) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.keys = append(h.keys, r.Header.Get("Idempotency-Key"))
	return len(h.keys)
}

func (h *hits) n() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.keys)
}

func attemptSummary(err error) string {
	nm, ok := err.(*NoModelError)
	if !ok {
		return fmt.Sprintf("not a NoModelError: %v", err)
	}
	var parts []string
	for _, a := range nm.Attempts {
		parts = append(parts, a.Model+":"+string(a.Kind))
	}
	return strings.Join(parts, ",")
}

func oneshot(r *Router, ctx context.Context) (OneshotResponse, error) {
	return r.Oneshot(ctx, OneshotRequest{Assignment: SlotSnappy, SystemPrompt: "Name this in five words.", Messages: []Message{{Role: RoleUser, Text: "plot a course for the shiny buttons"}}, MaxTokens: 32})
}

// metricValue reads a counter or gauge.
func metricValue(t testing.TB, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	t.Fatal("not a counter or gauge")
	return 0
}

// seriesCount counts the series of a metric family in reg.
func seriesCount(t testing.TB, reg *prometheus.Registry, name string) int {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return len(f.Metric)
		}
	}
	return 0
}

// tctx is a context cancelled when the test ends, so a failed test never
// leaves a call blocked on the fake clock.
func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
