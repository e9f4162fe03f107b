package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/event"
)

// Manager errors.
var (
	// ErrResumeUnknown: no live session has this resume token for this
	// owner (expired, closed, never existed or someone else's).
	ErrResumeUnknown = errors.New("session: unknown or expired resume token")
	// ErrTooManySessions: Config.MaxSessions are live.
	ErrTooManySessions = errors.New("session: too many sessions")
	// ErrManagerClosed: the manager is closed (draining).
	ErrManagerClosed = errors.New("session: manager closed")
)

// Manager owns the live sessions of a gateway, shared by every transport:
// it creates them, resumes them by token, and closes the ones whose
// transport stayed away longer than Config.ResumeWindow.
type Manager struct {
	cfg  Config
	deps Deps

	wg sync.WaitGroup // expiry callbacks in flight

	// mu guards the fields below.
	mu      sync.Mutex
	closed  bool
	byID    map[string]*Session
	byToken map[string]*Session
	expiry  map[*Session]clock.Timer
	// release gives back each session's admission (Deps.Admit).
	release map[*Session]func()
}

// NewManager validates cfg and deps and returns an empty manager.
func NewManager(cfg Config, deps Deps) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Converser == nil || deps.Safety == nil || deps.Layout == nil {
		return nil, fmt.Errorf("session: manager: %w", ErrMissingDeps)
	}
	if deps.Clock == nil {
		deps.Clock = clock.Real{}
	}
	return &Manager{cfg: cfg, deps: deps, byID: map[string]*Session{}, byToken: map[string]*Session{}, expiry: map[*Session]clock.Timer{}, release: map[*Session]func(){}}, nil
}

// Open starts a session for owner, or resumes the one named by
// hello.ResumeToken and streams every event after hello.LastSeq. A resume
// hello that names a device re-negotiates the session's profile.
func (m *Manager) Open(owner Owner, hello *event.Hello) (*Session, *Stream, error) {
	if hello != nil && hello.ResumeToken != "" {
		return m.resume(owner, hello)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, nil, ErrManagerClosed
	}
	if len(m.byID) >= m.cfg.MaxSessions {
		m.mu.Unlock()
		return nil, nil, fmt.Errorf("%w (%d)", ErrTooManySessions, m.cfg.MaxSessions)
	}
	m.mu.Unlock()
	release := func() {}
	if m.deps.Admit != nil {
		r, err := m.deps.Admit(owner)
		if err != nil {
			return nil, nil, err
		}
		release = r
	}
	deps := m.deps
	deps.Counters = deps.Counters.Partner(owner.PartnerID) // the partner's own referral report
	s, err := New(m.cfg, deps, owner, hello)
	if err != nil {
		release()
		return nil, nil, err
	}
	s.onDetach = m.detached
	st, err := s.Attach(0, false)
	if err != nil {
		release()
		_ = s.Close(context.Background())
		return nil, nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		release()
		_ = s.Close(context.Background())
		return nil, nil, ErrManagerClosed
	}
	m.release[s] = release
	m.byID[s.id] = s
	m.byToken[s.resumeToken] = s
	m.mu.Unlock()
	if m.deps.OnOpened != nil {
		m.deps.OnOpened(s)
	}
	return s, st, nil
}

func (m *Manager) resume(owner Owner, hello *event.Hello) (*Session, *Stream, error) {
	m.mu.Lock()
	s := m.byToken[hello.ResumeToken]
	if m.closed {
		m.mu.Unlock()
		return nil, nil, ErrManagerClosed
	}
	if s == nil || s.owner != owner {
		m.mu.Unlock()
		return nil, nil, ErrResumeUnknown
	}
	if t := m.expiry[s]; t != nil {
		t.Stop()
		delete(m.expiry, s)
	}
	m.mu.Unlock()
	if hello.Device != "" && (hello.Device != s.Profile().ID || hello.Overrides != nil || len(hello.Surfaces) > 0 || hello.Region != "") {
		old := s.device()
		if err := s.negotiate(hello); err != nil {
			m.detached(s)
			return nil, nil, err
		}
		s.relayoutInForce(old)
	}
	st, err := s.Attach(hello.LastSeq, true)
	if err != nil {
		m.detached(s)
		return nil, nil, err
	}
	if m.deps.OnOpened != nil {
		m.deps.OnOpened(s)
	}
	return s, st, nil
}

// detached arms the resume window of a session that lost its transport.
func (m *Manager) detached(s *Session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.byID[s.id] == nil {
		return
	}
	if t := m.expiry[s]; t != nil {
		t.Stop()
	}
	var t clock.Timer
	t = m.deps.Clock.AfterFunc(m.cfg.ResumeWindow, func() {
		m.mu.Lock()
		if m.closed || m.expiry[s] != t {
			m.mu.Unlock()
			return
		}
		if s.ev.attached() {
			delete(m.expiry, s)
			m.mu.Unlock()
			return
		}
		m.wg.Add(1)
		m.removeLocked(s)
		m.mu.Unlock()
		defer m.wg.Done()
		_ = s.Close(context.Background())
	})
	m.expiry[s] = t
}

func (m *Manager) removeLocked(s *Session) {
	if r := m.release[s]; r != nil {
		r()
		delete(m.release, s)
	}
	delete(m.byID, s.id)
	delete(m.byToken, s.resumeToken)
	if t := m.expiry[s]; t != nil {
		t.Stop()
	}
	delete(m.expiry, s)
}

// Get returns a live session by id.
func (m *Manager) Get(id string) (*Session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[id]
	return s, ok
}

// Len returns the number of live sessions.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// End closes one session now (hang-up) and forgets it.
func (m *Manager) End(ctx context.Context, s *Session) error {
	m.mu.Lock()
	m.removeLocked(s)
	m.mu.Unlock()
	return s.Close(ctx)
}

// Close closes every session and joins every goroutine; new Opens fail.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	all := make([]*Session, 0, len(m.byID))
	for _, s := range m.byID {
		all = append(all, s)
		m.removeLocked(s)
	}
	m.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, s.Close(ctx))
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("session: manager close: %w", ctx.Err()))
	}
	return errors.Join(errs...)
}
