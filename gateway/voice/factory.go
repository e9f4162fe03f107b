package voice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// Listener recognises a turn's speech (the router's listen slot).
type Listener interface {
	Listen(ctx context.Context, req router.ListenRequest) (*router.ListenSession, error)
}

// Speaker synthesises reply text (the router's speak slot).
type Speaker interface {
	Speak(ctx context.Context, req router.SpeakRequest, onAudio func(router.AudioChunk) error) (router.SpeakResult, error)
}

// Deps are the voice sessions' collaborators.
type Deps struct {
	Listener Listener
	Speaker  Speaker
	Sessions *session.Manager
	// Owner maps the principal the signaling handler authorised to the
	// session's owner; nil owns it by the principal's partner and end user.
	Owner   func(p gateway.Principal) session.Owner
	Logger  *slog.Logger
	Metrics *Metrics
	// Counters counts safety cards whose resources were spoken (nil counts
	// nothing).
	Counters *safety.Counters
	// SpotGate keeps the spotted crisis phrases a turn's transcript agrees
	// with; nil is sphinx.DefaultGate (the default dictionary), or, if that
	// cannot be read, no spotted phrase counts.
	SpotGate SpotGate
	// Clock times the wait for a recogniser and admission (nil: the wall
	// clock).
	Clock clock.Clock
	// Recognisers is how many turns the listen slot recognises at once for
	// sessions whose safety level is not raised (router.sphinx.pool when it
	// is the embedded recogniser); admission sizes the talking sessions to
	// it (admit.go). 0: not a bounded pool, admission only reacts to turns
	// that waited.
	Recognisers int
}

// ErrMissingDeps: a required collaborator is missing.
var ErrMissingDeps = errors.New("voice: listener, speaker and sessions are required")

// Factory creates a voice session for each WebRTC connection.
type Factory struct {
	cfg  Config
	deps Deps

	mu   sync.Mutex               // mu guards live
	live map[string]*voiceSession // by conversation session id

	phrases *phraseCache // nil: fixed phrases are synthesised per session

	clock     clock.Clock
	pressure  *pressure   // the recogniser's queueing, for admission
	load      *talkLoad   // the recogniser's capacity against the talking sessions, for admission
	busyReady atomic.Bool // the busy answer is in the phrase cache
}

// NewFactory validates cfg and deps.
func NewFactory(cfg Config, deps Deps) (*Factory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("voice: config: %w", err)
	}
	if deps.Listener == nil || deps.Speaker == nil || deps.Sessions == nil {
		return nil, ErrMissingDeps
	}
	if deps.Owner == nil {
		deps.Owner = func(p gateway.Principal) session.Owner {
			return session.Owner{PartnerID: p.PartnerID, EndUserID: p.EndUserID}
		}
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Metrics == nil {
		deps.Metrics = NewMetrics(nil)
	}
	if deps.SpotGate == nil {
		var err error
		if deps.SpotGate, err = defaultSpotGate(); err != nil {
			deps.Logger.Warn("voice: no pronunciation dictionary; spotted crisis phrases will not count", "err", err)
		}
	}
	deps.Listener = timedListener{l: deps.Listener, wait: deps.Metrics.ListenWait}
	if deps.Clock == nil {
		deps.Clock = clock.Real{}
	}
	f := &Factory{cfg: cfg, deps: deps, live: map[string]*voiceSession{}, clock: deps.Clock,
		pressure: newPressure(time.Duration(cfg.AdmitListenWaitMs) * time.Millisecond),
		load:     newTalkLoad(deps.Recognisers, time.Duration(cfg.AdmitListenWaitMs)*time.Millisecond, deps.Metrics)}
	if cfg.PhraseCache > 0 {
		f.phrases = newPhraseCache(deps.Speaker, cfg.PhraseCache, deps.Metrics)
	}
	return f, nil
}

// countSpoken counts a card whose resources go out in speech, in partner's
// report, by level, the first resource's country and the voice surface (no
// text, no ids).
func (f *Factory) countSpoken(partner string, level safety.Level, rs []safety.Resource) {
	if len(rs) == 0 {
		return
	}
	f.deps.Counters.Partner(partner).CardSpoken(level, rs[0].Country, safety.SurfaceVoice)
}

// New implements rtc.SessionFactory.
func (f *Factory) New(ctx context.Context, info rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
	in, err := newInbound(f.cfg)
	if err != nil {
		return nil, err
	}
	var hello *event.Hello // nil: the default profile until the client's hello names one
	if info.Device != "" {
		hello = &event.Hello{Device: info.Device}
	}
	sess, stream, err := f.deps.Sessions.Open(f.deps.Owner(info.Principal), hello)
	if err != nil {
		if errors.Is(err, session.ErrBadHello) {
			return nil, gateway.Errorf(gateway.InvalidRequest, "%s", err.Error())
		}
		return nil, fmt.Errorf("voice: open session: %w", err)
	}
	vctx, cancel := context.WithCancel(context.Background())
	s := &voiceSession{
		cfg: f.cfg, deps: f.deps, conn: c, stream: stream, swapCh: make(chan *session.Stream, 1),
		log: f.deps.Logger.With("session", sess.ID()), m: f.deps.Metrics,
		ctx: vctx, cancel: cancel, origin: time.Now(),
		in: in, pausedAt: -1,
		speakCh: make(chan speakItem, f.cfg.SpeakQueue),
		turns:   map[string]*turnTiming{}, cancelled: map[string]bool{},
	}
	s.echo = &echoTap{in: in, origin: s.origin} // one media clock for both sides of the echo guard
	s.sess.Store(sess)
	s.startRecording(sess.ID())
	if f.cfg.EchoGuard {
		c.Sender().SetTap(s.echo.reference)
	}
	s.factory = f
	s.talk = f.load.join(f.clock.Now())
	f.mu.Lock()
	f.live[sess.ID()] = s
	f.mu.Unlock()
	f.deps.Metrics.Sessions.Inc()
	s.wg.Add(3)
	go s.mediaLoop()
	go s.eventPump()
	go s.speaker()
	if f.phrases != nil && !f.busyReady.Load() {
		s.wg.Add(1)
		go s.warmBusy()
	}
	return s, nil
}
