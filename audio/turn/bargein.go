package turn

import "github.com/veraneural/vera-gateway/audio/vad"

// Barge-in: user speech over the assistant's voice is either a backchannel
// ("mm-hm", "yeah", "right": the person is listening; the assistant's
// voice is ducked and goes on) or an interruption (the voice stops). The
// detector says which as early as it can: OverlapStarted at once (duck),
// then OverlapSpeech (interruption) after BargeInMs of speech that does not
// sound like a backchannel, as soon as the transcript has words that are
// not one, or after BackchannelMs of any speech; OverlapEnded when the
// speech stops first. A backchannel sounds soft: its level is softDb or
// more below the person's own speech away from the assistant's voice.
const (
	softDb = 8
	// overlapTalking: speech evidence this recent means the person is
	// still talking.
	overlapTalking = SampleRate * 3 / 100
	// overlapGone: this much silence ends the overlapping speech.
	overlapGone = SampleRate * 15 / 100
	// minUserFrames of speech away from playout before the person's level
	// is known.
	minUserFrames = 100
)

// overlap follows one stretch of user speech over the assistant's voice.
type overlap struct {
	start      int64 // where the overlapping speech began; -1 none
	lastSpeech int64 // end of its last speech frame
	sent       bool  // OverlapSpeech was emitted for it
	// turnOverlapped: some of the current turn was over the assistant's voice.
	turnOverlapped      bool
	levelSum            float32 // level of its speech frames (dB above the floor)
	levelN              int
	hasWords, backWords bool
	userLevel           float32 // the person's speech level away from playout
	userN               int
}

func (o *overlap) reset() {
	o.start, o.lastSpeech, o.sent = -1, -1, false
	o.levelSum, o.levelN = 0, 0
	o.hasWords, o.backWords = false, false
}

func (o *overlap) active() bool { return o.start >= 0 }

// level records a frame's level: the person's own, or the overlap's.
func (o *overlap) level(speech bool, f *vad.Features, assistant bool) {
	if !speech {
		return
	}
	lv := levelDb(f)
	if !assistant {
		slow(&o.userLevel, &o.userN, lv, slowWeight)
	} else if o.active() {
		o.levelSum += lv
		o.levelN++
	}
}

// setWords judges the turn's transcript: backchannel words or others.
func (o *overlap) setWords(text string, lx *lexicon) {
	if countWords(text) == 0 {
		return
	}
	o.hasWords, o.backWords = true, lx.isBackchannel(text)
}

func (o *overlap) soundsBackchannel() bool {
	if o.hasWords {
		return o.backWords
	}
	return o.userN >= minUserFrames && o.levelN >= 3 && o.levelSum/float32(o.levelN) < o.userLevel-softDb
}

// begin: possible speech started at start over the assistant's voice.
func (o *overlap) begin(ev []Event, start, end int64) []Event {
	o.reset()
	o.start, o.lastSpeech, o.turnOverlapped = start, end, true
	return append(ev, Event{Type: OverlapStarted, At: end, SpeechStart: start, AudioStart: start})
}

// blipEnded: the possible speech was too short to be a turn.
func (o *overlap) blipEnded(ev []Event, end int64) []Event {
	if !o.active() || o.sent {
		return ev
	}
	s := o.start
	o.reset()
	return append(ev, Event{Type: OverlapEnded, At: end, SpeechStart: s, AudioStart: s})
}

// frame judges one frame of a turn while the assistant speaks.
func (o *overlap) frame(ev []Event, d *Detector, start, end int64, speech bool) []Event {
	if !o.active() {
		if !speech {
			return ev
		}
		// Speech over the assistant's voice in a turn already under way
		// (the assistant started, or the person resumed after a backchannel).
		ev = o.begin(ev, start, end)
	}
	if o.sent {
		return ev
	}
	if speech {
		o.lastSpeech = end
	}
	if end-o.lastSpeech >= overlapGone {
		s := o.start
		o.reset()
		return append(ev, Event{Type: OverlapEnded, At: end, SpeechStart: s, AudioStart: s})
	}
	if d.st != speaking {
		return ev
	}
	talking := end-o.lastSpeech < overlapTalking
	age := end - o.start
	interrupt := (o.hasWords && !o.backWords) ||
		(talking && age >= d.backchannel) ||
		(talking && age >= d.bargeIn && !o.soundsBackchannel())
	if !interrupt {
		return ev
	}
	o.sent = true
	return append(ev, Event{Type: OverlapSpeech, At: end, AudioStart: d.audioStart, SpeechStart: o.start})
}
