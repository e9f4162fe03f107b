package voice

import (
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// eventPump forwards the session's events to the data channel in order and
// turns reply text into speech. Card before text before audio: the session
// emits the card first, and audio starts from reply.delta.
func (s *voiceSession) eventPump() {
	defer s.wg.Done()
	sp := &speechQueue{s: s, pending: map[string]string{}, ended: map[string]bool{}}
	s.streamMu.Lock()
	st := s.stream
	s.streamMu.Unlock()
	for {
		ev, err := st.NextEvent(s.ctx)
		if err != nil {
			select {
			case next := <-s.swapCh: // resumed: carry on with that conversation
				s.streamMu.Lock()
				s.stream, st = next, next
				s.streamMu.Unlock()
				clear(sp.pending)
				clear(sp.ended)
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
		if err := s.conn.SendEvent(ev.Data); err != nil {
			// After a hang-up the events still queued have nowhere to go:
			// that is how a healthy session ends, not a fault.
			level := slog.LevelWarn
			if errors.Is(err, rtc.ErrClosed) {
				level = slog.LevelDebug
			}
			s.log.Log(s.ctx, level, "voice: send event", "err", err)
		}
		s.rec.eventOut(ev.Data)
		ev.Dispatch(sp)
	}
}

// speechQueue is the event pump's session.Subscriber: it queues what the
// session's events say for the speaker, in wire order. Owned by the pump.
type speechQueue struct {
	s       *voiceSession
	pending map[string]string // per turn, reply text not yet a whole sentence
	// ended are the turns whose reply text is complete (reply.done or
	// reply.interrupted seen), bounded: cleared past maxEnded.
	ended map[string]bool
}

// maxEnded bounds speechQueue.ended; a late verdict concerns a recent turn.
const maxEnded = 64

// Notice speaks the AI disclosure's short spoken text and the busy answer
// (both from the phrase cache); the person may talk over either
// (disclosure.go).
func (sp *speechQueue) Notice(n event.Notice) {
	switch n.Kind {
	case noticeBusy:
		sp.s.enqueue(speakItem{turnID: n.TurnID, text: n.Text, last: true, phrase: true})
		return
	case event.NoticeAIDisclosure:
	default:
		return
	}
	text := n.Spoken
	if text == "" {
		text = n.Text
	}
	sp.s.enqueue(speakItem{turnID: noticeTurn, text: text, last: true, phrase: true})
}

// SafetyCard raises the session's listen priority at a raised level; the
// session says what to speak of a card (SpeakSafety).
func (sp *speechQueue) SafetyCard(c event.SafetyCard) { sp.s.raiseLevel(c.Level) }

// SpeakSafety speaks a card's resources as the session decided: a lead-in
// and one sentence per resource. On a device that must speak safety they
// are firm (barge-in does not cut them) and, while the card's turn is
// still replying, spoken in that turn right before its reply; otherwise
// they are a turn of their own, which the person can talk over (the card
// stays on every screen). A late crisis first cuts its turn's reply short.
// Other replies queue behind it for no longer than its own length.
func (sp *speechQueue) SpeakSafety(ss session.SpokenSafety) {
	s := sp.s
	if ss.Why == session.SpeakLate {
		s.cutForSafety(ss.TurnID, sp.ended[ss.TurnID])
	}
	turnID, own := "safety:"+ss.CardID, true
	if ss.Why == session.SpeakMustSpeak && !sp.ended[ss.TurnID] {
		turnID, own = ss.TurnID, false
	}
	for i, text := range ss.Sentences {
		s.enqueue(speakItem{turnID: turnID, text: text, last: own && i == len(ss.Sentences)-1, protected: ss.Firm})
	}
	s.factory.countSpoken(s.session().Owner().PartnerID, ss.Level, ss.Resources)
}

func (sp *speechQueue) end(turnID string) {
	if len(sp.ended) >= maxEnded {
		clear(sp.ended)
	}
	sp.ended[turnID] = true
}

// ReplyDelta speaks each whole sentence of the reply as it arrives.
func (sp *speechQueue) ReplyDelta(d event.ReplyDelta) {
	sp.s.firstText(d.TurnID)
	sentences, rest := splitSentences(sp.pending[d.TurnID] + d.Delta)
	sp.pending[d.TurnID] = rest
	for _, t := range sentences {
		sp.s.enqueue(speakItem{turnID: d.TurnID, text: t})
	}
}

// ReplyDone speaks the rest of the reply and finishes its source.
func (sp *speechQueue) ReplyDone(d event.ReplyDone) {
	sp.s.raiseLevel(d.Level)
	sp.end(d.TurnID)
	sp.s.firstText(d.TurnID)
	rest := strings.TrimSpace(sp.pending[d.TurnID])
	delete(sp.pending, d.TurnID)
	sp.s.enqueue(speakItem{turnID: d.TurnID, text: rest, last: true})
}

// ReplyInterrupted drops the reply's unfinished sentence and, unless a
// barge-in already stopped it, the rest of its speech: a superseded or
// cancelled reply is not spoken on after its reply.interrupted. A late
// crisis (reason safety) has already cut it (cutForSafety), and spoken
// resources may follow under the same turn.
func (sp *speechQueue) ReplyInterrupted(r event.ReplyInterrupted) {
	sp.end(r.TurnID)
	delete(sp.pending, r.TurnID)
	if r.Reason != "barge_in" && r.Reason != session.ReasonSafety {
		sp.s.stopTurn(r.TurnID)
	}
}

// stopTurn makes the speaker skip the turn's queued sentences and stops
// its playout if it is playing (reply.audio_stopped follows).
func (s *voiceSession) stopTurn(id string) {
	s.cancelTurn(id)
	if src := s.playingFor(id); src != nil {
		s.stopSource(src)
	}
}

// playingFor is the source playing out for turn id, or nil.
func (s *voiceSession) playingFor(id string) *speechSource {
	s.playMu.Lock()
	defer s.playMu.Unlock()
	if s.playTurn != id {
		return nil
	}
	return s.play
}

// stopSource stops the sender's playout of src, forgets src as the one
// playing unless a newer one took its place, ends it, and returns how far
// it got.
func (s *voiceSession) stopSource(src *speechSource) rtc.Playout {
	pos := s.conn.Sender().Stop()
	s.playMu.Lock()
	if s.play == src {
		s.play, s.playTurn = nil, ""
	}
	s.playMu.Unlock()
	src.finish()
	return pos
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
