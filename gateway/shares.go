package gateway

import (
	"fmt"
	"math"
	"sync"
)

// ShareConfig is what one holder may take of each global capacity, as a
// share in (0, 1] of it: of chat.max_connections, session.max_sessions and
// admission.max_voice_sessions. A share always allows at least one.
type ShareConfig struct {
	Chats         float64 `yaml:"chats"`
	Sessions      float64 `yaml:"sessions"`
	VoiceSessions float64 `yaml:"voice_sessions"`
}

// ShareKind names one shared capacity.
type ShareKind string

const (
	ShareChats         ShareKind = "chats"
	ShareSessions      ShareKind = "sessions"
	ShareVoiceSessions ShareKind = "voice_sessions"
)

func (c ShareConfig) of(k ShareKind) float64 {
	switch k {
	case ShareChats:
		return c.Chats
	case ShareSessions:
		return c.Sessions
	default:
		return c.VoiceSessions
	}
}

// Shares holds the concurrent capacities of this node — chats, sessions,
// voice sessions — in fair shares: one partner holds at most its
// limits.per_partner share of each global cap, and one end user (all its
// client tokens together, so minting another token does not widen it) its
// limits.per_token share. A partner at its caps then leaves the rest to
// the others. A nil *Shares admits everything.
//
// With a ShareLedger (UseLedger: the cluster's Redis), a share is counted
// across every node: what this node holds is still counted here, and each
// Acquire also asks the ledger whether the other live nodes' holdings and
// this node's together stay within the caps. A release never waits on the
// ledger: it is counted here at once and sent behind.
type Shares struct {
	retryAfter int
	caps       map[ShareKind]shareCaps
	ledger     ShareLedger

	mu   sync.Mutex // mu guards held and seq
	held map[shareHolder]int
	// seq numbers every change of held, so that the ledger keeps the
	// newest of this node's counts whatever order they arrive in.
	seq uint64
}

// ShareLedger counts this node's holdings beside the other nodes' (the
// cluster's Redis). Every count this node sends is its own total for one
// holder, numbered by a sequence that only grows: the ledger keeps, per
// holder, the count of the highest sequence it has seen.
type ShareLedger interface {
	// Take records hs (this node's counts after taking one) at seq if, for
	// each, the other live nodes' count plus Held stays within Cap; else
	// it records nothing and returns the index of the first that would
	// not (-1: taken). An error (the ledger is down) refuses.
	Take(seq uint64, hs []ShareHolding) (refused int, err error)
	// Put records hs at seq, behind: it never blocks (a release).
	Put(seq uint64, hs []ShareHolding)
}

// ShareHolding is this node's count for one holder: a partner's or an end
// user's share of one kind.
type ShareHolding struct {
	// Key names the holder: kind, partner and, for an end user, the end
	// user, joined by NUL.
	Key       string
	Held, Cap int
}

// UseLedger makes the shares cluster-wide (call it before any Acquire).
func (s *Shares) UseLedger(l ShareLedger) {
	if s != nil {
		s.ledger = l
	}
}

// Holdings returns every count this node holds and the sequence they are
// current at (the heartbeat's full copy for the ledger).
func (s *Shares) Holdings() (uint64, []ShareHolding) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := make([]ShareHolding, 0, len(s.held))
	for h, n := range s.held {
		hs = append(hs, s.holdingLocked(h, n))
	}
	return s.seq, hs
}

func (s *Shares) holdingLocked(h shareHolder, n int) ShareHolding {
	c := s.caps[h.kind]
	if h.endUser == "" {
		return ShareHolding{Key: string(h.kind) + "\x00" + h.partner, Held: n, Cap: c.partner}
	}
	return ShareHolding{Key: string(h.kind) + "\x00" + h.partner + "\x00" + h.endUser, Held: n, Cap: c.token}
}

// changedLocked numbers a change of the holders hs and returns their
// counts for the ledger.
func (s *Shares) changedLocked(hs ...shareHolder) (uint64, []ShareHolding) {
	s.seq++
	out := make([]ShareHolding, len(hs))
	for i, h := range hs {
		out[i] = s.holdingLocked(h, s.held[h])
	}
	return s.seq, out
}

