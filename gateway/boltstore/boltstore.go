package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// LockTimeout is how long Open waits for another process's lock on the
// file before it fails (two gateways must not share one file).
const LockTimeout = 5 * time.Second

// ErrKey: a key is not a sequence key.
var ErrKey = errors.New("boltstore: not an 8-byte sequence key")

// Open opens (creating, mode 0600) the bbolt file at path.
func Open(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: LockTimeout})
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	return db, nil
}

// Buckets creates the named top-level buckets that do not exist yet, in
// one transaction.
func Buckets(db *bolt.DB, names ...string) error {
	err := db.Update(func(tx *bolt.Tx) error {
		for _, n := range names {
			if _, err := tx.CreateBucketIfNotExists([]byte(n)); err != nil {
				return fmt.Errorf("bucket %s: %w", n, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("boltstore: %w", err)
	}
	return nil
}

// SeqKey is the key of record seq: 8 bytes, big-endian.
func SeqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// Seq reads a SeqKey.
func Seq(k []byte) (uint64, error) {
	if len(k) != 8 {
		return 0, fmt.Errorf("%w: %d bytes", ErrKey, len(k))
	}
	return binary.BigEndian.Uint64(k), nil
}
