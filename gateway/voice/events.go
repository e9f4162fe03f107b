package voice

import (
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/gateway/event"
)

// eventPump forwards the session's events to the data channel in order and
// turns reply text into speech. Card before text before audio: the session
// emits the card first, and audio starts from reply.delta.
func (s *voiceSession) eventPump() {
	defer s.wg.Done()
	sp := &speechQueue{s: s, pending: map[string]string{}}
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
			s.log.Warn("voice: send event", "err", err)
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
}

// Notice speaks the AI disclosure (protected, from the phrase cache) and
// the busy answer (from the phrase cache; the person may talk over it).
func (sp *speechQueue) Notice(n event.Notice) {
	switch n.Kind {
	case "ai_disclosure":
		sp.s.enqueue(speakItem{turnID: "notice", text: n.Text, last: true, protected: true, phrase: true})
	case noticeBusy:
		sp.s.enqueue(speakItem{turnID: n.TurnID, text: n.Text, last: true, phrase: true})
	}
}

// SafetyCard speaks the card's resources when the device must hear them.
func (sp *speechQueue) SafetyCard(c event.SafetyCard) {
	s := sp.s
	s.raiseLevel(c.Level)
	if s.session().Profile().MustSpeakSafety() {
		s.enqueue(speakItem{turnID: c.TurnID, text: spokenResources(c.Resources), protected: true})
		s.factory.countSpoken(s.session().Owner().PartnerID, c.Level, c.Resources)
	}
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
	sp.s.firstText(d.TurnID)
	rest := strings.TrimSpace(sp.pending[d.TurnID])
	delete(sp.pending, d.TurnID)
	sp.s.enqueue(speakItem{turnID: d.TurnID, text: rest, last: true})
}

// ReplyInterrupted drops the reply's unfinished sentence.
func (sp *speechQueue) ReplyInterrupted(r event.ReplyInterrupted) { delete(sp.pending, r.TurnID) }

func (s *voiceSession) firstText(turnID string) {
	s.playMu.Lock()
	defer s.playMu.Unlock()
	if tt := s.turns[turnID]; tt != nil && !tt.firstText && !tt.transcript.IsZero() {
		tt.firstText = true
		s.m.LLMTTFT.Observe(time.Since(tt.transcript).Seconds())
	}
}
