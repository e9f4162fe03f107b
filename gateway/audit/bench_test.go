package audit_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/veraneural/vera-gateway/gateway/audit"
)

func benchLog(b *testing.B) (*audit.Log, *bolt.DB) {
	b.Helper()
	db, err := bolt.Open(filepath.Join(b.TempDir(), "vera.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	st, err := audit.NewBoltStore(db)
	if err != nil {
		b.Fatal(err)
	}
	l, err := audit.New(audit.DefaultConfig(), st, audit.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return l, db
}

// BenchmarkRecord: one durable (fsync'd) decision record.
func BenchmarkRecord(b *testing.B) {
	l, _ := benchLog(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := l.Record("pa", audit.Record{ActionID: fmt.Sprintf("a%d", i), ActionType: "send_message", SessionID: "s1",
			Decision: audit.DecisionApproved, Via: "tap", Surface: "phone"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListBySession: one page of a session's records among 10,000 of
// the partner's (the filter scans the partner's records).
func BenchmarkListBySession(b *testing.B) {
	l, db := benchLog(b)
	db.NoSync = true // filling only
	for i := range 10_000 {
		if _, err := l.Record("pa", audit.Record{ActionID: fmt.Sprintf("a%d", i), ActionType: "t", SessionID: fmt.Sprintf("s%d", i%100),
			Decision: audit.DecisionDeclined, Via: "tap"}); err != nil {
			b.Fatal(err)
		}
	}
	db.NoSync = false
	b.ReportAllocs()
	for b.Loop() {
		recs, _, err := l.List("pa", audit.Query{SessionID: "s42", Limit: 50})
		if err != nil || len(recs) != 50 {
			b.Fatalf("%d records, %v", len(recs), err)
		}
	}
}
