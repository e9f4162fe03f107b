package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, redistest.LeakOptions...) }

const secret = "whsec_test_0123456789abcdef"

// waitTimer blocks until the dispatcher waits on a timer due at exactly at.
func waitTimer(t *testing.T, clk *clocktest.Clock, at time.Time) {
	t.Helper()
	clk.WaitArmed(t, func(a clocktest.Armed) bool { return a.At.Equal(at) })
}

type hit struct {
	at     time.Time
	header http.Header
	body   []byte
}

// receiverServer answers with statuses in order (the last one repeats) and
// reports every request.
func receiverServer(t *testing.T, clk clock.Clock, statuses ...int) (*httptest.Server, chan hit) {
	t.Helper()
	hits := make(chan hit, 16)
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		st := statuses[min(n, len(statuses)-1)]
		n++
		mu.Unlock()
		hits <- hit{at: clk.Now(), header: r.Header.Clone(), body: body}
		w.WriteHeader(st)
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

func openStore(t *testing.T, path string) *webhook.BoltStore {
	t.Helper()
	s, err := webhook.OpenBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testConfig is the default delivery config with private targets allowed:
// the receivers are httptest servers on loopback.
func testConfig() webhook.Config {
	c := webhook.DefaultConfig()
	c.AllowPrivateTargets = true
	return c
}

func newDispatcher(t *testing.T, store webhook.Store, clk clock.Clock, eps ...webhook.Endpoint) *webhook.Dispatcher {
	t.Helper()
	d, err := webhook.NewDispatcher(testConfig(), store, webhook.Options{
		Endpoints: map[string][]webhook.Endpoint{"acme": eps}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func closeDispatcher(t *testing.T, d *webhook.Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func recv(t *testing.T, hits chan hit) hit {
	t.Helper()
	select {
	case h := <-hits:
		return h
	case <-time.After(10 * time.Second): // hang guard only
		t.Fatal("no delivery arrived")
		return hit{}
	}
}

func turnEvent(t *testing.T, now time.Time, prompt, reply string) webhook.Event {
	t.Helper()
	ev, err := webhook.NewEvent(webhook.TypeTurnFinished, now, webhook.TurnFinished{
		SessionID: "ses_1", Turns: 1, Outcome: "completed", Prompt: prompt, Reply: reply})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// opensslHMAC computes the signature with openssl, independently of Go's
// crypto.
func opensslHMAC(t *testing.T, key string, msg []byte) string {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed: the independent signature check needs it")
	}
	cmd := exec.Command("openssl", "dgst", "-sha256", "-hmac", key)
	cmd.Stdin = bytes.NewReader(msg)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	_, hexsum, ok := strings.Cut(strings.TrimSpace(string(out)), "= ")
	if !ok {
		t.Fatalf("openssl output %q", out)
	}
	return hexsum
}

func parseSig(t *testing.T, h string) (string, string) {
	t.Helper()
	ts, v1, ok := strings.Cut(h, ",")
	if !ok || !strings.HasPrefix(ts, "t=") || !strings.HasPrefix(v1, "v1=") {
		t.Fatalf("VERA-Signature %q is not t=<unix>,v1=<hex>", h)
	}
	return ts[2:], v1[3:]
}

func TestSignatureMatchesOpenSSL(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1764550000, 0))
	srv, hits := receiverServer(t, clk, http.StatusNoContent)
	d := newDispatcher(t, openStore(t, filepath.Join(t.TempDir(), "q.db")), clk,
		webhook.Endpoint{URL: srv.URL, Secret: secret})
	defer closeDispatcher(t, d)
	ev := turnEvent(t, clk.Now(), "héllo \"there\"\nline two", "a reply, with commas = and ☕")
	if n, err := d.Publish("acme", ev); err != nil || n != 1 {
		t.Fatalf("Publish = %d, %v", n, err)
	}
	h := recv(t, hits)
	ts, v1 := parseSig(t, h.header.Get(webhook.HeaderSignature))
	if ts != "1764550000" {
		t.Errorf("t = %s, want the clock's 1764550000", ts)
	}
	want := opensslHMAC(t, secret, append([]byte(ts+"."), h.body...))
	if v1 != want {
		t.Fatalf("v1 = %s, openssl says %s", v1, want)
	}
	if got := h.header.Get(webhook.HeaderEventID); got != ev.ID {
		t.Errorf("VERA-Event-Id = %q, want %q", got, ev.ID)
	}
	var body struct {
		ID   string               `json:"id"`
		Type string               `json:"type"`
		Data webhook.TurnFinished `json:"data"`
	}
	if err := json.Unmarshal(h.body, &body); err != nil {
		t.Fatal(err)
	}
	if body.ID != ev.ID || body.Type != "turn_finished" || body.Data.Prompt != "héllo \"there\"\nline two" || body.Data.SessionID != "ses_1" {
		t.Errorf("body = %+v", body)
	}
	// A wrong key must not verify: the comparison can fail.
	if opensslHMAC(t, secret+"x", append([]byte(ts+"."), h.body...)) == v1 {
		t.Fatal("a different key produced the same signature")
	}
}

func TestRetriesAfter1s10s60sThenFailed(t *testing.T) {
	t0 := time.Unix(1764550000, 0)
	clk := clocktest.NewClock(t0)
	srv, hits := receiverServer(t, clk, http.StatusInternalServerError)
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	reg := prometheus.NewRegistry()
	d, err := webhook.NewDispatcher(testConfig(), store, webhook.Options{
		Endpoints: map[string][]webhook.Endpoint{"acme": {{URL: srv.URL, Secret: secret}}}, Clock: clk, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer closeDispatcher(t, d)
	ev := turnEvent(t, t0, "p", "r")
	if _, err := d.Publish("acme", ev); err != nil {
		t.Fatal(err)
	}
	var got []hit
	got = append(got, recv(t, hits))
	for _, wait := range []time.Duration{time.Second, 10 * time.Second, time.Minute} {
		next := clk.Now().Add(wait)
		waitTimer(t, clk, next)
		clk.Advance(wait)
		got = append(got, recv(t, hits))
	}
	wantAt := []time.Duration{0, time.Second, 11 * time.Second, 71 * time.Second}
	for i, h := range got {
		if h.at.Sub(t0) != wantAt[i] {
			t.Errorf("attempt %d at +%v, want +%v", i+1, h.at.Sub(t0), wantAt[i])
		}
		if id := h.header.Get(webhook.HeaderEventID); id != ev.ID {
			t.Errorf("attempt %d VERA-Event-Id = %q, want %q (stable across retries)", i+1, id, ev.ID)
		}
		if !bytes.Equal(h.body, got[0].body) {
			t.Errorf("attempt %d body changed", i+1)
		}
		ts, _ := parseSig(t, h.header.Get(webhook.HeaderSignature))
		if ts != strconv.FormatInt(h.at.Unix(), 10) {
			t.Errorf("attempt %d signed at t=%s, want the attempt's time %d", i+1, ts, h.at.Unix())
		}
	}
	// No fifth attempt, and the delivery is recorded as failed.
	waitFailed(t, store, 1)
	failed, _ := store.Failed()
	if f := failed[0]; f.Attempts != 4 || f.EventID != ev.ID || f.LastError != "receiver answered 500" || !f.FailedAt.Equal(t0.Add(71*time.Second)) {
		t.Errorf("failed = %+v", f)
	}
	if n, _ := store.Pending(); n != 0 {
		t.Errorf("pending = %d after failure", n)
	}
	if got := metricText(t, reg); !strings.Contains(got, `vera_webhook_attempts_total{result="retry"} 3`) ||
		!strings.Contains(got, `vera_webhook_attempts_total{result="failed"} 1`) {
		t.Errorf("metrics:\n%s", got)
	}
	clk.Advance(time.Hour)
	select {
	case h := <-hits:
		t.Fatalf("a fifth attempt at +%v", h.at.Sub(t0))
	default:
	}
}

func metricText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			fmt.Fprintf(&sb, "%s{result=%q} %g\n", mf.GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
		}
	}
	return sb.String()
}

// waitFailed waits for the dispatcher to record n failures.
func waitFailed(t *testing.T, s *webhook.BoltStore, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // hang guard only
	for {
		f, err := s.Failed()
		if err != nil {
			t.Fatal(err)
		}
		if len(f) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d failed deliveries, want %d", len(f), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitPending(t *testing.T, s *webhook.BoltStore, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // hang guard only
	for {
		p, err := s.Pending()
		if err != nil {
			t.Fatal(err)
		}
		if p == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pending deliveries, want %d", p, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRetrySucceedsOnSecondAttempt(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1764550000, 0))
	srv, hits := receiverServer(t, clk, http.StatusServiceUnavailable, http.StatusOK)
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	d := newDispatcher(t, store, clk, webhook.Endpoint{URL: srv.URL, Secret: secret})
	defer closeDispatcher(t, d)
	ev := turnEvent(t, clk.Now(), "p", "r")
	if _, err := d.Publish("acme", ev); err != nil {
		t.Fatal(err)
	}
	first := recv(t, hits)
	waitTimer(t, clk, clk.Now().Add(time.Second))
	clk.Advance(time.Second)
	second := recv(t, hits)
	if first.header.Get(webhook.HeaderEventID) != second.header.Get(webhook.HeaderEventID) {
		t.Fatal("event id changed between attempts")
	}
	waitPending(t, store, 0)
	if f, _ := store.Failed(); len(f) != 0 {
		t.Fatalf("failed = %+v", f)
	}
}

func TestQueueSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	t0 := time.Unix(1764550000, 0)
	clk := clocktest.NewClock(t0)
	srv, hits := receiverServer(t, clk, http.StatusBadGateway, http.StatusOK)
	ep := webhook.Endpoint{URL: srv.URL, Secret: secret}

	store := openStore(t, path)
	d := newDispatcher(t, store, clk, ep)
	ev := turnEvent(t, t0, "p", "r")
	if _, err := d.Publish("acme", ev); err != nil {
		t.Fatal(err)
	}
	recv(t, hits)
	waitTimer(t, clk, t0.Add(time.Second)) // the failure is recorded
	closeDispatcher(t, d)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	// A new process: the delivery is still there, due one second after the
	// first attempt, and goes out with the same event id.
	store = openStore(t, path)
	defer store.Close()
	if n, _ := store.Pending(); n != 1 {
		t.Fatalf("pending after reopen = %d, want 1", n)
	}
	clk2 := clocktest.NewClock(t0.Add(30 * time.Second))
	d = newDispatcher(t, store, clk2, ep)
	defer closeDispatcher(t, d)
	h := recv(t, hits)
	if id := h.header.Get(webhook.HeaderEventID); id != ev.ID {
		t.Fatalf("event id after restart = %q, want %q", id, ev.ID)
	}
	waitPending(t, store, 0)
}

func TestStoreKeepsOrderAndCapsEachQueue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	s := openStore(t, path)
	t0 := time.Unix(1764550000, 0)
	ds := []webhook.Delivery{
		{EventID: "evt_a", Partner: "p1", URL: "https://a", NextAt: t0},
		{EventID: "evt_b", Partner: "p1", URL: "https://a", NextAt: t0.Add(time.Minute)},
		{EventID: "evt_c", Partner: "p2", URL: "https://a", NextAt: t0.Add(-time.Second)},
	}
	if err := s.Add(ds, 2); err != nil {
		t.Fatal(err)
	}
	// p1's queue for https://a is full; the same URL for p2, and p1's other
	// URL, are other queues.
	if err := s.Add([]webhook.Delivery{{EventID: "evt_d", Partner: "p1", URL: "https://a"}}, 2); !errors.Is(err, webhook.ErrQueueFull) {
		t.Fatalf("3rd Add to a queue of max 2 = %v, want ErrQueueFull", err)
	}
	if err := s.Add([]webhook.Delivery{{EventID: "evt_e", Partner: "p2", URL: "https://a"}, {EventID: "evt_f", Partner: "p1", URL: "https://b"}}, 2); err != nil {
		t.Fatalf("other queues: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened, the counts are rebuilt: p1's queue is still full.
	s = openStore(t, path)
	defer s.Close()
	if err := s.Add([]webhook.Delivery{{EventID: "evt_g", Partner: "p1", URL: "https://a"}}, 2); !errors.Is(err, webhook.ErrQueueFull) {
		t.Fatalf("after reopen: %v, want ErrQueueFull", err)
	}
	var order []string
	if err := s.Each(func(d webhook.Delivery) error { order = append(order, d.EventID); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "evt_a,evt_b,evt_c,evt_e,evt_f" {
		t.Fatalf("Each order = %v", order)
	}
	if d, ok, err := s.Get(ds[1].Seq); err != nil || !ok || d.EventID != "evt_b" || !d.NextAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Get = %+v %v %v", d, ok, err)
	}
	// Done frees a place in its queue.
	if err := s.Done(ds[0].Seq); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ds[0].Seq); ok {
		t.Fatal("Get after Done found the delivery")
	}
	if err := s.Add([]webhook.Delivery{{EventID: "evt_h", Partner: "p1", URL: "https://a"}}, 2); err != nil {
		t.Fatalf("after Done: %v", err)
	}
	ds[0].Seq = 0 // no longer pending: recorded as failed, the oldest, so dropped first
	// Failed keeps the newest `keep`.
	for _, d := range []webhook.Delivery{ds[1], ds[2], ds[0]} {
		if err := s.Fail(d, 2); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := s.Failed()
	if len(f) != 2 || f[0].EventID != "evt_b" || f[1].EventID != "evt_c" {
		t.Fatalf("Failed = %+v", f)
	}
	if n, _ := s.Pending(); n != 3 {
		t.Fatalf("pending = %d, want 3 (e, f, h)", n)
	}
}

func TestScheduleIsExactly1s10s60s(t *testing.T) {
	var b backoff.BackOff = &webhook.Schedule{}
	for round := range 2 {
		var got []time.Duration
		for range 5 {
			got = append(got, b.NextBackOff())
		}
		want := []time.Duration{time.Second, 10 * time.Second, time.Minute, backoff.Stop, backoff.Stop}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("round %d: NextBackOff #%d = %v, want %v", round, i+1, got[i], want[i])
			}
		}
		b.Reset()
	}
}

func TestPublishRoutesBySubscriptionAndPartner(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1764550000, 0))
	srv, hits := receiverServer(t, clk, http.StatusOK)
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	d := newDispatcher(t, store, clk,
		webhook.Endpoint{URL: srv.URL + "/actions", Secret: secret, Events: []string{webhook.TypeActionApproved}},
		webhook.Endpoint{URL: srv.URL + "/all", Secret: secret})
	defer closeDispatcher(t, d)
	ev, err := webhook.NewEvent(webhook.TypeActionApproved, clk.Now(), webhook.ActionEvent{ActionID: "act_1", ActionType: "send_message", Surface: "glasses", Via: "key"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.Publish("acme", ev); err != nil || n != 2 {
		t.Fatalf("approved: Publish = %d, %v; want 2", n, err)
	}
	recv(t, hits)
	recv(t, hits)
	if n, err := d.Publish("acme", turnEvent(t, clk.Now(), "p", "r")); err != nil || n != 1 {
		t.Fatalf("turn_finished: Publish = %d, %v; want 1 (only the catch-all endpoint)", n, err)
	}
	recv(t, hits)
	if n, err := d.Publish("other", ev); err != nil || n != 0 {
		t.Fatalf("another partner: Publish = %d, %v; want 0", n, err)
	}
	if _, err := d.Publish("acme", webhook.Event{Type: "turn.started"}); !errors.Is(err, webhook.ErrUnknownEvent) {
		t.Fatalf("unknown type: %v", err)
	}
	if _, err := webhook.NewEvent("nope", clk.Now(), nil); !errors.Is(err, webhook.ErrUnknownEvent) {
		t.Fatalf("NewEvent unknown type: %v", err)
	}
	waitPending(t, store, 0)
}

func TestPublishAfterCloseFails(t *testing.T) {
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	d := newDispatcher(t, store, clocktest.NewClock(time.Unix(0, 0)), webhook.Endpoint{URL: "https://127.0.0.1:1/x", Secret: secret})
	closeDispatcher(t, d)
	if _, err := d.Publish("acme", turnEvent(t, time.Unix(0, 0), "", "")); !errors.Is(err, webhook.ErrClosed) {
		t.Fatalf("Publish after Close = %v", err)
	}
}

func TestNewDispatcherRefusesEndpointWithoutSecret(t *testing.T) {
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	_, err := webhook.NewDispatcher(webhook.DefaultConfig(), store, webhook.Options{
		Endpoints: map[string][]webhook.Endpoint{"acme": {{URL: "https://x.example/h"}}}})
	if !errors.Is(err, webhook.ErrNoSecret) {
		t.Fatalf("err = %v", err)
	}
}

func TestValidateEndpoints(t *testing.T) {
	good := webhook.Endpoint{URL: "https://partner.example/vera/events", Secret: secret, Events: []string{"turn_finished", "action.result"}}
	cases := []struct {
		name string
		ep   webhook.Endpoint
		dev  bool
		want string
	}{
		{"https ok", good, false, ""},
		{"http outside dev", webhook.Endpoint{URL: "http://partner.example/h", Secret: secret}, false, "k[0].url: \"http://partner.example/h\" must use https"},
		{"http in dev", webhook.Endpoint{URL: "http://127.0.0.1:9000/h", Secret: secret}, true, ""},
		{"ftp", webhook.Endpoint{URL: "ftp://partner.example/h", Secret: secret}, true, "must use https"},
		{"relative", webhook.Endpoint{URL: "/h", Secret: secret}, false, "not an absolute URL"},
		{"userinfo", webhook.Endpoint{URL: "https://u:p@partner.example/h", Secret: secret}, false, "without credentials"},
		{"empty url", webhook.Endpoint{Secret: secret}, false, "k[0].url: must not be empty"},
		{"env unset", webhook.Endpoint{URL: good.URL, SecretEnv: "VERA_WH"}, false, "k[0].secret_env: environment variable VERA_WH is empty or unset"},
		{"no secret", webhook.Endpoint{URL: good.URL}, false, "k[0].secret: set secret_env"},
		{"short secret", webhook.Endpoint{URL: good.URL, Secret: "short"}, false, "k[0].secret: must be at least 16"},
		{"unknown event", webhook.Endpoint{URL: good.URL, Secret: secret, Events: []string{"turn.finished"}}, false, "k[0].events: unknown event \"turn.finished\""},
	}
	for _, c := range cases {
		err := webhook.ValidateEndpoints("k", []webhook.Endpoint{c.ep}, c.dev)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
	if err := webhook.ValidateEndpoints("k", []webhook.Endpoint{good, good}, false); err == nil || !strings.Contains(err.Error(), "k[1].url: ") {
		t.Errorf("duplicate url: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := webhook.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := webhook.DefaultConfig()
	c.Timeout, c.MaxPending, c.KeepFailed = 0, 0, -1
	err := c.Validate()
	for _, k := range []string{"webhook_delivery.timeout", "webhook_delivery.max_pending", "webhook_delivery.keep_failed"} {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("Validate() = %v, want it to name %s", err, k)
		}
	}
}

// TestReceiverExample runs the docs' receiver against real deliveries.
func TestReceiverExample(t *testing.T) {
	t0 := time.Unix(1764550000, 0)
	clk := clocktest.NewClock(t0)
	var mu sync.Mutex
	var handled []string
	rc := &receiver{secret: secret, now: clk.Now, seen: map[string]time.Time{}, handle: func(typ string, body []byte) {
		mu.Lock()
		handled = append(handled, typ)
		mu.Unlock()
	}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	d := newDispatcher(t, store, clk, webhook.Endpoint{URL: srv.URL, Secret: secret})
	defer closeDispatcher(t, d)
	ev := turnEvent(t, t0, "p", "r")
	if _, err := d.Publish("acme", ev); err != nil {
		t.Fatal(err)
	}
	waitPending(t, store, 0)
	// The same event again (a retry the receiver already answered): 2xx, not handled twice.
	if _, err := d.Publish("acme", ev); err != nil {
		t.Fatal(err)
	}
	waitPending(t, store, 0)
	mu.Lock()
	if len(handled) != 1 || handled[0] != "turn_finished" {
		t.Fatalf("handled = %v, want one turn_finished", handled)
	}
	mu.Unlock()

	body := []byte(`{"id":"evt_x","type":"turn_finished","created":1,"data":{}}`)
	post := func(sig string) int {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("VERA-Signature", sig)
		req.Header.Set("VERA-Event-Id", "evt_x")
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, req)
		return w.Code
	}
	if c := post(webhook.Sign(secret, t0.Add(-5*time.Minute-time.Second), body)); c != http.StatusUnauthorized {
		t.Errorf("5 min 1 s old timestamp: %d, want 401", c)
	}
	if c := post(webhook.Sign(secret, t0.Add(-4*time.Minute), body)); c != http.StatusNoContent {
		t.Errorf("4 min old timestamp: %d, want 204", c)
	}
	if c := post(webhook.Sign("another_secret_0123456", t0, body)); c != http.StatusUnauthorized {
		t.Errorf("wrong secret: %d, want 401", c)
	}
	if c := post("v1=00"); c != http.StatusUnauthorized {
		t.Errorf("no timestamp: %d, want 401", c)
	}
	if err := verifySignature(secret, webhook.Sign(secret, t0, body), append(body, ' '), t0); err == nil {
		t.Error("a changed body verified")
	}
}

// TestDocsExampleIsVerbatim keeps docs/webhooks.md's receiver identical to
// the tested one.
func TestDocsExampleIsVerbatim(t *testing.T) {
	src, err := os.ReadFile("receiver_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	begin := strings.Index(s, "// BEGIN receiver\n")
	end := strings.Index(s, "// END receiver")
	if begin < 0 || end < 0 {
		t.Fatal("markers missing")
	}
	code := strings.TrimSpace(s[begin+len("// BEGIN receiver\n") : end])
	if !strings.Contains(string(doc), code) {
		t.Fatal("docs/webhooks.md does not contain the receiver of receiver_example_test.go verbatim")
	}
}

func TestTurnReporterCountsAndShapes(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1764550000, 0))
	srv, hits := receiverServer(t, clk, http.StatusOK)
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	d := newDispatcher(t, store, clk, webhook.Endpoint{URL: srv.URL, Secret: secret})
	defer closeDispatcher(t, d)
	r := webhook.NewTurnReporter(d)
	turns := []webhook.TurnFinished{
		{SessionID: "ses_1", Outcome: webhook.OutcomeCompleted, Prompt: "hi", Reply: "hello"},
		{SessionID: "ses_1", Outcome: webhook.OutcomeCompleted, Spawned: true, Prompt: "inbox text", Reply: "your ride is here"},
		{SessionID: "ses_2", Outcome: webhook.OutcomeInterrupted, Prompt: "tell me", Reply: "well"},
	}
	for _, tf := range turns {
		if err := r.Finished("acme", tf); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`{"session_id":"ses_1","turns":1,"spawned":false,"outcome":"completed","prompt":"hi","reply":"hello"}`,
		`{"session_id":"ses_1","turns":2,"spawned":true,"outcome":"completed","prompt":"","reply":"your ride is here"}`,
		`{"session_id":"ses_2","turns":1,"spawned":false,"outcome":"interrupted","prompt":"tell me","reply":"well"}`,
	}
	got := map[string]bool{}
	for range want {
		var ev struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(recv(t, hits).body, &ev); err != nil || ev.Type != "turn_finished" {
			t.Fatalf("event %v %v", ev.Type, err)
		}
		got[string(ev.Data)] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing %s in %v", w, got)
		}
	}
	if err := r.Finished("acme", webhook.TurnFinished{SessionID: "ses_1", Outcome: "done"}); err == nil {
		t.Error("unknown outcome accepted")
	}
	r.Forget("ses_1")
	if err := r.Finished("acme", turns[0]); err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Data webhook.TurnFinished `json:"data"`
	}
	_ = json.Unmarshal(recv(t, hits).body, &ev)
	if ev.Data.Turns != 1 {
		t.Errorf("turns after Forget = %d", ev.Data.Turns)
	}
	waitPending(t, store, 0)
}
