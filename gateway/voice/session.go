package voice

import (
	"context"
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
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
)

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
	raised   atomic.Bool          // the session's safety level was raised: its turns listen first
	talk     *talker              // the session's talk, for admission (admit.go)
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
	ducked     bool    // the reply is ducked under speech over it (bargein.go)
	feed       *feeder // the turn in progress
	turnN      int
	turnID     string
	lastPart   string
	partAt     int64
	askedPause bool           // the pause in progress has asked for a hypothesis (askAtPause)
	askedSeen  int64          // the feeder's askedFrames as of the last poll
	feedBase   int64          // sample time of the first audio the turn's recogniser was given
	listenDone sync.WaitGroup // final-transcript goroutines, joined on close

	// bargeMu guards the barge-in state: the media loop pauses and resumes,
	// the media loop or a final transcript confirms.
	bargeMu   sync.Mutex
	pausedAt  int64  // sample time playout was paused by barge-in; -1 when not paused
	bargeTurn string // turn id of the paused reply
	pausedBy  string // the person's turn whose speech paused it
	wordless  bool   // pausedBy ended without words (bargein.go, turnWithoutWords)

	speakCh chan speakItem
	// patience: the client's hello.patience, for the media loop (patience.go).
	patience patienceHint
	// disclosureOwed: the spoken AI disclosure was cut short on a device
	// that does not show it; it is spoken again at the next pause.
	disclosureOwed atomic.Bool
	disc           disclosureQueue // a turn with words overtakes the disclosure

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
	// floorTo: speak items numbered up to this yield to a busy answer;
	// synth is the item being synthesised (floor.go).
	floorTo uint64
	synth   synthItem
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
		if h, ok := ev.(*event.Hello); ok {
			s.patience.hello(h)
			if h.ResumeToken != "" {
				s.resume(h)
				return
			}
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
	s.factory.load.leave(s.talk)
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
	s.patience.apply(s.in)
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
		s.feed = newFeeder(s.ctx, s.deps.Listener, router.ListenRequest{Language: s.cfg.Language}, s.listenOptions())
		s.lastPart, s.partAt, s.askedPause, s.askedSeen = "", ev.At, false, 0
		// The recogniser gets the speech from its padded start.
		pre := s.in.Prefix(s.in.Now() - ev.AudioStart)
		for _, f := range pre {
			s.feed.write(f)
		}
		// The turn detector knows a recogniser is listening, and how far
		// it has heard (see heard).
		s.feedBase = s.in.Now() - int64(len(pre)*audio.Frame20)
		s.in.SetTranscriptHeard("", s.feedBase)
	case turn.OverlapStarted:
		s.logOverlap("voice: overlap started", ev)
		s.duckReply()
	case turn.OverlapEnded:
		s.logOverlap("voice: overlap ended (backchannel)", ev)
		s.unduckReply(true)
	case turn.OverlapSpeech:
		s.logOverlap("voice: speech over playout", ev)
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
		stop := s.dropOnHangUp(fd)
		s.listenDone.Add(1)
		go func() {
			defer stop()
			s.finishTurn(id, fd, now, speechEnd)
		}()
	}
}

// dropOnHangUp aborts an ended turn's feeder when the session closes, as
// Closed aborts the open turn's: on a busy machine the recogniser can be
// seconds of audio behind, and the hang-up waits for finishTurn. stop
// unregisters it once the turn is through.
func (s *voiceSession) dropOnHangUp(fd *feeder) (stop func() bool) {
	return context.AfterFunc(s.ctx, fd.abort)
}

// finishTurn waits for the final transcript off the media loop, then starts
// the session turn. A turn with no words starts nothing. A turn whose final
// is not ready voice.listen_wait_ms after its true end of speech (speechEnd)
// is answered busy then (finalLate), unless its session's safety level is
// raised: those turns go first to the recogniser and wait for their words.
func (s *voiceSession) finishTurn(id string, fd *feeder, stopped, speechEnd time.Time) {
	defer s.listenDone.Done()
	fin := make(chan finalResult, 1)
	go func() { fin <- s.awaitFinal(fd) }() // joined below on every path
	var r finalResult
	select {
	case r = <-fin:
	default:
		wait := s.cfg.finalWaitAfterStop(stopped.Sub(speechEnd))
		if s.raised.Load() {
			r = <-fin
			break
		}
		t, late := s.factory.clock.NewTimer(wait)
		select {
		case r = <-fin:
			t.Stop()
		case <-late:
			if s.ctx.Err() != nil { // hung up: nobody to tell
				<-fin
				return
			}
			s.finalLate(id, fd, fin)
			return
		}
	}
	if errors.Is(r.err, errListenBusy) {
		s.answerBusy(id)
		return
	}
	if r.err != nil {
		if s.ctx.Err() == nil {
			s.log.Warn("voice: final transcript", "turn", id, "err", r.err)
			s.session().EmitError(event.ErrEngineUnavailable, "VERA could not hear that turn; please say it again")
			s.nothingHeard(id, event.NothingHeardNotTranscribed)
		}
		return
	}
	s.m.TranscriptionDelay.Observe(time.Since(stopped).Seconds())
	text := strings.TrimSpace(r.tr.Text)
	spotted := s.agreeingSpots(text, r.tr.Spotted)
	if text == "" && len(spotted) == 0 {
		s.nothingHeard(id, event.NothingHeardNoWords)
		return
	}
	s.submitTurn(id, text, spotted)
}

