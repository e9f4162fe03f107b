package webhook_test

import (
	"bytes"
	"path/filepath"
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
