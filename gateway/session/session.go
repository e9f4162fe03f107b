package session

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/safety"
)

// Owner identifies who a session belongs to; only the same owner may
// resume it.
type Owner struct {
	PartnerID string
	EndUserID string
}

// Session is one conversation. Create sessions with a Manager (or New);
// attach a transport with Attach; feed client events with Handle.
type Session struct {
	id          string
	resumeToken string
	owner       Owner
	cfg         Config
	deps        Deps
	log_        *slog.Logger
	clock       clock.Clock
	onDetach    func(*Session)
	disclosure  *safety.Disclosure

	ctx    context.Context // cancelled by Close; parent of every turn
	cancel context.CancelFunc
	inputs chan turnInput
	gens   chan genReply  // session-written replies, run in turn order
	wg     sync.WaitGroup // the worker and in-flight timer callbacks

	closedOnce sync.Once // runs Deps.OnClosed

	// mu guards everything below.
	mu       sync.Mutex
	closed   bool
	seq      int64
	log      replayLog
	wake     chan struct{} // closed and replaced on every emit
	stream   *Stream
	profile  devices.Profile
	surfaces []devices.Surface // visual surfaces cards are laid out for
	region   string
	history  []Message
	turnN    int
	lastTurn string     // id of the last finished turn, for Interrupt
	cur      *turnState // the turn in progress, if any
	cards    map[string]*cardAcks
	active   *activeCard // the card on display for input.key
	actions  map[string]*actionState
	order    []string // ids of proposed actions not yet offered, oldest first
	offer    *offer   // the action offered for an answer, if any
	audio    bool     // a voice transport is attached (speech or reply audio seen)
	title    string
	titled   bool // named once (automatically, or by the person) — SetTitle no longer applies
	timers   map[clock.Timer]struct{}
}

// New creates a session for owner with the device negotiated from hello
// (nil hello: Config.DefaultDevice) and emits session.created and the AI
// disclosure notice. Most callers use Manager.Open instead.
func New(cfg Config, deps Deps, owner Owner, hello *event.Hello) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Converser == nil || deps.Safety == nil || deps.Layout == nil {
		return nil, fmt.Errorf("session: new: %w", ErrMissingDeps)
	}
	if deps.Clock == nil {
		deps.Clock = clock.Real{}
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	id, err := randomID("sess_", 12)
	if err != nil {
		return nil, err
	}
	tok, err := randomID("rt_", 24)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		id: id, resumeToken: tok, owner: owner, cfg: cfg, deps: deps,
		log_: deps.Logger.With("session", id), clock: deps.Clock,
		ctx: ctx, cancel: cancel,
		inputs:  make(chan turnInput, cfg.MaxQueued),
		gens:    make(chan genReply, maxGens),
		log:     replayLog{maxEvents: cfg.ReplayEvents, maxBytes: cfg.ReplayBytes},
		wake:    make(chan struct{}),
		cards:   map[string]*cardAcks{},
		actions: map[string]*actionState{},
		timers:  map[clock.Timer]struct{}{},
	}
	if hello == nil {
		hello = &event.Hello{Device: cfg.DefaultDevice}
	}
	if err := s.negotiate(hello); err != nil {
		cancel()
		return nil, err
	}
	s.disclosure = safety.NewDisclosure(s.clock.Now, cfg.DisclosureEvery)
	s.mu.Lock()
	s.emitLocked(event.TypeSessionCreated, s.createdLocked(false, 1))
	// The AI disclosure opens every session (and repeats per the schedule).
	text, _ := s.disclosure.Take(s.surfaceKindLocked())
	s.emitLocked(event.TypeNotice, event.Notice{Kind: "ai_disclosure", Text: s.disclosureText(text)})
	s.mu.Unlock()
	s.wg.Add(1)
	go s.worker()
	return s, nil
}

// ErrMissingDeps: Deps lacks a required collaborator.
var ErrMissingDeps = errors.New("converser, safety and layout are required")

// ErrBadHello wraps a device negotiation failure (unknown profile or an
// override out of bounds); the message names the field.
var ErrBadHello = errors.New("session: bad hello")

func (s *Session) negotiate(h *event.Hello) error {
	dh := devices.Hello{Profile: h.Device}
	if h.Overrides != nil {
		dh.Overrides = *h.Overrides
	}
	p, err := devices.Negotiate(dh)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadHello, err)
	}
	var surf []devices.Surface
	for _, sf := range p.Surfaces {
		if !sf.Visual() {
			continue
		}
		if len(h.Surfaces) > 0 && !contains(h.Surfaces, sf.ID) {
			continue
		}
		surf = append(surf, sf)
	}
	for _, want := range h.Surfaces {
		if _, ok := p.Surface(want); !ok {
			return fmt.Errorf("%w: surfaces: profile %s has no surface %q", ErrBadHello, p.ID, want)
		}
	}
	s.mu.Lock()
	s.profile, s.surfaces = p, surf
	if h.Region != "" {
		s.region = h.Region
	}
	s.mu.Unlock()
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// surfaceKindLocked is the kind of the session's main surface, for the
// disclosure wording.
func (s *Session) surfaceKindLocked() safety.SurfaceKind {
	if len(s.surfaces) > 0 {
		return safety.SurfaceKind(s.surfaces[0].Kind)
	}
	return safety.SurfaceVoice
}

func (s *Session) disclosureText(fromSchedule string) string {
	if s.cfg.Disclosure != "" {
		return s.cfg.Disclosure
	}
	if fromSchedule != "" {
		return fromSchedule
	}
	return safety.DisclosureText(safety.SurfaceScreen)
}

