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
	"sync/atomic"

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
// attach a transport with Attach; feed client events with Handle. Its
// state is in parts with their own locks (see the package doc for their
// order); the fields before them are set by New (onDetach by the Manager
// before the first Attach) and never change.
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
	wg     sync.WaitGroup // the worker and in-flight timer callbacks

	closedOnce sync.Once // runs Deps.OnClosed

	ev     *events // the event stream and resume (events.go, stream.go)
	turns  turns   // the turn runner (turn.go)
	timers *timers // clock callbacks joined by Close (timers.go)
	names  titles  // the session's title (title.go)

	devMu sync.Mutex             // devMu serialises negotiate
	dev   atomic.Pointer[device] // what the hello negotiated (device.go)
	cards cards                  // safety cards and their acknowledgements (card.go)
	acts  offers                 // proposed actions and the offer (actions.go)
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
	log := deps.Logger.With("session", id)
	s := &Session{
		id: id, resumeToken: tok, owner: owner, cfg: cfg, deps: deps,
		log_: log, clock: deps.Clock, ev: newEvents(id, deps.Clock, log, cfg),
		ctx: ctx, cancel: cancel,
		turns: turns{inputs: make(chan turnInput, cfg.MaxQueued), gens: make(chan genReply, maxGens), max: cfg.HistoryMessages},
		acts:  offers{byID: map[string]*actionState{}},
	}
	s.timers = newTimers(deps.Clock, &s.wg)
	s.cards = cards{ev: s.ev, timers: s.timers, counters: deps.Counters, log: log, resends: cfg.AckResends,
		byID: map[string]*cardAcks{}}
	if hello == nil {
		hello = &event.Hello{Device: cfg.DefaultDevice}
	}
	if err := s.negotiate(hello); err != nil {
		cancel()
		return nil, err
	}
	s.disclosure = safety.NewDisclosure(s.clock.Now, cfg.DisclosureEvery)
	s.ev.emit(event.TypeSessionCreated, s.created(false, 1))
	// The AI disclosure opens every session (and repeats per the schedule).
	text, _ := s.disclosure.Take(s.device().surfaceKind())
	s.ev.emit(event.TypeNotice, event.Notice{Kind: "ai_disclosure", Text: s.disclosureText(text)})
	s.wg.Add(1)
	go s.worker()
	return s, nil
}

// ErrMissingDeps: Deps lacks a required collaborator.
var ErrMissingDeps = errors.New("converser, safety and layout are required")

// ErrBadHello wraps a device negotiation failure (unknown profile or an
// override out of bounds); the message names the field.
var ErrBadHello = errors.New("session: bad hello")

func (s *Session) disclosureText(fromSchedule string) string {
	if s.cfg.Disclosure != "" {
		return s.cfg.Disclosure
	}
	if fromSchedule != "" {
		return fromSchedule
	}
	return safety.DisclosureText(safety.SurfaceScreen)
}

// created is the session.created payload: replay from seq from.
func (s *Session) created(resumed bool, from int64) event.SessionCreated {
	d := s.device()
	info := make([]event.SurfaceInfo, 0, len(d.surfaces))
	for _, sf := range d.surfaces {
		info = append(info, event.SurfaceInfo{ID: sf.ID, Profile: d.profile.ID, Width: sf.Width, Height: sf.Height,
			AckTimeoutMS: int64(d.profile.AckTimeoutMS)})
	}
	return event.SessionCreated{ResumeToken: s.resumeToken, ResumeWindowMS: s.cfg.ResumeWindow.Milliseconds(),
		Resumed: resumed, ReplayFrom: from, Device: d.profile.ID, Surfaces: info, Title: s.names.get()}
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// ResumeToken returns the secret a client presents to resume the session.
func (s *Session) ResumeToken() string { return s.resumeToken }

// Owner returns who the session belongs to.
func (s *Session) Owner() Owner { return s.owner }

// LastSeq returns the seq of the newest event.
func (s *Session) LastSeq() int64 { return s.ev.lastSeq() }

// Attach connects a transport. afterSeq is the last seq the client has
// seen (0 for a new connection); the stream yields every later event. A
// previously attached stream ends with ErrReplaced. A resumed attach first
// yields a session.created with resumed=true and seq 0 (outside the log).
func (s *Session) Attach(afterSeq int64, resumed bool) (*Stream, error) {
	var ack any
	if resumed {
		ack = s.created(true, afterSeq+1)
	}
	return s.ev.attach(s, afterSeq, ack)
}

// Emit appends a server event to the session (transports use it for
// errors they detect; pipelines for speech and audio events).
func (s *Session) Emit(t event.Type, payload any) {
	if !transportEvent(t) {
		s.ev.emit(t, payload)
		return
	}
	// Speech and reply audio move the offer's answer window: the event
	// and the window change together.
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	s.ev.emit(t, payload)
	s.transportEventLocked(t, payload)
}

// EmitError sends an error event.
func (s *Session) EmitError(t event.ErrorType, msg string) {
	s.Emit(event.TypeError, event.Error{Error: event.ErrorBody{Type: t, Message: msg}})
}

// Close cancels the turn in progress, ends the attached stream, stops the
// timers and joins every goroutine the session started.
func (s *Session) Close(ctx context.Context) error {
	s.acts.mu.Lock()
	var withdrawn []Action
	at := s.clock.Now()
	if !s.ev.isClosed() {
		// Pending actions are declined, never approved, by a hang-up; the
		// events go out before the session stops emitting.
		withdrawn = s.withdrawLocked()
		s.timers.stopAll()
		s.ev.close()
	}
	s.acts.mu.Unlock()
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

func randomID(prefix string, n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session: random id: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}
