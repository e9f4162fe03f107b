package voice

import (
	"context"
	"fmt"
	"time"

	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

type speakItem struct {
	turnID string
	text   string
	last   bool // the reply is complete: finish the source after this
	// protected: firm spoken safety resources (barge-in
	// does not cut them, a cancelled turn does not drop them; they are not
	// reply text).
	protected bool
	// phrase: a fixed text spoken alone (the AI disclosure), played from
	// the factory's phrase cache when it has one. Not reply text, and not
	// protected: the person may talk over it (disclosure.go).
	phrase bool
	seq    uint64 // set by enqueue, in queue order (disclosure.go)
}

func (s *voiceSession) enqueue(it speakItem) {
	it.seq = s.disc.queued.Add(1)
	select {
	case s.speakCh <- it:
	case <-s.ctx.Done():
	}
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
		if skip || s.disclosureDropped(it) {
			continue
		}
		ctx, stop, yield := s.synthesising(it)
		if yield { // a busy answer took the floor (floor.go)
			s.yieldTurn(it.turnID, "")
			continue
		}
		s.speak(ctx, it)
		stop()
	}
}

// speak plays it: from the phrase cache, or synthesised into its turn's
// source. ctx ends when a busy answer takes the floor (floor.go).
func (s *voiceSession) speak(ctx context.Context, it speakItem) {
	if it.phrase && it.last && s.playPhrase(it) {
		return
	}
	src := s.sourceFor(it.turnID, nil, false)
	if it.text != "" {
		if it.phrase {
			src.beginNotice(it.text)
		} else {
			src.beginSentence(it.text, it.protected)
		}
		asked := time.Now()
		first := true
		tt := s.timing(it.turnID)
		_, err := s.deps.Speaker.Speak(ctx, router.SpeakRequest{Text: it.text, SampleRate: rtc.PCMRate, PCMOnly: true},
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
		if err != nil && ctx.Err() == nil {
			s.log.Warn("voice: speak", "turn", it.turnID, "err", err)
		}
	}
	if it.last {
		// The source stays current until it has played out (a barge-in
		// may still pause it); the sender's onDone releases it.
		src.finish()
	}
}

// sourceFor returns the playing source of turnID, or starts a new one
// once the previous one has played out: the gateway never talks over
// itself, and a newer Play would cut the older source short.
//
// With ph set the new source plays the phrase's pre-encoded frames, protected
// from barge-in for their whole length when protected is set.
func (s *voiceSession) sourceFor(turnID string, ph *phrase, protected bool) *speechSource {
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
		src.marks[0].protected = protected
	}
	src.onFirst = func() {
		s.session().Emit(event.TypeReplyAudioStarted, event.ReplyAudio{TurnID: turnID, Latency: s.replyLatency(tt, time.Now())})
	}
	s.play, s.playTurn, s.last = src, turnID, src
	s.playMu.Unlock() // PlayPCM may end an older source, whose onDone takes playMu
	done := func(p rtc.Playout) {
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
		s.afterPlayout(turnID, p)
	}
	if ph != nil {
		s.conn.Sender().PlayOpus(src, done)
	} else {
		s.conn.Sender().PlayPCM(src, done)
	}
	return src
}
