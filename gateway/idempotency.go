package gateway

import (
	"container/list"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

// Idempotency errors returned by an IdempotencyStore.
var (
	// ErrIdempotencyMismatch: the key was used with a different body.
	ErrIdempotencyMismatch = errors.New("idempotency key reused with a different request body")
	// ErrIdempotencyInFlight: a request with the key is still running.
	ErrIdempotencyInFlight = errors.New("a request with this idempotency key is in progress")
)

// StoredResponse is what is replayed for a repeated Idempotency-Key.
type StoredResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// IdempotencyStore keeps responses by key for replay. A Redis-backed
// implementation for several nodes can replace the in-memory one.
type IdempotencyStore interface {
	// Begin claims key for a request whose body hashes to sum. It returns the
	// stored response when the key completed with the same body,
	// ErrIdempotencyMismatch when it was used with another body, and
	// ErrIdempotencyInFlight while another request holds it. (nil, nil)
	// means the caller owns the key and must Complete or Release it.
	Begin(key string, sum [32]byte) (*StoredResponse, error)
	// Complete stores the response for key.
	Complete(key string, resp StoredResponse)
	// Release forgets a claimed key without a response, so a retry runs
	// again (used for 5xx: the Partner API says retry with the same key).
	Release(key string)
}

// MemoryIdempotencyStore holds at most maxEntries keys for ttl each, dropping
// the oldest first.
type MemoryIdempotencyStore struct {
	ttl        time.Duration
	maxEntries int
	clock      clock.Clock

	mu      sync.Mutex // mu guards entries and order
	entries map[string]*list.Element
	order   *list.List // of *idemEntry, oldest first
}

type idemEntry struct {
	key     string
	sum     [32]byte
	created time.Time
	done    bool
	resp    StoredResponse
}

// NewMemoryIdempotencyStore returns an in-memory store. now may be nil.
func NewMemoryIdempotencyStore(ttl time.Duration, maxEntries int, clk clock.Clock) *MemoryIdempotencyStore {
	return &MemoryIdempotencyStore{ttl: ttl, maxEntries: maxEntries, clock: clock.OrReal(clk), entries: map[string]*list.Element{}, order: list.New()}
}

// Begin implements IdempotencyStore.
func (s *MemoryIdempotencyStore) Begin(key string, sum [32]byte) (*StoredResponse, error) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if el, ok := s.entries[key]; ok {
		e := el.Value.(*idemEntry)
		switch {
		case e.sum != sum:
			return nil, ErrIdempotencyMismatch
		case !e.done:
			return nil, ErrIdempotencyInFlight
		default:
			r := e.resp
			r.Header = e.resp.Header.Clone()
			return &r, nil
		}
	}
	for s.order.Len() >= s.maxEntries {
		s.remove(s.order.Front())
	}
	s.entries[key] = s.order.PushBack(&idemEntry{key: key, sum: sum, created: now})
	return nil, nil
}

// Complete implements IdempotencyStore.
func (s *MemoryIdempotencyStore) Complete(key string, resp StoredResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.entries[key]; ok {
		e := el.Value.(*idemEntry)
		e.done, e.resp = true, resp
	}
}

// Release implements IdempotencyStore.
func (s *MemoryIdempotencyStore) Release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.entries[key]; ok && !el.Value.(*idemEntry).done {
		s.remove(el)
	}
}

// Len returns the number of keys held.
func (s *MemoryIdempotencyStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

func (s *MemoryIdempotencyStore) expire(now time.Time) {
	for el := s.order.Front(); el != nil; el = s.order.Front() {
		if now.Sub(el.Value.(*idemEntry).created) < s.ttl {
			return
		}
		s.remove(el)
	}
}

func (s *MemoryIdempotencyStore) remove(el *list.Element) {
	delete(s.entries, el.Value.(*idemEntry).key)
	s.order.Remove(el)
}
