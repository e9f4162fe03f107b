package voice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/gateway"
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
	deps.Listener = timedListener{l: deps.Listener, wait: deps.Metrics.ListenWait}
	f := &Factory{cfg: cfg, deps: deps, live: map[string]*voiceSession{}}
	if cfg.PhraseCache > 0 {
		f.phrases = newPhraseCache(deps.Speaker, cfg.PhraseCache, deps.Metrics)
	}
	return f, nil
}

// OnUnacked is the session.Deps.OnUnacked hook for voice: when a safety
// card's first page was not acknowledged in time, the voice session of that
// conversation (if it has one) speaks the card's first resource, from its
// pre-stored spoken form, at once. It never blocks: with the speech queue
// full the resource is logged as not spoken.
func (f *Factory) OnUnacked(s *session.Session, card event.SafetyCard, surface string) {
	if f == nil || s == nil || len(card.Resources) == 0 {
		return
	}
	f.mu.Lock()
	vs := f.live[s.ID()]
	f.mu.Unlock()
	if vs == nil {
		return
	}
	it := speakItem{turnID: "safety:" + card.CardID, text: safety.SpokenResource(card.Resources[0]), last: true, protected: true}
	select {
	case vs.speakCh <- it:
		f.countSpoken(card.Level, card.Resources)
	default:
		vs.log.Warn("voice: speech queue full; unacknowledged card's resource not spoken", "card", card.CardID, "surface", surface)
	}
}

// countSpoken counts a card whose resources go out in speech, by level,
// the first resource's country and the voice surface (no text, no ids).
func (f *Factory) countSpoken(level string, rs []safety.Resource) {
	lv, err := safety.ParseLevel(level)
	if err != nil || len(rs) == 0 {
		return
	}
	f.deps.Counters.CardSpoken(lv, rs[0].Country, safety.SurfaceVoice)
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
	f.mu.Lock()
	f.live[sess.ID()] = s
	f.mu.Unlock()
	f.deps.Metrics.Sessions.Inc()
	s.wg.Add(3)
	go s.mediaLoop()
	go s.eventPump()
	go s.speaker()
	return s, nil
}

// voiceSession implements rtc.Session for one connection.
type voiceSession struct {
	factory *Factory
	cfg     Config
	deps    Deps
	conn    *rtc.Conn
	// sess is the conversation; a resume hello swaps it (before the first
	// turn) for the one the client resumes.
	sess     atomic.Pointer[session.Session]
	streamMu sync.Mutex // streamMu guards stream (the pump reads it, Closed detaches it)
	stream   *session.Stream
	swapCh   chan *session.Stream // a resumed conversation's stream for the pump
	resumeMu sync.Mutex           // serialises resume hellos
	turns0   atomic.Bool          // a turn has started on this connection
	log      *slog.Logger
	m        *Metrics
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	origin   time.Time
	rec      *recording // record mode; nil when off

	// in is the listening path: OnRTP pushes from the read loop, the
	// media loop pulls and analyses, the sender's tap feeds its echo guard.
	in   *pipeline.Inbound
	echo *echoTap

	// Owned by the media loop.
	echoSeen   int     // in.EchoRuns already counted
	feed       *feeder // the turn in progress
	turnN      int
	turnID     string
	lastPart   string
	partAt     int64
	listenDone sync.WaitGroup // final-transcript goroutines, joined on close

	// bargeMu guards the barge-in state: the media loop pauses and resumes,
	// the media loop or a final transcript confirms.
	bargeMu   sync.Mutex
	pausedAt  int64  // sample time playout was paused by barge-in; -1 when not paused
	bargeTurn string // turn id of the paused reply

	speakCh chan speakItem

	playMu sync.Mutex // playMu guards play and turns
	play   *speechSource
	// playTurn is the turn id of play; last is the newest source handed to
	// the sender, playing or not.
	playTurn string
	last     *speechSource
	turns    map[string]*turnTiming
	// cancelled are turns whose reply was interrupted: the speaker drops
	// their sentences.
	cancelled map[string]bool
}

type speakItem struct {
	turnID string
	text   string
	last   bool // the reply is complete: finish the source after this
	// protected: the disclosure or spoken safety resources (barge-in does
	// not cut them; they are not reply text).
	protected bool
	// phrase: a fixed text spoken alone (the disclosure), played from the
	// factory's phrase cache when it has one.
	phrase bool
}

