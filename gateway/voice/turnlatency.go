package voice

import (
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/event"
)

// The contiguous segments of a spoken reply's latency, in order (the
// turn_segment_seconds label values and event.TurnLatency's fields).
const numSegments = 5

var segmentNames = [numSegments]string{"end_of_turn", "transcription", "llm_ttft", "tts_ttfb", "first_packet"}

// turnTiming holds the wall times of one turn's latency segments, from the
// true end of speech to the reply's first packet. speechEnd and stopped are
// set when the turn ends and never change; every later mark is set once,
// first writer wins, under mu — by the final-transcript goroutine, the
// event pump, the speaker and the sender. mu is taken alone, never while
// taking another lock (the sender holds its own while it reads the first
// frame).
type turnTiming struct {
	speechEnd time.Time // true end of speech, on the media clock
	stopped   time.Time // the turn detector ended the turn

	mu         sync.Mutex // guards the marks below
	transcript time.Time  // final transcript
	firstText  time.Time  // first reply text released to the speaker
	firstAudio time.Time  // first synthesised audio of the turn
}

func (t *turnTiming) mark(p *time.Time, at time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !p.IsZero() {
		return false
	}
	*p = at
	return true
}

func (t *turnTiming) markTranscript(at time.Time) { t.mark(&t.transcript, at) }
func (t *turnTiming) markFirstAudio(at time.Time) { t.mark(&t.firstAudio, at) }

// markFirstText records the first reply text; it reports whether this was
// the first and the transcript time it follows (zero when none).
func (t *turnTiming) markFirstText(at time.Time) (bool, time.Time) {
	first := t.mark(&t.firstText, at)
	t.mu.Lock()
	defer t.mu.Unlock()
	return first, t.transcript
}

// latency splits speechEnd → firstPacket into the segments. Each boundary is
// clamped to lie between the previous one and firstPacket (a stage not
// reached by then, or reached out of order, counts 0), and the boundaries
// are rounded to whole ms before they are differenced, so the segments sum
// to TotalMS exactly. secs are the same segments in seconds, unrounded.
func (t *turnTiming) latency(firstPacket time.Time) (lat event.TurnLatency, secs [numSegments]float64) {
	t.mu.Lock()
	marks := [numSegments + 1]time.Time{t.speechEnd, t.stopped, t.transcript, t.firstText, t.firstAudio, firstPacket}
	t.mu.Unlock()
	var off [numSegments + 1]time.Duration // since speechEnd
	total := firstPacket.Sub(t.speechEnd)
	for i := 1; i <= numSegments; i++ {
		d := off[i-1]
		if !marks[i].IsZero() {
			d = min(max(marks[i].Sub(t.speechEnd), off[i-1]), total)
		}
		if i == numSegments {
			d = max(total, off[i-1])
		}
		off[i] = d
	}
	ms := func(d time.Duration) int64 { return d.Round(time.Millisecond).Milliseconds() }
	var seg [numSegments]int64
	for i := range seg {
		seg[i] = ms(off[i+1]) - ms(off[i])
		secs[i] = (off[i+1] - off[i]).Seconds()
	}
	return event.TurnLatency{EndOfTurnMS: seg[0], TranscriptionMS: seg[1], LLMTTFTMS: seg[2], TTSTTFBMS: seg[3],
		FirstPacketMS: seg[4], TotalMS: ms(off[numSegments])}, secs
}

// timing is turnID's timing, nil when the turn has none (typed turns, the
// notice, generated replies).
func (s *voiceSession) timing(turnID string) *turnTiming {
	s.playMu.Lock()
	defer s.playMu.Unlock()
	return s.turns[turnID]
}

// replyLatency observes a reply's e2e latency and its segments when its
// first packet goes out, and returns them for reply.audio_started (nil for
// audio that answers no speech).
func (s *voiceSession) replyLatency(tt *turnTiming, at time.Time) *event.TurnLatency {
	if tt == nil || tt.speechEnd.IsZero() {
		return nil
	}
	s.m.E2ELatency.Observe(at.Sub(tt.speechEnd).Seconds())
	lat, secs := tt.latency(at)
	for i, v := range secs {
		s.m.segments[i].Observe(v)
	}
	return &lat
}
