package inbox_test

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/veraneural/vera-gateway/gateway/inbox"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

// TestSharesOneFileWithTheWebhookQueue: cmd opens one bbolt file for both
// queues; each keeps its own bucket and survives a reopen.
func TestSharesOneFileWithTheWebhookQueue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vera.db")
	for round := range 2 {
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		is, err := inbox.NewBoltStore(db)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := webhook.NewBoltStore(db)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			if _, err := is.Add(inbox.Message{SessionID: "ses_a", Source: "a.b", Text: "hi"}); err != nil {
				t.Fatal(err)
			}
			if err := ws.Add([]webhook.Delivery{{EventID: "evt_1", URL: "https://x"}}, 10); err != nil {
				t.Fatal(err)
			}
		} else {
			msgs, _ := is.List()
			n, _ := ws.Pending()
			if len(msgs) != 1 || msgs[0].Text != "hi" || n != 1 {
				t.Fatalf("after reopen: %d messages, %d deliveries", len(msgs), n)
			}
		}
		// Stores opened on a shared db leave closing to its owner.
		if err := is.Close(); err != nil {
			t.Fatal(err)
		}
		if err := ws.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