// OnRTP implements rtc.AudioSink.
func (s *voiceSession) OnRTP(p rtc.Packet) {
	s.rec.inbound(p.SequenceNumber, p.Timestamp, p.Payload)
	arrival := audio.OpusTicks(p.Arrival.Sub(s.origin))
	if err := s.in.Push(p.SequenceNumber, p.Timestamp, p.Payload, arrival); err != nil {
		s.log.Debug("voice: packet dropped", "err", err)
	}
}

// OnEvent implements rtc.EventSink: client events from the data channel.
func (s *voiceSession) OnEvent(data []byte) {
	s.rec.eventIn(data)
	if ev, err := event.Decode(data); err == nil {
		if h, ok := ev.(*event.Hello); ok && h.ResumeToken != "" {
			s.resume(h)
			return
		}
	}
	// Errors are reported to the client by the session.
	_ = s.session().HandleJSON(s.ctx, data)
}

func (s *voiceSession) session() *session.Session { return s.sess.Load() }

// resume moves this connection onto the conversation the client resumes
// (a phone that changed network): the session it was given at connect is
// ended, and the pump streams the resumed one from the client's last seq,
// so no event is lost. Only before the connection's first turn.
func (s *voiceSession) resume(h *event.Hello) {
	s.resumeMu.Lock()
	defer s.resumeMu.Unlock()
	cur := s.session()
	if s.turns0.Load() {
		cur.Emit(event.TypeError, event.Error{Error: event.ErrorBody{Type: event.ErrConflict,
			Message: "a resume hello must come before the connection's first turn; reconnect to resume", EventType: string(event.TypeHello)}})
		return
	}
	next, st, err := s.deps.Sessions.Open(cur.Owner(), h)
	if err != nil {
		t := event.ErrInvalidRequest
		if errors.Is(err, session.ErrResumeUnknown) {
			t = event.ErrNotFound
		}
		cur.Emit(event.TypeError, event.Error{Error: event.ErrorBody{Type: t, Message: err.Error(), EventType: string(event.TypeHello)}})
		return
	}
	if next == cur {
		st.Detach()
		return
	}
	s.factory.mu.Lock()
	if s.factory.live[cur.ID()] == s {
		delete(s.factory.live, cur.ID())
	}
	s.factory.live[next.ID()] = s
	s.factory.mu.Unlock()
	s.sess.Store(next)
	// The pump takes the new stream when the old one ends.
	s.swapCh <- st
	s.streamMu.Lock()
	old := s.stream
	s.streamMu.Unlock()
	old.Detach()
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	if err := s.deps.Sessions.End(ctx, cur); err != nil {
		s.log.Warn("voice: end the connection's own session after a resume", "err", err)
	}
	s.log.Debug("voice: resumed", "resumed_session", next.ID(), "last_seq", h.LastSeq)
}

// Closed implements rtc.Session: the connection is gone; stop and join
// everything, then end the conversation session.
func (s *voiceSession) Closed(reason error) {
	s.resumeMu.Lock() // no resume swaps the session from here on
	defer s.resumeMu.Unlock()
	sess := s.session()
	s.factory.mu.Lock()
	if s.factory.live[sess.ID()] == s {
		delete(s.factory.live, sess.ID())
	}
	s.factory.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	if s.feed != nil {
		s.feed.abort()
		if ls, err := s.feed.result(); err == nil {
			_ = ls.Close()
		}
	}
	s.listenDone.Wait()
	s.countSetupFailure()
	s.stopRecording()
	s.streamMu.Lock()
	st := s.stream
	s.streamMu.Unlock()
	select {
	case pending := <-s.swapCh:
		pending.Detach()
	default:
	}
	// A client that vanished (app killed, network changed: DTLS close or
	// ICE failed) may come back with its resume token within the session's
	// resume window; hang-up, idle timeout and shutdown end the
	// conversation.
	// A conversation another connection resumed is that connection's now.
	switch {
	case errors.Is(st.Err(), session.ErrReplaced):
	case errors.Is(reason, rtc.ErrPeerClosed) || errors.Is(reason, rtc.ErrICEFailed):
		st.Detach()
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.deps.Sessions.End(ctx, sess); err != nil {
			s.log.Warn("voice: end session", "err", err)
		}
	}
	s.m.Sessions.Dec()
	s.log.Debug("voice: closed", "reason", reason)
}