type shareCaps struct{ global, partner, token int }

type shareHolder struct {
	kind             ShareKind
	partner, endUser string // endUser "" counts the partner
}

// NewShares sizes the shares from limits and the global caps by kind
// (ShareChats: chat.max_connections, …). retryAfter is the Retry-After of
// a refusal, in seconds.
func NewShares(limits LimitsConfig, global map[ShareKind]int, retryAfter int) *Shares {
	s := &Shares{retryAfter: max(retryAfter, 1), caps: map[ShareKind]shareCaps{}, held: map[shareHolder]int{}}
	for _, k := range []ShareKind{ShareChats, ShareSessions, ShareVoiceSessions} {
		g := global[k]
		s.caps[k] = shareCaps{global: g, partner: shareOf(g, limits.PerPartner.of(k)), token: shareOf(g, limits.PerToken.of(k))}
	}
	return s
}

func shareOf(global int, f float64) int {
	return max(1, int(math.Floor(float64(global)*f)))
}

// Caps returns the partner and per-token caps of kind (start-up log, tests).
func (s *Shares) Caps(k ShareKind) (partner, token int) {
	c := s.caps[k]
	return c.partner, c.token
}

// Acquire takes one of kind for p's partner and, for a client token, its
// end user, and returns the release (call it once, when the chat, session
// or voice session ends). Over a share it returns a 429 rate_limited
// *Error with Retry-After; the global caps stay their owners' (503).
func (s *Shares) Acquire(k ShareKind, partner, endUser string) (release func(), err *Error) {
	if s == nil {
		return func() {}, nil
	}
	hs := []shareHolder{{kind: k, partner: partner}}
	if endUser != "" {
		hs = append(hs, shareHolder{kind: k, partner: partner, endUser: endUser})
	}
	s.mu.Lock()
	for i, h := range hs {
		if s.held[h] >= s.holdingLocked(h, 0).Cap {
			s.mu.Unlock()
			return nil, s.refusal(k, i)
		}
	}
	for _, h := range hs {
		s.held[h]++
	}
	seq, counts := s.changedLocked(hs...)
	s.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			s.mu.Lock()
			for _, h := range hs {
				s.dec(h)
			}
			seq, counts := s.changedLocked(hs...)
			s.mu.Unlock()
			if s.ledger != nil {
				s.ledger.Put(seq, counts)
			}
		})
	}
	if s.ledger == nil {
		return release, nil
	}
	refused, lerr := s.ledger.Take(seq, counts)
	switch {
	case lerr != nil:
		release()
		return nil, &Error{Type: Unavailable, RetryAfter: s.retryAfter,
			Message: fmt.Sprintf("fair shares of %s cannot be checked across the cluster right now; retry", k)}
	case refused >= 0:
		release()
		return nil, s.refusal(k, refused)
	}
	return release, nil
}

// refusal is the 429 of a full share: the partner's (which 0) or the end
// user's (1).
func (s *Shares) refusal(k ShareKind, which int) *Error {
	c := s.caps[k]
	if which == 0 {
		return &Error{Type: RateLimited, RetryAfter: s.retryAfter,
			Message: fmt.Sprintf("this partner holds its share of %s (%d of %d): limits.per_partner.%s", k, c.partner, c.global, k)}
	}
	return &Error{Type: RateLimited, RetryAfter: s.retryAfter,
		Message: fmt.Sprintf("this end user holds its share of %s (%d): limits.per_token.%s", k, c.token, k)}
}

// Admit is Acquire with a plain error, for hooks that take one
// (session.Deps.Admit).
func (s *Shares) Admit(k ShareKind, partner, endUser string) (func(), error) {
	release, err := s.Acquire(k, partner, endUser)
	if err != nil {
		return nil, err
	}
	return release, nil
}

func (s *Shares) dec(h shareHolder) {
	if s.held[h]--; s.held[h] <= 0 {
		delete(s.held, h)
	}
}

// Held returns how many of kind partner holds (tests, metrics).
func (s *Shares) Held(k ShareKind, partner string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[shareHolder{kind: k, partner: partner}]
}
