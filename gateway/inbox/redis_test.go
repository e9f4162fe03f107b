package inbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/gateway/inbox"
)

// TestRedisStoreSurvivesNodeAndRedisRestart: messages queued on one node
// outlive both that node and the Redis server (append-only file), come
// back held for admission on the node's restart, and are never seen by
// another node's queue.
func TestRedisStoreSurvivesNodeAndRedisRestart(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client()
	cfg := inbox.DefaultConfig()
	w := newWorld()
	in, err := inbox.New(cfg, inbox.NewRedisStore(rdb, "gw-a", cfg.HoldFor), w.options())
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, in)
	w.setBusy("ses_a", true)
	big := strings.Repeat("é", inbox.MaxTextBytes/2) // 16 KiB of two-byte runes
	for _, m := range []string{msg("Your ride is here.", "acme.lookout"), msg(big, "acme.lookout")} {
		if code, _, m := post(t, srv, keyA, "ses_a", m); code != 202 {
			t.Fatalf("post = %d %s", code, m)
		}
	}
	srv.Close() // the node dies with both messages queued

	rs.Stop() // and Redis restarts too
	rs.Start()

	other, err := inbox.NewRedisStore(rdb, "gw-b", cfg.HoldFor).List()
	if err != nil || len(other) != 0 {
		t.Fatalf("another node's store lists %d messages (%v)", len(other), err)
	}
	ttl, err := rdb.PTTL(context.Background(), "vera:inbox:gw-a").Result()
	if err != nil || ttl <= 0 || ttl > cfg.HoldFor {
		t.Fatalf("queue TTL = %v (%v), want in (0, %v]", ttl, err, cfg.HoldFor)
	}

	w2 := newWorld()
	store := inbox.NewRedisStore(rdb, "gw-a", cfg.HoldFor)
	in, err = inbox.New(cfg, store, w2.options())
	if err != nil {
		t.Fatal(err)
	}
	in.SessionReady("ses_a")
	asks := w2.asks()
	if len(asks) != 1 || asks[0].Count != 2 || len(w2.got()) != 0 {
		t.Fatalf("after restart: asks %+v, delivered %d (want one ask for 2 held, none delivered)", asks, len(w2.got()))
	}
	if err := in.Admit("ses_a", asks[0].ActionID); err != nil {
		t.Fatal(err)
	}
	w2.finish(in, "ses_a")
	got := w2.got()
	if len(got) != 2 || got[0] != "ses_a|acme.lookout|Your ride is here." || got[1] != "ses_a|acme.lookout|"+big {
		t.Fatalf("delivered %d messages, in order? %q", len(got), got[0])
	}
	if left, _ := store.List(); len(left) != 0 {
		t.Fatalf("%d messages left after delivery", len(left))
	}
}

// TestRedisStoreDown: a store call against a stopped Redis fails within
// its timeout, and the post is refused with 503 rather than lost silently.
func TestRedisStoreDown(t *testing.T) {
	rs := redistest.Start(t)
	w := newWorld()
	in, err := inbox.New(inbox.DefaultConfig(), inbox.NewRedisStore(rs.Client(), "gw-a", time.Hour), w.options())
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, in)
	rs.Stop()
	if code, typ, _ := post(t, srv, keyA, "ses_a", msg("hello", "acme.lookout")); code != 503 || typ != "unavailable" {
		t.Fatalf("post with Redis down = %d %s, want 503 unavailable", code, typ)
	}
}
