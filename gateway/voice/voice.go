package voice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/jitter"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
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
	// session's owner.
	Owner   func(principal any) session.Owner
	Logger  *slog.Logger
	Metrics *Metrics
}

// ErrMissingDeps: a required collaborator is missing.
var ErrMissingDeps = errors.New("voice: listener, speaker, sessions and owner are required")

// Factory creates a voice session for each WebRTC connection.
type Factory struct {
	cfg  Config
	deps Deps
}

// NewFactory validates cfg and deps.
func NewFactory(cfg Config, deps Deps) (*Factory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("voice: config: %w", err)
	}
	if deps.Listener == nil || deps.Speaker == nil || deps.Sessions == nil || deps.Owner == nil {
		return nil, ErrMissingDeps
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Metrics == nil {
		deps.Metrics = NewMetrics(nil)
	}
	return &Factory{cfg: cfg, deps: deps}, nil
}

// New implements rtc.SessionFactory.
func (f *Factory) New(ctx context.Context, info rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
	dec, err := codec.NewDecoder(f.cfg.Codec)
	if err != nil {
		return nil, fmt.Errorf("voice: decoder: %w", err)
	}
	jb, err := jitter.New(f.cfg.Jitter, dec)
	if err != nil {
		return nil, fmt.Errorf("voice: jitter: %w", err)
	}
	v, err := vad.New(f.cfg.VAD)
	if err != nil {
		return nil, fmt.Errorf("voice: vad: %w", err)
	}
	det, err := turn.New(f.cfg.Turn)
	if err != nil {
		return nil, fmt.Errorf("voice: turn: %w", err)
	}
	var hello *event.Hello // nil: the default profile until the client's hello names one
	if info.Device != "" {
		hello = &event.Hello{Device: info.Device}
	}
	sess, stream, err := f.deps.Sessions.Open(f.deps.Owner(info.Principal), hello)
	if err != nil {
		if errors.Is(err, session.ErrBadHello) {
			return nil, &rtc.RejectError{Status: 400, Type: rtc.TypeInvalidRequest, Message: err.Error()}
		}
		return nil, fmt.Errorf("voice: open session: %w", err)
	}
	vctx, cancel := context.WithCancel(context.Background())
	s := &voiceSession{
		cfg: f.cfg, deps: f.deps, conn: c, sess: sess, stream: stream,
		log: f.deps.Logger.With("session", sess.ID()), m: f.deps.Metrics,
		ctx: vctx, cancel: cancel, origin: time.Now(),
		jb: jb, vad: v, det: det, echo: newEchoGuard(),
		speakCh: make(chan speakItem, f.cfg.SpeakQueue),
		turns:   map[string]*turnTiming{},
	}
	f.deps.Metrics.Sessions.Inc()
	if f.cfg.EchoGuard {
		c.Sender().SetTap(s.echo.reference)
	}
	s.wg.Add(3)
	go s.mediaLoop()
	go s.eventPump()
	go s.speaker()
	return s, nil
}

// voiceSession implements rtc.Session for one connection.
type voiceSession struct {
	cfg    Config
	deps   Deps
	conn   *rtc.Conn
	sess   *session.Session
	stream *session.Stream
	log    *slog.Logger
	m      *Metrics
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	origin time.Time

	inMu sync.Mutex // inMu guards jb: OnRTP pushes from the read loop, the media loop pulls
	jb   *jitter.Buffer

	// Owned by the media loop.
	vad        *vad.VAD
	det        *turn.Detector
	echo       *echoGuard
	prefix     prefixRing
	listen     *router.ListenSession
	feed       *feeder
	turnN      int
	turnID     string
	lastPart   string
	partAt     int64
	pausedAt   int64 // sample time playout was paused by barge-in; -1 when not paused
	lastPlay   int64 // sample time playout was last seen active
	bargeTurn  string
	listenDone sync.WaitGroup // final-transcript goroutines, joined on close

	speakCh chan speakItem

	playMu sync.Mutex // playMu guards play and turns
	play   *speechSource
	// playTurn is the turn id of play; last is the newest source handed to
	// the sender, playing or not.
	playTurn string
	last     *speechSource
	turns    map[string]*turnTiming
}

// turnTiming holds the wall times of one turn's latency segments.
type turnTiming struct {
	speechEnd  time.Time
	transcript time.Time
	firstText  bool
}

type speakItem struct {
	turnID string
	text   string
	last   bool // the reply is complete: finish the source after this
}