func (s *Session) createdLocked(resumed bool, from int64) event.SessionCreated {
	info := make([]event.SurfaceInfo, 0, len(s.surfaces))
	for _, sf := range s.surfaces {
		info = append(info, event.SurfaceInfo{ID: sf.ID, Profile: s.profile.ID, Width: sf.Width, Height: sf.Height,
			AckTimeoutMS: int64(s.profile.AckTimeoutMS)})
	}
	return event.SessionCreated{ResumeToken: s.resumeToken, ResumeWindowMS: s.cfg.ResumeWindow.Milliseconds(),
		Resumed: resumed, ReplayFrom: from, Device: s.profile.ID, Surfaces: info, Title: s.title}
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// ResumeToken returns the secret a client presents to resume the session.
func (s *Session) ResumeToken() string { return s.resumeToken }

// Owner returns who the session belongs to.
func (s *Session) Owner() Owner { return s.owner }

// Profile returns the negotiated device profile.
func (s *Session) Profile() devices.Profile {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.profile
}

// LastSeq returns the seq of the newest event.
func (s *Session) LastSeq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// Attach connects a transport. afterSeq is the last seq the client has
// seen (0 for a new connection); the stream yields every later event. A
// previously attached stream ends with ErrReplaced. A resumed attach first
// yields a session.created with resumed=true and seq 0 (outside the log).
func (s *Session) Attach(afterSeq int64, resumed bool) (*Stream, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if afterSeq > s.seq {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: last_seq %d, newest %d", ErrResumeAhead, afterSeq, s.seq)
	}
	if afterSeq+1 < s.log.firstSeq {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: last_seq %d, oldest kept %d", ErrResumeTooOld, afterSeq, s.log.firstSeq)
	}
	if old := s.stream; old != nil {
		old.failLocked(ErrReplaced)
	}
	st := &Stream{s: s, next: afterSeq + 1, done: make(chan struct{})}
	s.stream = st
	if resumed {
		// The resume acknowledgement is not part of the numbered log (seq 0):
		// it comes first, before the replayed events.
		b, err := event.Encode(event.Envelope{Type: event.TypeSessionCreated, SessionID: s.id, At: s.clock.Now().UnixMilli()},
			s.createdLocked(true, afterSeq+1))
		if err == nil {
			st.pre = b
		}
	}
	s.mu.Unlock()
	return st, nil
}

// Emit appends a server event to the session (transports use it for
// errors they detect; pipelines for speech and audio events).
func (s *Session) Emit(t event.Type, payload any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emitLocked(t, payload)
	s.transportEventLocked(t, payload)
}

// EmitError sends an error event.
func (s *Session) EmitError(t event.ErrorType, msg string) {
	s.Emit(event.TypeError, event.Error{Error: event.ErrorBody{Type: t, Message: msg}})
}

// emitLocked numbers, encodes and logs one event and wakes the stream; a
// stream that has not read an evicted event fails with ErrSlowConsumer.
func (s *Session) emitLocked(t event.Type, payload any) {
	if s.closed {
		return
	}
	b, err := event.Encode(event.Envelope{Type: t, Seq: s.seq + 1, SessionID: s.id, At: s.clock.Now().UnixMilli()}, payload)
	if err != nil {
		// Payloads are our own types; this is a bug, not client input.
		s.log_.Error("session: encode event", "type", string(t), "err", err)
		return
	}
	s.seq++
	s.log.append(s.seq, b)
	if st := s.stream; st != nil && st.next < s.log.firstSeq {
		st.failLocked(ErrSlowConsumer)
		s.stream = nil
		s.log_.Warn("session: slow consumer", "seq", s.seq)
	}
	close(s.wake)
	s.wake = make(chan struct{})
}

// Close cancels the turn in progress, ends the attached stream, stops the
// timers and joins every goroutine the session started.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	var withdrawn []Action
	at := s.clock.Now()
	if !s.closed {
		// Pending actions are declined, never approved, by a hang-up; the
		// events go out before the session stops emitting.
		withdrawn = s.withdrawLocked()
		s.closed = true
		if s.stream != nil {
			s.stream.failLocked(ErrClosed)
			s.stream = nil
		}
		for t := range s.timers {
			t.Stop()
		}
		clear(s.timers)
	}
	s.mu.Unlock()
	if h := s.deps.Actions; h != nil {
		for _, a := range withdrawn {
			if err := h.Decline(ctx, s.id, a, Decision{Via: ViaHangUp, At: at}); err != nil {
				s.log_.Warn("session: action decline on hang-up failed", "action", a.ID, "err", err)
			}
		}
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("session: close %s: %w", s.id, ctx.Err())
	}
	s.closedOnce.Do(func() {
		if s.deps.OnClosed != nil {
			s.deps.OnClosed(s)
		}
	})
	return nil
}

// afterFunc arms a timer whose callback is joined by Close and never runs
// after it.
func (s *Session) afterFuncLocked(d time.Duration, f func()) clock.Timer {
	var t clock.Timer
	t = s.clock.AfterFunc(d, func() {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		delete(s.timers, t)
		s.wg.Add(1)
		s.mu.Unlock()
		defer s.wg.Done()
		f()
	})
	s.timers[t] = struct{}{}
	return t
}

func (s *Session) stopTimerLocked(t clock.Timer) {
	if t != nil {
		t.Stop()
		delete(s.timers, t)
	}
}

func randomID(prefix string, n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session: random id: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}
