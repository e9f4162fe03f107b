package gateway

import (
	"container/list"
	"context"
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

// IdempotencyKey names one stored response. Keys of different partners
// never meet: capacity, eviction and lookups are per Partner.
type IdempotencyKey struct {
	// Partner owns the key (the principal's PartnerID).
	Partner string
	// Scope is the request's method and path ("POST /v1/client_tokens"): the
	// same header value on two routes is two keys.
	Scope string
	// Key is the Idempotency-Key header (at most 255 characters).
	Key string
}

// IdempotencyStore keeps responses by key for replay. The in-memory
// implementation serves one node; a shared one (Redis) implements the same
// three calls, Begin atomically (one claim wins), and keeps each partner
// within its own capacity. Entries live for the store's TTL (24 h by
// default); a claim whose request never completes (its node died) should
// lapse after a short claim TTL in a shared store.
//
// An error other than the two sentinels means the store could not answer;
// the server refuses the request with 503 and Retry-After rather than run
// it twice.
type IdempotencyStore interface {
	// Begin claims k for a request whose body hashes to sum. It returns the
	// stored response when k completed with the same body,
	// ErrIdempotencyMismatch when it was used with another body, and
	// ErrIdempotencyInFlight while another request holds it. (nil, nil)
	// means the caller owns k and must Complete or Release it.
	Begin(ctx context.Context, k IdempotencyKey, sum [32]byte) (*StoredResponse, error)
	// Complete stores the response for a claimed k.
	Complete(ctx context.Context, k IdempotencyKey, resp StoredResponse) error
	// Release forgets a claimed k without a response, so a retry runs again
	// (used for 5xx: the Partner API says retry with the same key).
	Release(ctx context.Context, k IdempotencyKey) error
}

// MemoryIdempotencyStore holds, per partner, at most maxPerPartner keys for
// ttl each, dropping that partner's oldest first: one partner's burst of
// keys never evicts another partner's.
type MemoryIdempotencyStore struct {
	ttl           time.Duration
	maxPerPartner int
	clock         clock.Clock

	mu       sync.Mutex // mu guards partners
	partners map[string]*idemPartner
}

// idemPartner is one partner's keys, oldest first.
type idemPartner struct {
	entries map[IdempotencyKey]*list.Element
	order   *list.List // of *idemEntry
}

type idemEntry struct {
	key     IdempotencyKey
	sum     [32]byte
	created time.Time
	done    bool
	resp    StoredResponse
}

// NewMemoryIdempotencyStore returns an in-memory store; clk may be nil.
func NewMemoryIdempotencyStore(ttl time.Duration, maxPerPartner int, clk clock.Clock) *MemoryIdempotencyStore {
	return &MemoryIdempotencyStore{ttl: ttl, maxPerPartner: maxPerPartner, clock: clock.OrReal(clk), partners: map[string]*idemPartner{}}
}

// Begin implements IdempotencyStore.
func (s *MemoryIdempotencyStore) Begin(_ context.Context, k IdempotencyKey, sum [32]byte) (*StoredResponse, error) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.partners[k.Partner]
	if p == nil {
		p = &idemPartner{entries: map[IdempotencyKey]*list.Element{}, order: list.New()}
		s.partners[k.Partner] = p
	}
	p.expire(now, s.ttl)
	if el, ok := p.entries[k]; ok {
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
	for p.order.Len() >= s.maxPerPartner {
		p.remove(p.order.Front())
	}
	p.entries[k] = p.order.PushBack(&idemEntry{key: k, sum: sum, created: now})
	return nil, nil
}

// Complete implements IdempotencyStore.
func (s *MemoryIdempotencyStore) Complete(_ context.Context, k IdempotencyKey, resp StoredResponse) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.partners[k.Partner]; p != nil {
		if el, ok := p.entries[k]; ok {
			e := el.Value.(*idemEntry)
			e.done, e.resp = true, resp
		}
	}
	return nil
}

// Release implements IdempotencyStore.
func (s *MemoryIdempotencyStore) Release(_ context.Context, k IdempotencyKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.partners[k.Partner]; p != nil {
		if el, ok := p.entries[k]; ok && !el.Value.(*idemEntry).done {
			p.remove(el)
		}
	}
	return nil
}

// Len returns the number of keys partner holds.
func (s *MemoryIdempotencyStore) Len(partner string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.partners[partner]; p != nil {
		return p.order.Len()
	}
	return 0
}

func (p *idemPartner) expire(now time.Time, ttl time.Duration) {
	for el := p.order.Front(); el != nil; el = p.order.Front() {
		if now.Sub(el.Value.(*idemEntry).created) < ttl {
			return
		}
		p.remove(el)
	}
}

func (p *idemPartner) remove(el *list.Element) {
	delete(p.entries, el.Value.(*idemEntry).key)
	p.order.Remove(el)
}