// finalResult is a turn's final transcript, or why there is none
// (errListenBusy: no recogniser was free in time).
type finalResult struct {
	tr  router.Transcript
	err error
}

// awaitFinal waits for the feeder to hand the recogniser every frame, then
// for its final transcript, and closes it.
func (s *voiceSession) awaitFinal(fd *feeder) finalResult {
	ls, err := fd.result()
	if err != nil {
		return finalResult{err: err}
	}
	tr, err := ls.Final(s.ctx)
	_ = ls.Close()
	s.recogniserClosed(fd)
	return finalResult{tr: tr, err: err}
}

// submitTurn gives the session a transcribed turn.
func (s *voiceSession) submitTurn(id, text string, spotted []string) {
	if tt := s.timing(id); tt != nil {
		tt.markTranscript(time.Now())
	}
	// Words over paused playout confirm the barge-in before the new turn
	// starts, so the history holds only what was heard of the old reply.
	s.confirmBargeIn()
	s.disclosureYields()
	s.session().SubmitVoiceTurn(id, text, spotted)
}

// finalLate answers turn id busy at once: its final transcript was not
// ready voice.listen_wait_ms after the end of speech (a recogniser that got
// the turn but decodes slowly on a loaded machine; or none yet, which the
// feeder reports as busy at about the same time). The person is told as
// promptly as when no recogniser was free, rather than answered seconds
// late or not at all. The recogniser still finishes the turn (fin), so that
// its decoder is released through the usual path; the late transcript is
// dropped, as for any turn answered busy (docs/events.md: no transcript, no
// reply) — except when it carries crisis phrases the transcript agrees with:
// the session then gets it like any other turn, so the safety path judges
// what was said and its card and resources are given (BRIEF §5).
func (s *voiceSession) finalLate(id string, fd *feeder, fin <-chan finalResult) {
	if fd.ls.Load() != nil {
		s.m.FinalLate.Inc()
		s.tellBusy(id, "voice: final transcript not ready in time; turn answered busy")
	} else {
		s.answerBusy(id) // still waiting for a recogniser: the feeder's own case
	}
	r := <-fin
	if r.err != nil {
		return
	}
	text := strings.TrimSpace(r.tr.Text)
	if spotted := s.agreeingSpots(text, r.tr.Spotted); len(spotted) > 0 && s.ctx.Err() == nil {
		s.log.Info("voice: a turn answered busy carried crisis phrases; given to the session", "turn", id, "spotted", len(spotted))
		s.submitTurn(id, text, spotted)
	}
}

// nothingHeard ends a turn that gets no reply: the client is told
// (input.nothing_heard, the turn's last event) and the session restarts an
// offer's answer window.
func (s *voiceSession) nothingHeard(id, reason string) {
	s.turnWithoutWords(id)
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
	every := int64(s.cfg.PartialEveryMs) * 16
	if s.in.Turn().PauseWaitMs() > 0 {
		every = min(every, pausePollMs*16) // the end-of-turn decision waits on these words
	}
	s.askAtPause()
	_, asked := s.feed.partial()
	if now-s.partAt < every && asked == s.askedSeen {
		return
	}
	s.partAt = now
	heard := s.heard()
	text, _ := s.feed.partial()
	p := strings.TrimSpace(text)
	// The turn detector hears every poll, changed or not: a transcript
	// that still ends on "and" well after the speech stopped says hold
	// (the adaptive policy, and barge-in's backchannel or interruption).
	s.in.SetTranscriptHeard(p, heard)
	if p == "" || p == s.lastPart {
		return
	}
	s.lastPart = p
	s.session().Emit(event.TypeTranscriptPartial, event.Transcript{TurnID: s.turnID, Text: p})
	if !s.backchannel(p) {
		s.confirmBargeIn()
	}
}

// pausePollMs is how often the recogniser is polled for the turn
// detector while it weighs a pause.
const pausePollMs = 100

// recogniserCadence: the embedded recogniser (gateway/router's sphinx
// stream) takes a new hypothesis every 200 ms of the audio it is given.
const recogniserCadence = 16000 / 5

// heard is the sample time up to which the turn's recogniser's partial
// has heard: the audio given to it (the frame in flight not counted), down
// to its last hypothesis.
func (s *voiceSession) heard() int64 {
	h, asked := s.heardTo()
	s.askedSeen = asked
	return h
}

// heardTo is heard without the poll's bookkeeping (askedSeen), and the
// feeder's asked frames it read.
func (s *voiceSession) heardTo() (heard, asked int64) {
	_, asked = s.feed.partial() // before written: the partial read after it has heard at least this
	given := max(s.feed.written.Load()-1, 0) * audio.Frame20
	return s.feedBase + max(given/recogniserCadence*recogniserCadence, asked*audio.Frame20), asked
}

// askAtPause asks the recogniser for a hypothesis once per pause, when
// the pause has lasted turn.WordsSettleSamples: the end-of-turn decision
// then has the words before the pause without waiting for the next
// periodic partial (up to 200 ms of audio later).
func (s *voiceSession) askAtPause() {
	sil := s.in.Turn().PauseSilence()
	switch {
	case sil == 0:
		s.askedPause = false
	case !s.askedPause && sil >= turn.WordsSettleSamples:
		s.askedPause = true
		s.feed.askPartial()
	}
}
