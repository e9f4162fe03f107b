package inbox

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/veraneural/vera-gateway/gateway/boltstore"
)

// Message is one queued inbox message.
type Message struct {
	// Seq is assigned by the store and orders messages oldest first.
	Seq       uint64    `json:"seq"`
	SessionID string    `json:"session_id"`
	Partner   string    `json:"partner"`
	Source    string    `json:"source"`
	Text      string    `json:"text"`
	QueuedAt  time.Time `json:"queued_at"`
}

// Store keeps queued messages durably. A Redis store implements the same
// interface.
type Store interface {
	// Add stores m and returns it with Seq set.
	Add(m Message) (Message, error)
	// Remove deletes a message; removing a missing one is not an error.
	Remove(seq uint64) error
	// List returns every message, oldest first.
	List() ([]Message, error)
}

var bucketMessages = []byte("inbox.messages")

// BoltStore is the Store in a bbolt file, which it may share with other
// packages' buckets (the webhook queue).
type BoltStore struct {
	db  *bolt.DB
	own bool
}

// OpenBoltStore opens (creating) the bbolt file at path for the store alone;
// Close closes it.
func OpenBoltStore(path string) (*BoltStore, error) {
	db, err := boltstore.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inbox: open store: %w", err)
	}
	s, err := NewBoltStore(db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// NewBoltStore uses an open database that its caller owns and closes.
func NewBoltStore(db *bolt.DB) (*BoltStore, error) {
	if err := boltstore.Buckets(db, string(bucketMessages)); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	return &BoltStore{db: db}, nil
}

// Close closes the database if OpenBoltStore opened it.
func (s *BoltStore) Close() error {
	if !s.own {
		return nil
	}
	return s.db.Close()
}

// Add implements Store.
func (s *BoltStore) Add(m Message) (Message, error) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMessages)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		m.Seq = seq
		v, err := json.Marshal(m)
		if err != nil {
			return err
		}
		return b.Put(boltstore.SeqKey(seq), v)
	})
	if err != nil {
		return Message{}, fmt.Errorf("inbox: store: %w", err)
	}
	return m, nil
}

// Remove implements Store.
func (s *BoltStore) Remove(seq uint64) error {
	err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMessages).Delete(boltstore.SeqKey(seq)) })
	if err != nil {
		return fmt.Errorf("inbox: store: %w", err)
	}
	return nil
}

// List implements Store.
func (s *BoltStore) List() ([]Message, error) {
	var out []Message
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMessages).ForEach(func(k, v []byte) error {
			var m Message
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("message %x: %w", k, err)
			}
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("inbox: store: %w", err)
	}
	return out, nil
}
