package webhook_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/webhook"
)

func BenchmarkSign(b *testing.B) {
	body := bytes.Repeat([]byte(`{"id":"evt_x","type":"turn_finished","data":{"reply":"hello"}}`), 16) // ~1 KiB
	t := time.Unix(1764550000, 0)
	b.ReportAllocs()
	for b.Loop() {
		webhook.Sign(secret, t, body)
	}
}

// BenchmarkStoreAdd is one durable enqueue (a bbolt commit with fsync).
func BenchmarkStoreAdd(b *testing.B) {
	s, err := webhook.OpenBoltStore(filepath.Join(b.TempDir(), "q.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	d := webhook.Delivery{EventID: "evt_x", URL: "https://x", Body: bytes.Repeat([]byte("x"), 1024)}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Add([]webhook.Delivery{d}, 1<<30); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeliveryBesideSlowPartner is one partner's delivery latency
// (median-delivery-ms: Publish to the receiver's handler, the neighbours'
// publishing excluded), on the real clock: alone, and beside
// another partner whose endpoint takes 2 s per request and a third whose
// endpoint answers 500 (both kept busy with a new event every iteration).
// The difference of the two is what another partner's slow endpoint adds
// (target < 100 ms).
//
//	go test -tags nolibopusfile -run XXX -bench DeliveryBesideSlowPartner -benchtime 100x ./gateway/webhook/
func BenchmarkDeliveryBesideSlowPartner(b *testing.B) {
	for _, neighbours := range []bool{false, true} {
		name := "alone"
		if neighbours {
			name = "beside-slow-and-failing"
		}
		b.Run(name, func(b *testing.B) { benchDelivery(b, neighbours) })
	}
}

func benchDelivery(b *testing.B, neighbours bool) {
	got := make(chan struct{}, 1)
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- struct{}{} }))
	defer fast.Close()
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-stop:
		}
	}))
	defer slow.Close()
	defer close(stop)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer failing.Close()
	s, err := webhook.OpenBoltStore(filepath.Join(b.TempDir(), "q.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	cfg := webhook.DefaultConfig()
	cfg.AllowPrivateTargets = true
	d, err := webhook.NewDispatcher(cfg, s, webhook.Options{Endpoints: map[string][]webhook.Endpoint{
		"fast": {{URL: fast.URL, Secret: secret}}, "slow": {{URL: slow.URL, Secret: secret}},
		"failing": {{URL: failing.URL, Secret: secret}}}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.Close(ctx)
	}()
	ev := func() webhook.Event {
		e, _ := webhook.NewEvent(webhook.TypeTurnFinished, time.Now(), webhook.TurnFinished{SessionID: "ses_1", Outcome: "completed"})
		return e
	}
	var lat []time.Duration
	for b.Loop() {
		if neighbours {
			_, _ = d.Publish("slow", ev())
			_, _ = d.Publish("failing", ev())
		}
		t0 := time.Now()
		if _, err := d.Publish("fast", ev()); err != nil {
			b.Fatal(err)
		}
		<-got
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "median-delivery-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Millisecond), "p99-delivery-ms")
}
