package pairing

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/veraneural/vera-gateway/gateway/boltstore"
)

// Pairing is one paired device: who it acts for and the digests of its
// refresh credentials.
type Pairing struct {
	ID      string `json:"id"`
	Partner string `json:"partner"`
	EndUser string `json:"end_user"`
	Device  string `json:"device"`
	// Secret is the digest of the current refresh credential's secret.
	Secret [32]byte `json:"secret"`
	// Prev is the digest of the previous one, valid until PrevUntil or
	// until Secret is first used.
	Prev      [32]byte  `json:"prev"`
	PrevUntil time.Time `json:"prev_until"`
	// Retired are digests of credentials rotated out (newest last, at most
	// maxRetired): presenting one proves a copy exists and ends the
	// pairing, while a credential never issued only fails.
	Retired   [][32]byte `json:"retired,omitempty"`
	Created   time.Time  `json:"created"`
	Refreshed time.Time  `json:"refreshed"`
}

// Store keeps pairings. Implementations are safe for concurrent use; the
// Service serialises its read-modify-write sequences itself.
type Store interface {
	// Get returns the pairing with id; ok is false when there is none.
	Get(id string) (p Pairing, ok bool, err error)
	// Put creates or replaces a pairing.
	Put(p Pairing) error
	// Delete removes a pairing; a missing one is not an error.
	Delete(id string) error
	// ByEndUser lists one end user's pairings of one partner.
	ByEndUser(partner, endUser string) ([]Pairing, error)
	// Sweep deletes pairings last refreshed before t and says how many.
	Sweep(before time.Time) (int, error)
}

// MemoryStore is a Store in memory: pairings end with the process.
type MemoryStore struct {
	mu sync.Mutex // guards m
	m  map[string]Pairing
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string]Pairing{}} }

// Get implements Store.
func (s *MemoryStore) Get(id string) (Pairing, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	return p, ok, nil
}

// Put implements Store.
func (s *MemoryStore) Put(p Pairing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[p.ID] = p
	return nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

// ByEndUser implements Store.
func (s *MemoryStore) ByEndUser(partner, endUser string) ([]Pairing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Pairing
	for _, p := range s.m {
		if p.Partner == partner && p.EndUser == endUser {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Sweep implements Store.
func (s *MemoryStore) Sweep(before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, p := range s.m {
		if p.Refreshed.Before(before) {
			delete(s.m, id)
			n++
		}
	}
	return n, nil
}

var (
	bucketPairings = []byte("pairing.pairings")
	// bucketByUser indexes pairings by partner, end user and id.
	bucketByUser = []byte("pairing.by_user")
)

// BoltStore is a Store in the gateway's bbolt file, so that paired devices
// survive a restart. Its caller owns and closes the database.
type BoltStore struct{ db *bolt.DB }

// NewBoltStore creates the store's buckets in db.
func NewBoltStore(db *bolt.DB) (*BoltStore, error) {
	if err := boltstore.Buckets(db, string(bucketPairings), string(bucketByUser)); err != nil {
		return nil, fmt.Errorf("pairing: %w", err)
	}
	return &BoltStore{db: db}, nil
}

func userKey(partner, endUser, id string) []byte {
	return []byte(partner + "\x00" + endUser + "\x00" + id)
}

// Get implements Store.
func (s *BoltStore) Get(id string) (Pairing, bool, error) {
	var p Pairing
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPairings).Get([]byte(id))
		if v == nil {
			return nil
		}
		found = true
		return json.Unmarshal(v, &p)
	})
	if err != nil {
		return Pairing{}, false, fmt.Errorf("pairing: store: %w", err)
	}
	return p, found, nil
}

// Put implements Store.
func (s *BoltStore) Put(p Pairing) error {
	v, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("pairing: store: %w", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketPairings).Put([]byte(p.ID), v); err != nil {
			return err
		}
		return tx.Bucket(bucketByUser).Put(userKey(p.Partner, p.EndUser, p.ID), nil)
	})
	if err != nil {
		return fmt.Errorf("pairing: store: %w", err)
	}
	return nil
}

// Delete implements Store.
func (s *BoltStore) Delete(id string) error {
	err := s.db.Update(func(tx *bolt.Tx) error { return deleteTx(tx, id) })
	if err != nil {
		return fmt.Errorf("pairing: store: %w", err)
	}
	return nil
}

func deleteTx(tx *bolt.Tx, id string) error {
	b := tx.Bucket(bucketPairings)
	v := b.Get([]byte(id))
	if v == nil {
		return nil
	}
	var p Pairing
	if err := json.Unmarshal(v, &p); err != nil {
		return err
	}
	if err := tx.Bucket(bucketByUser).Delete(userKey(p.Partner, p.EndUser, p.ID)); err != nil {
		return err
	}
	return b.Delete([]byte(id))
}

// ByEndUser implements Store.
func (s *BoltStore) ByEndUser(partner, endUser string) ([]Pairing, error) {
	var out []Pairing
	prefix := userKey(partner, endUser, "")
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketByUser).Cursor()
		pb := tx.Bucket(bucketPairings)
		for k, _ := c.Seek(prefix); k != nil && len(k) >= len(prefix) && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
			v := pb.Get(k[len(prefix):])
			if v == nil {
				continue
			}
			var p Pairing
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pairing: store: %w", err)
	}
	return out, nil
}

// Sweep implements Store.
func (s *BoltStore) Sweep(before time.Time) (int, error) {
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		var stale []string
		err := tx.Bucket(bucketPairings).ForEach(func(k, v []byte) error {
			var p Pairing
			if err := json.Unmarshal(v, &p); err != nil {
				return errors.Join(fmt.Errorf("pairing %s", k), err)
			}
			if p.Refreshed.Before(before) {
				stale = append(stale, p.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range stale {
			if err := deleteTx(tx, id); err != nil {
				return err
			}
		}
		n = len(stale)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("pairing: store: %w", err)
	}
	return n, nil
}
