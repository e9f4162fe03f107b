package boltstore_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway/boltstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSeqKeyOrder: byte order of keys is numeric order, and keys round-trip.
func TestSeqKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		a, b := r.Uint64(), r.Uint64()
		if a>>r.IntN(64) == 0 {
			a = 0
		}
		ka, kb := boltstore.SeqKey(a), boltstore.SeqKey(b)
		if (bytes.Compare(ka, kb) < 0) != (a < b) {
			t.Fatalf("order of %d and %d differs from their keys'", a, b)
		}
		if got, err := boltstore.Seq(ka); err != nil || got != a {
			t.Fatalf("Seq(SeqKey(%d)) = %d, %v", a, got, err)
		}
	}
	if _, err := boltstore.Seq([]byte("short")); !errors.Is(err, boltstore.ErrKey) {
		t.Fatalf("short key: %v", err)
	}
}

// TestBucketsShareOneFile: buckets are created once and kept, with their
// records, across a reopen.
func TestBucketsShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vera.db")
	db, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := boltstore.Buckets(db, "a.one", "b.two"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("a.one")).Put(boltstore.SeqKey(1), []byte("x")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket([]byte("a.one")).Get(boltstore.SeqKey(1)); string(v) != "x" || tx.Bucket([]byte("b.two")) == nil {
			t.Errorf("after reopen: %q", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := boltstore.Buckets(db, "c"); err == nil {
		t.Fatal("Buckets on a closed database succeeded")
	}
}