// sampleMs converts 16 kHz sample time to milliseconds.
func sampleMs(t int64) int64 { return t / 16 }

// mediaLoop pulls one 20 ms frame per tick from the jitter buffer and runs
// VAD and the turn detector on it, on sample time.
func (s *voiceSession) mediaLoop() {
	defer s.wg.Done()
	// The clock starts before the ticker, so an on-time tick always finds
	// exactly one frame due.
	clock := time.Now()
	t := time.NewTicker(rtc.FrameDuration)
	defer t.Stop()
	// After a stall the loop catches up on as many frames as the jitter
	// buffer can hold; older ones have been dropped by it already.
	catchUp := int64(s.cfg.Jitter.MaxDelayMs/20) + 5
	// Frames sit on the media clock in samples since origin, the loop's
	// start rounded down to the echo guard's 10 ms grid.
	base := audio.SampleTime(clock.Sub(s.origin)) / audio.Frame10 * audio.Frame10
	var done int64 // frames processed since clock
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		// The media clock is elapsed time, not ticks: a late tick (a busy
		// machine) is caught up frame by frame, so sample time stays true.
		due := int64(time.Since(clock)/rtc.FrameDuration) - done
		if due > 1 {
			// Every frame but the newest is a period or more late.
			s.m.FrameOverruns.Add(float64(due - 1))
		}
		if due > catchUp {
			due = catchUp
			done = int64(time.Since(clock)/rtc.FrameDuration) - due
		}
		for ; due > 0; due-- {
			s.frame(base + done*audio.Frame20)
			done++
		}
	}
}

// frame processes one 20 ms frame at sample time at on the media clock.
func (s *voiceSession) frame(at int64) {
	start := time.Now()
	pcm, _, err := s.in.Pull()
	if err != nil {
		s.log.Warn("voice: jitter pull", "err", err)
		return
	}
	s.in.Analyse(pcm, at, s.conn.Sender().Active(), s.onTurnEvent)
	if n := s.in.EchoRuns(); n > s.echoSeen {
		s.m.BargeIns.WithLabelValues("echo").Add(float64(n - s.echoSeen))
		s.echoSeen = n
	}
	if s.feed != nil {
		s.feed.write(pcm)
		s.maybePartial()
	}
	s.checkBargeIn()
	s.m.Frame.Observe(time.Since(start).Seconds())
}

func (s *voiceSession) onTurnEvent(ev *turn.Event) {
	switch ev.Type {
	case turn.SpeechStarted:
		s.turns0.Store(true)
		s.turnN++
		s.turnID = fmt.Sprintf("v%d", s.turnN)
		s.session().Emit(event.TypeSpeechStarted, event.Speech{TurnID: s.turnID, AudioMS: sampleMs(ev.AudioStart)})
		s.feed = newFeeder(s.ctx, s.deps.Listener, router.ListenRequest{Language: s.cfg.Language})
		s.lastPart, s.partAt = "", ev.At
		// The recogniser gets the speech from its padded start.
		for _, f := range s.in.Prefix(s.in.Now() - ev.AudioStart) {
			s.feed.write(f)
		}
	case turn.OverlapSpeech:
		s.log.Debug("voice: speech over playout", "turn", s.turnID, "at_ms", sampleMs(ev.At))
		s.pauseForBargeIn(ev.At)
	case turn.SpeechStopped:
		now := time.Now()
		speechEnd := now.Add(-time.Duration(ev.At-ev.SpeechEnd) * time.Second / 16000)
		s.m.EndOfTurnDelay.Observe(now.Sub(speechEnd).Seconds())
		id := s.turnID
		s.session().Emit(event.TypeSpeechStopped, event.SpeechStopped{TurnID: id, AudioMS: sampleMs(ev.SpeechEnd), EndOfTurnMS: sampleMs(ev.At - ev.SpeechEnd)})
		fd := s.feed
		s.feed = nil
		if fd == nil {
			s.nothingHeard(id, event.NothingHeardNoWords)
			return
		}
		fd.close()
		s.playMu.Lock()
		s.turns[id] = &turnTiming{speechEnd: speechEnd, stopped: now}
		s.playMu.Unlock()
		s.listenDone.Add(1)
		go s.finishTurn(id, fd, now)
	}
}