// OnRTP implements rtc.AudioSink.
func (s *voiceSession) OnRTP(p rtc.Packet) {
	arrival := int64(p.Arrival.Sub(s.origin) * 48000 / time.Second)
	s.inMu.Lock()
	err := s.jb.Push(p.SequenceNumber, p.Timestamp, p.Payload, arrival)
	s.inMu.Unlock()
	if err != nil {
		s.log.Debug("voice: packet dropped", "err", err)
	}
}

// OnEvent implements rtc.EventSink: client events from the data channel.
func (s *voiceSession) OnEvent(data []byte) {
	ev, err := event.Decode(data)
	if err != nil {
		s.sess.EmitError(event.ErrInvalidRequest, err.Error())
		return
	}
	_ = s.sess.Handle(s.ctx, ev) // errors are reported to the client by the session
}

// Closed implements rtc.Session: the connection is gone; stop and join
// everything, then end the conversation session.
func (s *voiceSession) Closed(reason error) {
	s.cancel()
	s.stream.Detach()
	s.wg.Wait()
	if s.feed != nil {
		s.feed.close()
		<-s.feed.done
	}
	s.listenDone.Wait()
	if s.listen != nil {
		_ = s.listen.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.deps.Sessions.End(ctx, s.sess); err != nil {
		s.log.Warn("voice: end session", "err", err)
	}
	s.m.Sessions.Dec()
	s.log.Debug("voice: closed", "reason", reason)
}

// echoTailSamples is how long after playout the echo guard stays on
// (speaker path and jitter buffer delay), in 16 kHz samples.
const echoTailSamples = 16000 / 2

// sampleMs converts 16 kHz sample time to milliseconds.
func sampleMs(t int64) int64 { return t / 16 }

// mediaLoop pulls one 20 ms frame per tick from the jitter buffer and runs
// VAD and the turn detector on it, on sample time.
func (s *voiceSession) mediaLoop() {
	defer s.wg.Done()
	t := time.NewTicker(rtc.FrameDuration)
	defer t.Stop()
	s.pausedAt = -1
	clock := time.Now()
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
		if due > maxCatchUp {
			due = maxCatchUp
			done = int64(time.Since(clock)/rtc.FrameDuration) - due
		}
		for ; due > 0; due-- {
			done++
			s.frame()
		}
	}
}

// maxCatchUp bounds the frames processed at once after a stall; older ones
// are skipped (the jitter buffer has dropped them already).
const maxCatchUp = 25

// frame processes one 20 ms frame.
func (s *voiceSession) frame() {
	var pcm [rtc.PCMFrame]int16
	{
		start := time.Now()
		s.inMu.Lock()
		_, err := s.jb.Pull(pcm[:])
		s.inMu.Unlock()
		if err != nil {
			s.log.Warn("voice: jitter pull", "err", err)
			return
		}
		now := s.det.Now()
		if s.conn.Sender().Active() {
			s.lastPlay = now
		}
		// Echo keeps arriving for a while after playout ends.
		speaking := s.lastPlay > 0 && now-s.lastPlay < echoTailSamples
		s.det.SetAssistantSpeaking(s.conn.Sender().Active())
		for half := 0; half < 2; half++ {
			f := pcm[half*vad.FrameSamples : (half+1)*vad.FrameSamples]
			p, err := s.vad.Process(f)
			if err != nil {
				continue
			}
			if speaking && s.cfg.EchoGuard && s.echo.isEcho(f) {
				p = 0
			}
			evs, err := s.det.Process(f, p)
			if err != nil {
				continue
			}
			for i := range evs {
				s.onTurnEvent(&evs[i])
			}
		}
		s.prefix.push(pcm[:])
		if s.listen != nil {
			s.feed.write(pcm[:])
			s.maybePartial()
		}
		s.checkBargeIn()
		s.m.Frame.Observe(time.Since(start).Seconds())
	}
}

func (s *voiceSession) onTurnEvent(ev *turn.Event) {
	switch ev.Type {
	case turn.SpeechStarted:
		s.turnN++
		s.turnID = fmt.Sprintf("v%d", s.turnN)
		s.sess.Emit(event.TypeSpeechStarted, event.Speech{TurnID: s.turnID, AudioMS: sampleMs(ev.AudioStart)})
		ls, err := s.deps.Listener.Listen(s.ctx, router.ListenRequest{Language: s.cfg.Language})
		if err != nil {
			s.log.Warn("voice: listen", "err", err)
			return
		}
		s.listen, s.feed = ls, newFeeder(ls)
		s.lastPart, s.partAt = "", ev.At
		// The recogniser gets the speech from its padded start.
		for _, f := range s.prefix.since(s.det.Now() - ev.AudioStart) {
			s.feed.write(f)
		}
	case turn.OverlapSpeech:
		if s.pausedAt < 0 && s.conn.Sender().Active() {
			s.conn.Sender().Pause()
			s.pausedAt = ev.At
			s.playMu.Lock()
			s.bargeTurn = s.playTurn
			s.playMu.Unlock()
		}
	case turn.SpeechStopped:
		now := time.Now()
		speechEnd := now.Add(-time.Duration(ev.At-ev.SpeechEnd) * time.Second / 16000)
		s.m.EndOfTurnDelay.Observe(now.Sub(speechEnd).Seconds())
		id := s.turnID
		s.sess.Emit(event.TypeSpeechStopped, event.Speech{TurnID: id, AudioMS: sampleMs(ev.SpeechEnd)})
		ls, fd := s.listen, s.feed
		s.listen, s.feed = nil, nil
		if ls == nil {
			return
		}
		fd.close()
		s.playMu.Lock()
		s.turns[id] = &turnTiming{speechEnd: speechEnd}
		s.playMu.Unlock()
		s.listenDone.Add(1)
		go s.finishTurn(id, ls, fd, now)
	}
}

