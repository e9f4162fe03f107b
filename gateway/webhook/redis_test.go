package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/redis/go-redis/v9"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

// fastRetries is the 1/10/60 s schedule scaled down 100 times.
func fastRetries() backoff.BackOff {
	return backoff.WithMaxRetries(backoff.NewConstantBackOff(20*time.Millisecond), 3)
}

// flakyReceiver fails the first attempt of every event, records every
// event id it accepted, and the most requests it ever had in flight.
type flakyReceiver struct {
	mu       sync.Mutex
	tries    map[string]int
	accepted map[string]int
	inFlight atomic.Int32
	maxIn    atomic.Int32
}

func (f *flakyReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.maxIn.Load(); n > m && !f.maxIn.CompareAndSwap(m, n); m = f.maxIn.Load() {
	}
	_, _ = io.Copy(io.Discard, r.Body)
	time.Sleep(2 * time.Millisecond) // long enough for a second sender to overlap, were there one
	id := r.Header.Get(webhook.HeaderEventID)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries[id]++
	if f.tries[id] == 1 {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	f.accepted[id]++
	w.WriteHeader(http.StatusOK)
}

func (f *flakyReceiver) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.accepted)
}

func sharedNode(t *testing.T, rdb *redis.Client, name string, ep webhook.Endpoint) *webhook.Dispatcher {
	t.Helper()
	cfg := testConfig()
	cfg.Timeout = 500 * time.Millisecond
	d, err := webhook.NewDispatcher(cfg, webhook.NewRedisStore(rdb, name, time.Second), webhook.Options{
		Endpoints: map[string][]webhook.Endpoint{"acme": {ep}}, Clock: clock.Real{}, NewBackOff: fastRetries})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRedisStoreNoDeliveryLostWhenANodeDies: two nodes share the queue;
// every event fails its first attempt; node A dies mid-retry (its Redis
// connection cut, its lease left to lapse). Every event published on
// either node still reaches the receiver, never two requests at once.
func TestRedisStoreNoDeliveryLostWhenANodeDies(t *testing.T) {
	rs := redistest.Start(t)
	rcv := &flakyReceiver{tries: map[string]int{}, accepted: map[string]int{}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	ep := webhook.Endpoint{URL: srv.URL + "/hook", Secret: secret}
	rdbA := redis.NewClient(&redis.Options{Network: "unix", Addr: rs.Socket()})
	a := sharedNode(t, rdbA, "gw-a#1", ep)
	const events = 20
	publish := func(d *webhook.Dispatcher, from, to int) {
		for i := from; i < to; i++ {
			ev := turnEvent(t, time.Now(), fmt.Sprintf("prompt %d", i), "reply")
			if n, err := d.Publish("acme", ev); n != 1 || err != nil {
				t.Fatalf("publish %d: %d, %v", i, n, err)
			}
		}
	}
	publish(a, 0, events/2)
	// A dies while it holds the endpoint's lease and some first attempts
	// have failed (their retries pending).
	probe := rs.Client()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		rcv.mu.Lock()
		started := len(rcv.tries)
		rcv.mu.Unlock()
		keys, _ := probe.Keys(context.Background(), "vera:wh:lease:*").Result()
		holder := ""
		if len(keys) == 1 {
			holder, _ = probe.Get(context.Background(), keys[0]).Result()
		}
		if started >= 3 && started < events/2 && holder == "gw-a#1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node A never held the lease mid-run (tries %d, holder %q)", started, holder)
		}
	}
	b := sharedNode(t, rs.Client(), "gw-b#1", ep)
	defer closeDispatcher(t, b)
	publish(b, events/2, events)
	_ = rdbA.Close() // A's store calls fail from here: it can neither finish nor release
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = a.Close(ctx)
	cancel()

	for deadline := time.Now().Add(20 * time.Second); rcv.count() < events; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events delivered after node A died", rcv.count(), events)
		}
	}
	if m := rcv.maxIn.Load(); m != 1 {
		t.Fatalf("the endpoint had %d requests in flight at once; the lease allows one", m)
	}
	store := webhook.NewRedisStore(rs.Client(), "probe", time.Second)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if n, err := store.Pending(); err == nil && n == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending (%v)", n, err)
		}
	}
}

// TestRedisStoreDedupAndCap: an event id is queued once per endpoint, and
// the pending cap is the cluster's, not each node's.
func TestRedisStoreDedupAndCap(t *testing.T) {
	rs := redistest.Start(t)
	s1 := webhook.NewRedisStore(rs.Client(), "gw-a", time.Second)
	s2 := webhook.NewRedisStore(rs.Client(), "gw-b", time.Second)
	now := time.Now()
	d := func(id string) []webhook.Delivery {
		return []webhook.Delivery{{EventID: id, EventType: webhook.TypeTurnFinished, Partner: "acme", URL: "https://x.example/h", Body: []byte(`{}`), CreatedAt: now, NextAt: now}}
	}
	first := d("evt_1")
	if err := s1.Add(first, 2); err != nil {
		t.Fatal(err)
	}
	again := d("evt_1")
	if err := s2.Add(again, 2); err != nil || again[0].Seq != first[0].Seq {
		t.Fatalf("the same event on another node: seq %d vs %d, %v", again[0].Seq, first[0].Seq, err)
	}
	if err := s2.Add(d("evt_2"), 2); err != nil {
		t.Fatal(err)
	}
	if err := s1.Add(d("evt_3"), 2); err != webhook.ErrQueueFull {
		t.Fatalf("third event with max_pending 2 = %v, want ErrQueueFull", err)
	}
	if n, _ := s1.Pending(); n != 2 {
		t.Fatalf("pending = %d, want 2", n)
	}
	// Only one node holds the endpoint's lease at a time.
	if _, ok, _, _ := s1.Next("acme", "https://x.example/h", now); !ok {
		t.Fatal("first node did not get the lease")
	}
	if _, ok, _, _ := s2.Next("acme", "https://x.example/h", now); ok {
		t.Fatal("second node sent while the first holds the lease")
	}
	if err := s1.Release("acme", "https://x.example/h"); err != nil {
		t.Fatal(err)
	}
	if seq, ok, _, _ := s2.Next("acme", "https://x.example/h", now); !ok || seq != first[0].Seq {
		t.Fatalf("after release: %d %v, want the oldest (%d)", seq, ok, first[0].Seq)
	}
}