// finishTurn waits for the final transcript off the media loop, then starts
// the session turn. A turn with no words starts nothing.
func (s *voiceSession) finishTurn(id string, fd *feeder, stopped time.Time) {
	defer s.listenDone.Done()
	ls, err := fd.result()
	var tr router.Transcript
	if err == nil {
		tr, err = ls.Final(s.ctx)
		_ = ls.Close()
	}
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Warn("voice: final transcript", "turn", id, "err", err)
			s.session().EmitError(event.ErrEngineUnavailable, "VERA could not hear that turn; please say it again")
			s.nothingHeard(id, event.NothingHeardNotTranscribed)
		}
		return
	}
	s.m.TranscriptionDelay.Observe(time.Since(stopped).Seconds())
	text := strings.TrimSpace(tr.Text)
	if text == "" && len(tr.Spotted) == 0 {
		s.nothingHeard(id, event.NothingHeardNoWords)
		return
	}
	if tt := s.timing(id); tt != nil {
		tt.markTranscript(time.Now())
	}
	// Words over paused playout confirm the barge-in before the new turn
	// starts, so the history holds only what was heard of the old reply.
	s.confirmBargeIn()
	s.session().SubmitVoiceTurn(id, text, tr.Spotted)
}

// nothingHeard ends a turn that gets no reply: the client is told
// (input.nothing_heard, the turn's last event) and the session restarts an
// offer's answer window.
func (s *voiceSession) nothingHeard(id, reason string) {
	s.playMu.Lock()
	delete(s.turns, id)
	s.playMu.Unlock()
	s.session().Emit(event.TypeNothingHeard, event.NothingHeard{TurnID: id, Reason: reason})
	s.session().NothingHeard(id)
}

// maybePartial sends transcript.partial when the hypothesis changed, at
// most every PartialEveryMs; words during a barge-in confirm it.
func (s *voiceSession) maybePartial() {
	now := s.in.Now()
	if now-s.partAt < int64(s.cfg.PartialEveryMs)*16 {
		return
	}
	s.partAt = now
	p := strings.TrimSpace(s.feed.partial())
	if p == "" || p == s.lastPart {
		return
	}
	s.lastPart = p
	s.session().Emit(event.TypeTranscriptPartial, event.Transcript{TurnID: s.turnID, Text: p})
	s.confirmBargeIn()
}

// pauseForBargeIn: user speech has overlapped playout for Turn.BargeInMs.
// Playout pauses at once, unless what is playing is the AI disclosure or
// spoken safety resources, which are never cut short.
func (s *voiceSession) pauseForBargeIn(at int64) {
	snd := s.conn.Sender()
	if !snd.Active() {
		return
	}
	s.playMu.Lock()
	src, id := s.play, s.playTurn
	s.playMu.Unlock()
	if src == nil {
		return // the source finished between the check and now
	}
	if src.protectedAt(int(snd.Position().Frames) * rtc.PCMFrame) {
		s.log.Debug("voice: barge-in over protected speech", "turn", id)
		s.m.BargeIns.WithLabelValues("protected").Inc()
		return
	}
	s.bargeMu.Lock()
	defer s.bargeMu.Unlock()
	if s.pausedAt >= 0 {
		return
	}
	snd.Pause()
	s.pausedAt, s.bargeTurn = at, id
}

// checkBargeIn resumes paused playout when no words came in time (a false
// interruption: a cough, a door, a word to someone else too short to
// transcribe).
func (s *voiceSession) checkBargeIn() {
	s.bargeMu.Lock()
	resume := s.pausedAt >= 0 && s.in.Now()-s.pausedAt >= int64(s.cfg.ResumeAfterMs)*16 && s.lastPart == ""
	if resume {
		s.pausedAt, s.bargeTurn = -1, ""
	}
	s.bargeMu.Unlock()
	if resume {
		s.conn.Sender().Resume()
		s.m.BargeIns.WithLabelValues("resumed").Inc()
	}
}

