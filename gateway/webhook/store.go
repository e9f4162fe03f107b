package webhook

import (
	"encoding/json"
	"fmt"
	"sync"
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
	// ErrQueueFull, storing none, when one of their queues (partner and
	// URL) would hold more than maxPending.
	Add(ds []Delivery, maxPending int) error
	// Each calls f with every pending delivery, oldest first (at start,
	// to rebuild the queues).
	Each(f func(Delivery) error) error
	// Get returns a pending delivery, or false when it is gone.
	Get(seq uint64) (Delivery, bool, error)
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

	mu     sync.Mutex // mu guards counts and orders Add's check with its write
	counts map[queueKey]int
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
	s := &BoltStore{db: db, counts: map[queueKey]int{}}
	err := s.Each(func(d Delivery) error {
		s.counts[queueKey{d.Partner, d.URL}]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the database if OpenBoltStore opened it.
func (s *BoltStore) Close() error {
	if !s.own {
		return nil
	}
	return s.db.Close()
}

// Add implements Store. The pending count of each queue is kept in memory
// (the store has one writer, the process that opened the file).
func (s *BoltStore) Add(ds []Delivery, maxPending int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	add := map[queueKey]int{}
	for _, d := range ds {
		k := queueKey{d.Partner, d.URL}
		if add[k]++; s.counts[k]+add[k] > maxPending {
			return ErrQueueFull
		}
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
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
	if err != nil {
		return err
	}
	for k, n := range add {
		s.counts[k] += n
	}
	return nil
}

// Each implements Store.
func (s *BoltStore) Each(f func(Delivery) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			var d Delivery
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("webhook: store: delivery %x: %w", k, err)
			}
			return f(d)
		})
	})
}

// Get implements Store.
func (s *BoltStore) Get(seq uint64) (Delivery, bool, error) {
	var d Delivery
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPending).Get(boltstore.SeqKey(seq))
		if v == nil {
			return nil
		}
		found = true
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("webhook: store: delivery %d: %w", seq, err)
		}
		return nil
	})
	return d, found, err
}

// remove deletes a pending delivery inside tx and counts it out of its
// queue once tx commits (the caller holds s.mu).
func (s *BoltStore) remove(tx *bolt.Tx, seq uint64, gone *queueKey) error {
	b := tx.Bucket(bucketPending)
	v := b.Get(boltstore.SeqKey(seq))
	if v == nil {
		return nil
	}
	var d Delivery
	if err := json.Unmarshal(v, &d); err != nil {
		return fmt.Errorf("webhook: store: delivery %d: %w", seq, err)
	}
	*gone = queueKey{d.Partner, d.URL}
	return b.Delete(boltstore.SeqKey(seq))
}

func (s *BoltStore) countOut(k queueKey) {
	if k == (queueKey{}) {
		return
	}
	if s.counts[k]--; s.counts[k] <= 0 {
		delete(s.counts, k)
	}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone queueKey
	if err := s.db.Update(func(tx *bolt.Tx) error { return s.remove(tx, seq, &gone) }); err != nil {
		return err
	}
	s.countOut(gone)
	return nil
}

// Fail implements Store.
func (s *BoltStore) Fail(d Delivery, keep int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone queueKey
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := s.remove(tx, d.Seq, &gone); err != nil {
			return err
		}
		return keepFailed(tx.Bucket(bucketFailed), d, keep)
	})
	if err != nil {
		return err
	}
	s.countOut(gone)
	return nil
}

// keepFailed records d and drops the oldest failures beyond keep.
func keepFailed(f *bolt.Bucket, d Delivery, keep int) error {
	if keep > 0 {
		v, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("webhook: store: %w", err)
		}
		if err := f.Put(boltstore.SeqKey(d.Seq), v); err != nil {
			return err
		}
	}
	n := 0
	c := f.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	for k, _ := c.First(); k != nil && n > keep; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
		n--
	}
	return nil
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
