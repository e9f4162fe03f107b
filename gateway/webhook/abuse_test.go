package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

// Attacks on webhook delivery, each with the refusal or isolation it must
// get. THREATS.md lists them with their mitigations.

// TestAbuseSlowAndFailingPartnersDoNotDelayAnother: partner "slow" has an
// endpoint that never answers, partner "failing" one that answers 500 and
// has filled its queue; partner "good" still has its event stored and
// delivered while slow's request hangs, and slow's own second endpoint is
// not held up either.
func TestAbuseSlowAndFailingPartnersDoNotDelayAnother(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1764550000, 0))
	release := make(chan struct{})
	var slowIn atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowIn.Add(1)
		<-release
	}))
	defer slow.Close()
	defer close(release) // before Close: the hanging handler returns first
	failing, failHits := receiverServer(t, clk, http.StatusInternalServerError)
	good, goodHits := receiverServer(t, clk, http.StatusOK)
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	cfg := testConfig()
	cfg.MaxPending = 3
	d, err := webhook.NewDispatcher(cfg, store, webhook.Options{Clock: clk, Endpoints: map[string][]webhook.Endpoint{
		"slow":    {{URL: slow.URL + "/hang", Secret: secret}, {URL: good.URL + "/slow-partner-second", Secret: secret}},
		"failing": {{URL: failing.URL, Secret: secret}},
		"good":    {{URL: good.URL + "/good", Secret: secret}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeDispatcher(t, d)

	if n, err := d.Publish("slow", turnEvent(t, clk.Now(), "p", "r")); n != 2 || err != nil {
		t.Fatalf("slow Publish = %d, %v", n, err)
	}
	recv(t, goodHits) // slow partner's second endpoint, while its first hangs
	// The failing partner fills its queue: the 4th event is refused, for it alone.
	for i := range 4 {
		n, err := d.Publish("failing", turnEvent(t, clk.Now(), "p", "r"))
		if i < 3 && (n != 1 || err != nil) {
			t.Fatalf("failing Publish %d = %d, %v", i, n, err)
		}
		if i == 3 && (n != 0 || !errors.Is(err, webhook.ErrQueueFull)) {
			t.Fatalf("failing Publish over its cap = %d, %v; want ErrQueueFull", n, err)
		}
	}
	recv(t, failHits)
	ev := turnEvent(t, clk.Now(), "p", "r")
	if n, err := d.Publish("good", ev); n != 1 || err != nil {
		t.Fatalf("good Publish beside a full queue = %d, %v; want stored", n, err)
	}
	if h := recv(t, goodHits); h.header.Get(webhook.HeaderEventID) != ev.ID {
		t.Fatalf("good got %s, want its own event", h.header.Get(webhook.HeaderEventID))
	}
	if slowIn.Load() != 1 {
		t.Fatalf("slow endpoint got %d requests, want its first still hanging", slowIn.Load())
	}
	// Everything not yet delivered is stored: slow's hanging event and the
	// failing partner's three.
	waitPending(t, store, 4)
}

// TestAbuseInternalWebhookTargetsRefusedAtStart: URLs that would make the
// gateway post to itself, its network or its cloud's metadata service fail
// at start, naming the key that allows them.
func TestAbuseInternalWebhookTargetsRefusedAtStart(t *testing.T) {
	refused := []string{
		"https://127.0.0.1/h", "https://127.8.9.10:8443/h", "https://[::1]/h", "https://169.254.169.254/latest/meta-data",
		"https://10.0.0.5/h", "https://172.16.3.4/h", "https://192.168.1.1/h", "https://100.100.100.200/h",
		"https://[fd00:ec2::254]/h", "https://[fe80::1]/h", "https://[::ffff:127.0.0.1]/h", "https://[::ffff:a9fe:a9fe]/h",
		"https://[64:ff9b::a9fe:a9fe]/h", "https://[2002:7f00:1::]/h", "https://0.0.0.0/h", "https://192.0.0.192/h",
		"https://255.255.255.255/h", "https://localhost/h", "https://LOCALHOST./h", "https://api.localhost/h",
		"https://metadata.google.internal/computeMetadata/v1", "https://instance-data/h", "https://2130706433/h",
		"https://0x7f.1/h", "https://017700000001/h", "https://127.1/h",
	}
	allowed := []string{"https://partner.example/vera/events", "https://8.8.8.8/h", "https://[2606:4700::1111]/h", "https://1e100.net/h", "https://cafe.be/h"}
	cfg := webhook.DefaultConfig()
	for _, u := range refused {
		err := webhook.ValidateTargets("auth.keys[0].webhooks", []webhook.Endpoint{{URL: u, Secret: secret}}, cfg, false)
		if err == nil || !strings.Contains(err.Error(), "auth.keys[0].webhooks[0].url") || !strings.Contains(err.Error(), "webhook_delivery.allow_private_targets: true") {
			t.Errorf("%s: %v, want refused naming the key and webhook_delivery.allow_private_targets", u, err)
		}
		store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
		if _, err := webhook.NewDispatcher(cfg, store, webhook.Options{Endpoints: map[string][]webhook.Endpoint{"acme": {{URL: u, Secret: secret}}}}); err == nil {
			t.Errorf("NewDispatcher accepted %s", u)
		}
		store.Close()
	}
	for _, u := range allowed {
		if err := webhook.ValidateTargets("k", []webhook.Endpoint{{URL: u, Secret: secret}}, cfg, false); err != nil {
			t.Errorf("%s: %v, want allowed", u, err)
		}
	}
	cfg.AllowPrivateTargets = true
	for _, u := range refused {
		if err := webhook.ValidateTargets("k", []webhook.Endpoint{{URL: u, Secret: secret}}, cfg, false); err != nil {
			t.Errorf("%s with allow_private_targets: %v", u, err)
		}
	}
	// Dev mode allows loopback receivers, nothing else internal.
	dev := webhook.DefaultConfig()
	if err := webhook.ValidateTargets("webhooks", []webhook.Endpoint{{URL: "http://127.0.0.1:9000/h"}, {URL: "http://localhost:9000/h"}}, dev, true); err != nil {
		t.Errorf("dev loopback: %v", err)
	}
	if err := webhook.ValidateTargets("webhooks", []webhook.Endpoint{{URL: "http://169.254.169.254/h"}}, dev, true); err == nil {
		t.Error("dev mode allowed the metadata address")
	}
}

// TestAbuseDNSRebindingRefusedAtDial: a public-looking endpoint host whose
// DNS answer is 127.0.0.1 passes the start-up check, but the dial to the
// resolved address is refused, so the loopback server never sees a
// request; the failure is recorded and retried as any other.
func TestAbuseDNSRebindingRefusedAtDial(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1764550000, 0))
	var hits atomic.Int32
	inner := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer inner.Close()
	_, port, _ := net.SplitHostPort(inner.Listener.Addr().String())
	dns, queries := rebindingDNS(t, "hooks.partner.example.", [4]byte{127, 0, 0, 1})
	store := openStore(t, filepath.Join(t.TempDir(), "q.db"))
	defer store.Close()
	d, err := webhook.NewDispatcher(webhook.DefaultConfig(), store, webhook.Options{Clock: clk, Resolver: dns,
		Endpoints: map[string][]webhook.Endpoint{"acme": {{URL: "https://hooks.partner.example:" + port + "/h", Secret: secret}}}})
	if err != nil {
		t.Fatalf("a public name passed at start: %v", err)
	}
	defer closeDispatcher(t, d)
	if _, err := d.Publish("acme", turnEvent(t, clk.Now(), "p", "r")); err != nil {
		t.Fatal(err)
	}
	waitTimer(t, clk, clk.Now().Add(time.Second)) // the first attempt failed and a retry is due in 1 s
	var last webhook.Delivery
	if err := store.Each(func(dl webhook.Delivery) error { last = dl; return nil }); err != nil {
		t.Fatal(err)
	}
	if last.Attempts != 1 || !strings.Contains(last.LastError, "not allowed") || !strings.Contains(last.LastError, "127.0.0.1 is a loopback address") {
		t.Fatalf("delivery = %+v, want one attempt refused at the dial", last)
	}
	if queries.Load() == 0 || hits.Load() != 0 {
		t.Fatalf("dns queries %d, loopback hits %d: want the name resolved and the server never reached", queries.Load(), hits.Load())
	}
}

// rebindingDNS serves name → ip over UDP on loopback and returns a
// resolver that asks it, and a count of its queries.
func rebindingDNS(t *testing.T, name string, ip [4]byte) (*net.Resolver, *atomic.Int32) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		for {
			k, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			n.Add(1)
			if out, ok := dnsAnswer(buf[:k], name, ip); ok {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	t.Cleanup(func() {
		pc.Close()
		<-done
	})
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", addr)
	}}, &n
}

// dnsAnswer answers an A query for name with ip, anything else with no
// records.
func dnsAnswer(req []byte, name string, ip [4]byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(req)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	if q.Type == dnsmessage.TypeA && strings.EqualFold(q.Name.String(), name) {
		_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}, dnsmessage.AResource{A: ip})
	}
	out, err := b.Finish()
	return out, err == nil
}