// confirmBargeIn: the person said words over paused playout. Playout stops,
// the reply is cancelled, and the history keeps only what was heard. It does
// nothing when no barge-in is pending.
func (s *voiceSession) confirmBargeIn() {
	s.bargeMu.Lock()
	id := s.bargeTurn
	pending := s.pausedAt >= 0
	s.pausedAt, s.bargeTurn = -1, ""
	s.bargeMu.Unlock()
	if !pending {
		return
	}
	s.playMu.Lock()
	src := s.play
	if s.playTurn != id {
		src = nil // that reply already ended; a newer one is not the one interrupted
	}
	s.playMu.Unlock()
	if src == nil {
		s.conn.Sender().Resume()
		return
	}
	pos := s.conn.Sender().Stop()
	s.playMu.Lock()
	if s.play == src {
		s.play, s.playTurn = nil, ""
	}
	s.playMu.Unlock()
	src.finish()
	s.cancelTurn(id)
	s.m.BargeIns.WithLabelValues("interrupted").Inc()
	// The session cancels a reply still being generated, or truncates the
	// finished one in its history, to what was heard.
	s.session().Interrupt(id, src.heard(int(pos.Frames)*rtc.PCMFrame), "barge_in")
}

// cancelTurn makes the speaker drop the turn's queued and future sentences.
func (s *voiceSession) cancelTurn(id string) {
	s.playMu.Lock()
	s.cancelled[id] = true
	s.playMu.Unlock()
}

// wireEvent is the part of a server event the pump looks at.
type wireEvent struct {
	Type   event.Type `json:"type"`
	TurnID string     `json:"turn_id"`
	Delta  string     `json:"delta"`
	Text   string     `json:"text"`
	Kind   string     `json:"kind"`
	// safety.card
	Level     string            `json:"level"`
	Resources []safety.Resource `json:"resources"`
}

// eventPump forwards the session's events to the data channel in order and
// turns reply text into speech. Card before text before audio: the session
// emits the card first, and audio starts from reply.delta.
func (s *voiceSession) eventPump() {
	defer s.wg.Done()
	pending := map[string]string{}
	s.streamMu.Lock()
	st := s.stream
	s.streamMu.Unlock()
	for {
		data, err := st.Next(s.ctx)
		if err != nil {
			select {
			case next := <-s.swapCh: // resumed: carry on with that conversation
				s.streamMu.Lock()
				s.stream, st = next, next
				s.streamMu.Unlock()
				clear(pending)
				continue
			default:
			}
			if s.ctx.Err() == nil {
				s.log.Info("voice: event stream ended", "err", err)
				// End returns at once and the Conn joins its own goroutines;
				// Close would wait for this pump, which is one of them.
				s.conn.End(err)
			}
			return
		}
		if err := s.conn.SendEvent(data); err != nil {
			s.log.Warn("voice: send event", "err", err)
		}
		s.rec.eventOut(data)
		var ev wireEvent
		if json.Unmarshal(data, &ev) != nil {
			continue
		}
		switch ev.Type {
		case event.TypeNotice:
			if ev.Kind == "ai_disclosure" {
				s.enqueue(speakItem{turnID: "notice", text: ev.Text, last: true, protected: true, phrase: true})
			}
		case event.TypeSafetyCard:
			if s.session().Profile().MustSpeakSafety() {
				s.enqueue(speakItem{turnID: ev.TurnID, text: spokenResources(ev.Resources), protected: true})
				s.factory.countSpoken(ev.Level, ev.Resources)
			}
		case event.TypeReplyDelta:
			s.firstText(ev.TurnID)
			sentences, rest := splitSentences(pending[ev.TurnID] + ev.Delta)
			pending[ev.TurnID] = rest
			for _, t := range sentences {
				s.enqueue(speakItem{turnID: ev.TurnID, text: t})
			}
		case event.TypeReplyDone:
			s.firstText(ev.TurnID)
			rest := strings.TrimSpace(pending[ev.TurnID])
			delete(pending, ev.TurnID)
			s.enqueue(speakItem{turnID: ev.TurnID, text: rest, last: true})
		case event.TypeReplyInterrupted:
			delete(pending, ev.TurnID)
		}
	}
}

func (s *voiceSession) firstText(turnID string) {
	tt := s.timing(turnID)
	if tt == nil {
		return
	}
	now := time.Now()
	if first, transcript := tt.markFirstText(now); first && !transcript.IsZero() {
		s.m.LLMTTFT.Observe(now.Sub(transcript).Seconds())
	}
}