// finishTurn waits for the final transcript off the media loop, then starts
// the session turn. A turn with no words starts nothing.
func (s *voiceSession) finishTurn(id string, ls *router.ListenSession, fd *feeder, stopped time.Time) {
	defer s.listenDone.Done()
	defer ls.Close()
	<-fd.done
	tr, err := ls.Final(s.ctx)
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Warn("voice: final transcript", "turn", id, "err", err)
			s.sess.EmitError(event.ErrEngineUnavailable, "VERA could not hear that turn; please say it again")
		}
		return
	}
	s.m.TranscriptionDelay.Observe(time.Since(stopped).Seconds())
	text := strings.TrimSpace(tr.Text)
	if text == "" {
		return
	}
	s.playMu.Lock()
	if tt := s.turns[id]; tt != nil {
		tt.transcript = time.Now()
	}
	bargeTurn := s.bargeTurn
	s.playMu.Unlock()
	if bargeTurn != "" {
		s.confirmBargeIn()
	}
	s.sess.SubmitTurn(id, text)
}

// maybePartial sends transcript.partial when the hypothesis changed, at
// most every PartialEveryMs; words during a barge-in confirm it.
func (s *voiceSession) maybePartial() {
	now := s.det.Now()
	if now-s.partAt < int64(s.cfg.PartialEveryMs)*16 {
		return
	}
	s.partAt = now
	p := strings.TrimSpace(s.listen.Partial())
	if p == "" || p == s.lastPart {
		return
	}
	s.lastPart = p
	s.sess.Emit(event.TypeTranscriptPartial, event.Transcript{TurnID: s.turnID, Text: p})
	if s.pausedAt >= 0 {
		s.confirmBargeIn()
	}
}

// checkBargeIn resumes paused playout when no words came in time.
func (s *voiceSession) checkBargeIn() {
	if s.pausedAt < 0 {
		return
	}
	if s.det.Now()-s.pausedAt >= int64(s.cfg.ResumeAfterMs)*16 && s.lastPart == "" {
		s.pausedAt = -1
		s.playMu.Lock()
		s.bargeTurn = ""
		s.playMu.Unlock()
		s.conn.Sender().Resume()
		s.m.BargeIns.WithLabelValues("resumed").Inc()
	}
}

// confirmBargeIn: the person said words over the reply. Playout stops, the
// reply is cancelled, and the history keeps only what was heard.
func (s *voiceSession) confirmBargeIn() {
	s.pausedAt = -1
	pos := s.conn.Sender().Stop()
	s.playMu.Lock()
	src, id := s.play, s.playTurn
	s.play, s.playTurn, s.bargeTurn = nil, "", ""
	s.playMu.Unlock()
	s.drainSpeak()
	s.m.BargeIns.WithLabelValues("interrupted").Inc()
	if src != nil {
		// The session cancels a reply still being generated, or truncates
		// the finished one in its history, to what was heard.
		s.sess.Interrupt(id, src.heard(int(pos.Frames)*rtc.PCMFrame), "barge_in")
	}
}

// drainSpeak drops sentences queued for synthesis.
func (s *voiceSession) drainSpeak() {
	for {
		select {
		case <-s.speakCh:
		default:
			return
		}
	}
}

// wireEvent is the part of a server event the pump looks at.
type wireEvent struct {
	Type   event.Type `json:"type"`
	TurnID string     `json:"turn_id"`
	Delta  string     `json:"delta"`
	Text   string     `json:"text"`
	Kind   string     `json:"kind"`
	// safety.card
	Resources []safety.Resource `json:"resources"`
}

