package webhook

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/veraneural/vera-gateway/gateway/boltstore"
)

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	// Seq is assigned by the store and orders deliveries oldest first.
	Seq       uint64    `json:"seq"`
	EventID   string    `json:"event_id"`
	EventType string    `json:"event_type"`
	Partner   string    `json:"partner"`
	URL       string    `json:"url"`
	Body      []byte    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	// Attempts made so far; NextAt is when the next one is due.
	Attempts  int       `json:"attempts"`
	NextAt    time.Time `json:"next_at"`
	LastError string    `json:"last_error,omitempty"`
	FailedAt  time.Time `json:"failed_at,omitzero"`
}

// Store keeps deliveries durably. Only the dispatcher writes pending
// deliveries after they are added, so implementations need not guard against
// two senders. A Redis store implements the same interface.
type Store interface {
	// Add stores deliveries atomically, assigning Seq, or fails with
	// ErrQueueFull when more than maxPending would be waiting.
	Add(ds []Delivery, maxPending int) error
	// Due returns up to max pending deliveries whose NextAt is not after
	// now, oldest first, and the earliest NextAt of those not yet due (zero
	// when none waits).
	Due(now time.Time, max int) ([]Delivery, time.Time, error)
	// Reschedule saves a pending delivery's new Attempts, NextAt and
	// LastError.
	Reschedule(d Delivery) error
	// Done removes a delivered delivery.
	Done(seq uint64) error
	// Fail moves a delivery to the failed record, which keeps the newest
	// keep entries.
	Fail(d Delivery, keep int) error
	// Failed lists failed deliveries, oldest first.
	Failed() ([]Delivery, error)
	// Pending counts deliveries waiting.
	Pending() (int, error)
}

var (
	bucketPending = []byte("webhook.pending")
	bucketFailed  = []byte("webhook.failed")
)

// BoltStore is the Store in a bbolt file. It may share the file with other
// packages' buckets (the inbox).
type BoltStore struct {
	db  *bolt.DB
	own bool
}

// OpenBoltStore opens (creating) the bbolt file at path for the store alone;
// Close closes it.
func OpenBoltStore(path string) (*BoltStore, error) {
	db, err := boltstore.Open(path)
	if err != nil {
		return nil, fmt.Errorf("webhook: open store: %w", err)
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
	if err := boltstore.Buckets(db, string(bucketPending), string(bucketFailed)); err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
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
func (s *BoltStore) Add(ds []Delivery, maxPending int) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
		if b.Stats().KeyN+len(ds) > maxPending {
			return ErrQueueFull
		}
		for i := range ds {
			seq, err := b.NextSequence()
			if err != nil {
				return fmt.Errorf("webhook: store: %w", err)
			}
			ds[i].Seq = seq
			v, err := json.Marshal(ds[i])
			if err != nil {
				return fmt.Errorf("webhook: store: %w", err)
			}
			if err := b.Put(boltstore.SeqKey(seq), v); err != nil {
				return fmt.Errorf("webhook: store: %w", err)
			}
		}
		return nil
	})
}

// Due implements Store. It scans the pending bucket, which MaxPending bounds.
func (s *BoltStore) Due(now time.Time, max int) ([]Delivery, time.Time, error) {
	var (
		due  []Delivery
		next time.Time
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			var d Delivery
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("webhook: store: delivery %x: %w", k, err)
			}
			if !d.NextAt.After(now) {
				if len(due) < max {
					due = append(due, d)
				} else if next.IsZero() || d.NextAt.Before(next) {
					next = d.NextAt
				}
				return nil
			}
			if next.IsZero() || d.NextAt.Before(next) {
				next = d.NextAt
			}
			return nil
		})
	})
	return due, next, err
}

// Reschedule implements Store.
func (s *BoltStore) Reschedule(d Delivery) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
		if b.Get(boltstore.SeqKey(d.Seq)) == nil {
			return nil // already gone: nothing to reschedule
		}
		v, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("webhook: store: %w", err)
		}
		return b.Put(boltstore.SeqKey(d.Seq), v)
	})
}

// Done implements Store.
func (s *BoltStore) Done(seq uint64) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketPending).Delete(boltstore.SeqKey(seq)) })
}

// Fail implements Store.
func (s *BoltStore) Fail(d Delivery, keep int) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketPending).Delete(boltstore.SeqKey(d.Seq)); err != nil {
			return err
		}
		f := tx.Bucket(bucketFailed)
		if keep > 0 {
			v, err := json.Marshal(d)
			if err != nil {
				return fmt.Errorf("webhook: store: %w", err)
			}
			if err := f.Put(boltstore.SeqKey(d.Seq), v); err != nil {
				return err
			}
		}
		// Drop the oldest beyond keep.
		n := 0
		c := f.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		for ; n > keep; n-- {
			c := f.Cursor()
			if k, _ := c.First(); k == nil {
				break
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Failed implements Store.
func (s *BoltStore) Failed() ([]Delivery, error) {
	var out []Delivery
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketFailed).ForEach(func(k, v []byte) error {
			var d Delivery
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("webhook: store: failed %x: %w", k, err)
			}
			out = append(out, d)
			return nil
		})
	})
	return out, err
}

// Pending implements Store.
func (s *BoltStore) Pending() (int, error) {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketPending).Stats().KeyN
		return nil
	})
	return n, err
}