func (s *voiceSession) enqueue(it speakItem) {
	select {
	case s.speakCh <- it:
	case <-s.ctx.Done():
	}
}

// spokenResources is the pre-stored spoken form of every resource, in order.
func spokenResources(rs []safety.Resource) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = safety.SpokenResource(r)
	}
	return strings.Join(parts, " ")
}

// speaker synthesises queued sentences and plays them, one source per turn.
func (s *voiceSession) speaker() {
	defer s.wg.Done()
	select {
	case <-s.conn.Ready():
		s.setupDone()
	case <-s.ctx.Done():
		return
	}
	for {
		var it speakItem
		select {
		case it = <-s.speakCh:
		case <-s.ctx.Done():
			return
		}
		s.playMu.Lock()
		skip := s.cancelled[it.turnID] && !it.protected // spoken resources outlive a barge-in
		s.playMu.Unlock()
		if skip {
			continue
		}
		if it.phrase && it.last && s.playPhrase(it) {
			continue
		}
		src := s.sourceFor(it.turnID, nil)
		if it.text != "" {
			src.beginSentence(it.text, it.protected)
			asked := time.Now()
			first := true
			tt := s.timing(it.turnID)
			_, err := s.deps.Speaker.Speak(s.ctx, router.SpeakRequest{Text: it.text, SampleRate: rtc.PCMRate, PCMOnly: true},
				func(c router.AudioChunk) error {
					if c.Codec != router.CodecPCM || c.SampleRate != rtc.PCMRate {
						return fmt.Errorf("voice: speak returned %s at %d Hz, want PCM at %d", c.Codec, c.SampleRate, rtc.PCMRate)
					}
					if first {
						first = false
						now := time.Now()
						s.m.TTSTTFB.Observe(now.Sub(asked).Seconds())
						if tt != nil {
							tt.markFirstAudio(now)
						}
					}
					src.write(c.PCM)
					return nil
				})
			if err != nil && s.ctx.Err() == nil {
				s.log.Warn("voice: speak", "turn", it.turnID, "err", err)
			}
		}
		if it.last {
			// The source stays current until it has played out (a barge-in
			// may still pause it); the sender's onDone releases it.
			src.finish()
		}
	}
}

// sourceFor returns the playing source of turnID, or starts a new one
// once the previous one has played out: the gateway never talks over
// itself, and a newer Play would cut the older source short.
//
// With ph set the new source plays the phrase's pre-encoded frames.
func (s *voiceSession) sourceFor(turnID string, ph *phrase) *speechSource {
	s.playMu.Lock()
	if ph == nil && s.play != nil && s.playTurn == turnID && !s.play.finished() {
		src := s.play
		s.playMu.Unlock()
		return src
	}
	prev := s.last
	if s.play != nil {
		s.play.finish()
	}
	s.playMu.Unlock()
	if prev != nil {
		select {
		case <-prev.played:
		case <-s.ctx.Done():
		}
	}

	s.playMu.Lock()
	tt := s.turns[turnID]
	src := &speechSource{played: make(chan struct{}), counts: s.m}
	if ph != nil {
		src = newPhraseSource(ph, s.phraseTap(), s.m)
	}
	src.onFirst = func() {
		s.session().Emit(event.TypeReplyAudioStarted, event.ReplyAudio{TurnID: turnID, Latency: s.replyLatency(tt, time.Now())})
	}
	s.play, s.playTurn, s.last = src, turnID, src
	s.playMu.Unlock() // PlayPCM may end an older source, whose onDone takes playMu
	done := func(rtc.Playout) {
		close(src.played)
		s.playMu.Lock()
		if s.play == src {
			s.play, s.playTurn = nil, ""
		}
		s.playMu.Unlock()
		s.session().Emit(event.TypeReplyAudioStopped, event.ReplyAudio{TurnID: turnID})
		s.playMu.Lock()
		delete(s.turns, turnID)
		s.playMu.Unlock()
	}
	if ph != nil {
		s.conn.Sender().PlayOpus(src, done)
	} else {
		s.conn.Sender().PlayPCM(src, done)
	}
	return src
}
