package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/veraneural/vera-gateway/gateway/boltstore"
)

// Store keeps records durably, partitioned by partner. A Redis store
// implements the same interface.
type Store interface {
	// Append stores r for partner, assigning its ID, then drops the
	// partner's records older than cutoff and any beyond maxRecords,
	// oldest first.
	Append(partner string, r Record, cutoff time.Time, maxRecords int) (Record, error)
	// List returns partner's records matching q, oldest first, and whether
	// more match after the last one returned.
	List(partner string, q Query) ([]Record, bool, error)
	// Prune drops every partner's records older than cutoff and returns
	// how many.
	Prune(cutoff time.Time) (int, error)
}

var bucketDecisions = []byte("audit.decisions")

// BoltStore is the Store in a bbolt file shared with other packages'
// buckets (the inbox and webhook queues). Layout: bucket audit.decisions →
// one sub-bucket per partner → big-endian sequence → JSON record. Records
// are only ever deleted from the front of a partner's bucket, so its keys
// stay contiguous and its size is last-first+1 without a scan.
type BoltStore struct {
	db *bolt.DB
}

// NewBoltStore uses an open database that its caller owns and closes.
func NewBoltStore(db *bolt.DB) (*BoltStore, error) {
	if err := boltstore.Buckets(db, string(bucketDecisions)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	return &BoltStore{db: db}, nil
}

// Append implements Store.
func (s *BoltStore) Append(partner string, r Record, cutoff time.Time, maxRecords int) (Record, error) {
	if partner == "" {
		return Record{}, fmt.Errorf("%w: partner is required", ErrInvalid)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketDecisions).CreateBucketIfNotExists([]byte(partner))
		if err != nil {
			return err
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		r.ID = formatID(seq)
		v, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if err := b.Put(boltstore.SeqKey(seq), v); err != nil {
			return err
		}
		_, err = trim(b, cutoff, maxRecords)
		return err
	})
	if err != nil {
		return Record{}, fmt.Errorf("%w: append: %w", ErrStore, err)
	}
	return r, nil
}

// trim deletes from the front of b while the oldest record is before
// cutoff or b holds more than maxRecords (0: no count bound).
func trim(b *bolt.Bucket, cutoff time.Time, maxRecords int) (int, error) {
	c := b.Cursor()
	lastK, _ := c.Last()
	if lastK == nil {
		return 0, nil
	}
	last := binary.BigEndian.Uint64(lastK)
	n := 0
	for k, v := c.First(); k != nil; k, v = c.First() {
		first := binary.BigEndian.Uint64(k)
		over := maxRecords > 0 && last-first+1 > uint64(maxRecords)
		if !over {
			var at struct {
				At time.Time `json:"at"`
			}
			if err := json.Unmarshal(v, &at); err == nil && !at.At.Before(cutoff) {
				return n, nil
			}
			// An unreadable record is dropped like an expired one.
		}
		if err := c.Delete(); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// List implements Store.
func (s *BoltStore) List(partner string, q Query) ([]Record, bool, error) {
	var out []Record
	more := false
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDecisions).Bucket([]byte(partner))
		if b == nil || q.After == ^uint64(0) {
			return nil
		}
		sess, act := fieldNeedle("session_id", q.SessionID), fieldNeedle("action_id", q.ActionID)
		c := b.Cursor()
		for k, v := c.Seek(boltstore.SeqKey(q.After + 1)); k != nil; k, v = c.Next() {
			// Skip most non-matching records without decoding them; the
			// decoded record is checked below all the same.
			if (sess != nil && !bytes.Contains(v, sess)) || (act != nil && !bytes.Contains(v, act)) {
				continue
			}
			var r Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("record %x: %w", k, err)
			}
			if (q.SessionID != "" && r.SessionID != q.SessionID) || (q.ActionID != "" && r.ActionID != q.ActionID) {
				continue
			}
			if len(out) == q.Limit {
				more = true
				break
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("%w: list: %w", ErrStore, err)
	}
	return out, more, nil
}

// Prune implements Store.
func (s *BoltStore) Prune(cutoff time.Time) (int, error) {
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketDecisions)
		var names [][]byte
		if err := root.ForEachBucket(func(name []byte) error {
			names = append(names, append([]byte(nil), name...))
			return nil
		}); err != nil {
			return err
		}
		for _, name := range names {
			d, err := trim(root.Bucket(name), cutoff, 0)
			n += d
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("%w: prune: %w", ErrStore, err)
	}
	return n, nil
}

// fieldNeedle is how field:value appears in a stored record's JSON
// (encoding/json writes no spaces and escapes quotes inside strings, so
// the needle cannot match inside another value); nil for an empty value.
func fieldNeedle(field, value string) []byte {
	if value == "" {
		return nil
	}
	v, err := json.Marshal(value)
	if err != nil {
		return nil
	}
	return append([]byte(`"`+field+`":`), v...)
}
