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
type Shares struct {
	retryAfter int
	caps       map[ShareKind]shareCaps

	mu   sync.Mutex // mu guards held
	held map[shareHolder]int
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
	c := s.caps[k]
	ph := shareHolder{kind: k, partner: partner}
	th := shareHolder{kind: k, partner: partner, endUser: endUser}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[ph] >= c.partner {
		return nil, &Error{Type: RateLimited, RetryAfter: s.retryAfter,
			Message: fmt.Sprintf("this partner holds its share of %s (%d of %d): limits.per_partner.%s", k, c.partner, c.global, k)}
	}
	if endUser != "" && s.held[th] >= c.token {
		return nil, &Error{Type: RateLimited, RetryAfter: s.retryAfter,
			Message: fmt.Sprintf("this end user holds its share of %s (%d): limits.per_token.%s", k, c.token, k)}
	}
	s.held[ph]++
	if endUser != "" {
		s.held[th]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.dec(ph)
			if endUser != "" {
				s.dec(th)
			}
		})
	}, nil
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