// eventPump forwards the session's events to the data channel in order and
// turns reply text into speech. Card before text before audio: the session
// emits the card first, and audio starts from reply.delta.
func (s *voiceSession) eventPump() {
	defer s.wg.Done()
	defer close(s.speakCh)
	pending := map[string]string{}
	for {
		data, err := s.stream.Next(s.ctx)
		if err != nil {
			if s.ctx.Err() == nil {
				s.log.Info("voice: event stream ended", "err", err)
				go s.conn.Close(context.Background()) //nolint: the Conn joins its own goroutines
			}
			return
		}
		if err := s.conn.SendEvent(data); err != nil {
			s.log.Warn("voice: send event", "err", err)
		}
		var ev wireEvent
		if json.Unmarshal(data, &ev) != nil {
			continue
		}
		switch ev.Type {
		case event.TypeNotice:
			if ev.Kind == "ai_disclosure" {
				s.enqueue(speakItem{turnID: "notice", text: ev.Text, last: true})
			}
		case event.TypeSafetyCard:
			if s.sess.Profile().MustSpeakSafety() {
				s.enqueue(speakItem{turnID: ev.TurnID, text: spokenResources(ev.Resources)})
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
	s.playMu.Lock()
	defer s.playMu.Unlock()
	if tt := s.turns[turnID]; tt != nil && !tt.firstText && !tt.transcript.IsZero() {
		tt.firstText = true
		s.m.LLMTTFT.Observe(time.Since(tt.transcript).Seconds())
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
	case <-s.ctx.Done():
		return
	}
	for it := range s.speakCh {
		if s.ctx.Err() != nil {
			return
		}
		src := s.sourceFor(it.turnID)
		if it.text != "" {
			src.beginSentence(it.text)
			asked := time.Now()
			first := true
			_, err := s.deps.Speaker.Speak(s.ctx, router.SpeakRequest{Text: it.text, SampleRate: rtc.PCMRate, PCMOnly: true},
				func(c router.AudioChunk) error {
					if c.Codec != router.CodecPCM || c.SampleRate != rtc.PCMRate {
						return fmt.Errorf("voice: speak returned %s at %d Hz, want PCM at %d", c.Codec, c.SampleRate, rtc.PCMRate)
					}
					if first {
						first = false
						s.m.TTSTTFB.Observe(time.Since(asked).Seconds())
					}
					src.write(c.PCM)
					return nil
				})
			if err != nil && s.ctx.Err() == nil {
				s.log.Warn("voice: speak", "turn", it.turnID, "err", err)
			}
		}
		if it.last {
			src.finish()
			s.playMu.Lock()
			if s.play == src {
				s.play, s.playTurn = nil, ""
			}
			s.playMu.Unlock()
		}
	}
}

// sourceFor returns the playing source of turnID, or starts a new one
// once the previous one has played out: the gateway never talks over
// itself, and a newer Play would cut the older source short.
func (s *voiceSession) sourceFor(turnID string) *speechSource {
	s.playMu.Lock()
	if s.play != nil && s.playTurn == turnID {
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
	defer s.playMu.Unlock()
	tt := s.turns[turnID]
	src := &speechSource{played: make(chan struct{})}
	src.onFirst = func() {
		s.sess.Emit(event.TypeReplyAudioStarted, event.ReplyAudio{TurnID: turnID})
		if tt != nil && !tt.speechEnd.IsZero() {
			s.m.E2ELatency.Observe(time.Since(tt.speechEnd).Seconds())
		}
	}
	s.play, s.playTurn, s.last = src, turnID, src
	s.conn.Sender().PlayPCM(src, func(rtc.Playout) {
		close(src.played)
		s.sess.Emit(event.TypeReplyAudioStopped, event.ReplyAudio{TurnID: turnID})
		s.playMu.Lock()
		delete(s.turns, turnID)
		s.playMu.Unlock()
	})
	return src
}

// prefixRing keeps the last frames so the recogniser gets the prefix
// padding that came before the turn was detected.
type prefixRing struct {
	frames [32][rtc.PCMFrame]int16
	n      int // frames pushed so far
}

func (r *prefixRing) push(f []int16) {
	copy(r.frames[r.n%len(r.frames)][:], f)
	r.n++
}

// since returns the frames covering the last samples samples (before the
// current frame), oldest first, at most the ring's length.
func (r *prefixRing) since(samples int64) [][]int16 {
	k := int((samples + rtc.PCMFrame - 1) / rtc.PCMFrame)
	if k > r.n {
		k = r.n
	}
	if k > len(r.frames) {
		k = len(r.frames)
	}
	out := make([][]int16, 0, k)
	for i := r.n - k; i < r.n; i++ {
		out = append(out, r.frames[i%len(r.frames)][:])
	}
	return out
}
