package turn

import (
	"math"

	"github.com/veraneural/vera-gateway/audio"
)

// Barge-in: user speech over the assistant's voice is either a backchannel
// ("mm-hm", "yeah", "right": the person is listening; the assistant's
// voice is ducked and goes on) or an interruption (the voice stops). The
// detector says which as early as it can: OverlapStarted at once (duck),
// then OverlapSpeech (interruption) after BargeInMs of speech that does not
// sound like a backchannel, as soon as the transcript has words that are
// not one, or after BackchannelMs of any speech; OverlapEnded when the
// speech stops first.
//
// A backchannel sounds soft. The levels are the frames' power (dBFS), not
// the VAD's level (a share of its own floor-to-peak range, which VERA's
// echo moves): the overlap's loudest frame, with the echo taken out, lies
// softDb or more below the person's loud level (the 90th percentile of
// their speech frames away from the assistant's voice). The echo taken
// out is the input's level while the assistant spoke and nobody talked
// over it (a peak that decays echoDecayDb per frame), as it was just
// before the overlap began: the echo guard keeps echo from the detector,
// but during an overlap the input is the person plus the echo.
const (
	softDb = 4
	// quietDb: during an overlap, a speech frame whose level (the echo taken
	// out) is this far below the person's loud level may be the echo the
	// guard let through (it cannot follow the echo while someone talks over
	// it): it does not count toward backchannel_ms.
	quietDb = 20
	// duckSettle: frames after OverlapStarted by which the ducked voice's
	// echo has come back (the speaker path's delay and the jitter buffer).
	duckSettle = 20
	// wordsAfter: words that are no backchannel interrupt soft speech that
	// has gone on this long.
	wordsAfter = SampleRate * 6 / 10
	// overlapTalking: speech evidence this recent means the person is
	// still talking.
	overlapTalking = SampleRate * 3 / 100
	// overlapGone: this much silence ends the overlapping speech.
	overlapGone = SampleRate * 15 / 100
	// minUserFrames of speech away from playout before the person's level
	// is known.
	minUserFrames = 100
	// echoDecayDb per 10 ms frame: the echo level follows the syllables'
	// peaks over about half a second.
	echoDecayDb = 0.05
	// echoHold: the echo level used is the one this many frames before
	// the overlap's first frame (the smoothed probability starts a turn a
	// few frames after the speech's own start).
	echoHold = 8
	// floorDb: no level below this.
	floorDb = -100
	// quantile tracking of the person's loud level: the share of frames
	// above it, and the step (dB) once it has settled.
	loudShare = 0.1
	loudStep  = 0.5
)

// DuckDb is how much the voice session ducks the assistant's voice from
// OverlapStarted until OverlapEnded (gateway/voice): after duckSettle the
// detector expects the echo that much quieter. Where the voice is not
// ducked (firm spoken safety resources, a pre-encoded phrase) it expects
// too little echo, and hears the person louder: an interruption sooner,
// never a missed one.
const DuckDb = 12

// overlap follows one stretch of user speech over the assistant's voice.
type overlap struct {
	start      int64 // where the overlapping speech began; -1 none
	lastSpeech int64 // end of its last speech frame
	lastLoud   int64 // end of its last audible speech frame
	sent       bool  // OverlapSpeech was emitted for it
	// turnOverlapped: some of the current turn was over the assistant's voice.
	turnOverlapped bool
	// peak: the overlap's loudest speech frame (dBFS), the echo taken out;
	// levelN counts its speech frames.
	peak   float32
	levelN int
	frames int // 10 ms frames since it began
	// audible: the current frame, if speech, is loud enough to be the
	// person (quietDb); true without the levels.
	audible             bool
	hasWords, backWords bool
	// echo: the input's decaying peak level (dBFS) while the assistant
	// speaks and nobody talks over it; echoRing its last echoHold values;
	// echoRef the one the current overlap takes out.
	echo     float32
	echoRing [echoHold]float32
	echoPos  int
	echoRef  float32
	// userLoud: the person's loud level (dBFS) away from playout, over
	// userN speech frames.
	userLoud float32
	userN    int
}

func (o *overlap) reset() {
	o.start, o.lastSpeech, o.lastLoud, o.sent = -1, -1, -1, false
	o.peak, o.levelN, o.frames = floorDb, 0, 0
	o.hasWords, o.backWords = false, false
}

// resetEcho forgets the echo level (the assistant started or stopped).
func (o *overlap) resetEcho() {
	o.echo, o.echoRef = floorDb, floorDb
	for i := range o.echoRing {
		o.echoRing[i] = floorDb
	}
}

func (o *overlap) active() bool { return o.start >= 0 }

// level records a frame's level: the person's own, the echo's, or the
// overlap's. It costs one power sum where it reads the level, nothing in
// silence away from playout.
func (o *overlap) level(frame []int16, speech, assistant bool) {
	switch {
	case !assistant && speech:
		o.userFrame(audio.PowerDBFS(frame))
	case assistant && !o.active():
		pw := audio.PowerDBFS(frame)
		o.echo = max(o.echo-echoDecayDb, pw)
		o.echoRing[o.echoPos] = o.echo
		o.echoPos = (o.echoPos + 1) % echoHold
	case assistant:
		o.frames++
		if !speech {
			return
		}
		ref := o.echoRef
		if o.frames > duckSettle {
			ref -= DuckDb // the session ducked the voice at OverlapStarted
		}
		u := withoutEcho(audio.PowerDBFS(frame), ref)
		o.peak = max(o.peak, u)
		o.levelN++
		o.audible = o.userN < minUserFrames || u >= o.userLoud-quietDb
	}
}

// userFrame tracks the 90th percentile of the person's speech frames.
func (o *overlap) userFrame(pw float32) {
	o.userN++
	if o.userN == 1 {
		o.userLoud = pw
		return
	}
	step := float32(loudStep)
	if o.userN < minUserFrames {
		step = 4 * loudStep // settle fast on the first second of speech
	}
	if pw > o.userLoud {
		o.userLoud += step * (1 - loudShare)
	} else {
		o.userLoud -= step * loudShare
	}
}

// withoutEcho is the level of the input pw (dBFS) less an echo at echo
// dBFS, in power; an input not clearly above the echo counts as 10 dB
// under itself (the echo is most of it).
func withoutEcho(pw, echo float32) float32 {
	if echo <= floorDb {
		return pw
	}
	d := pw - echo
	if d <= 0.5 {
		return pw - 10
	}
	return pw + float32(10*math.Log10(1-math.Pow(10, -float64(d)/10)))
}

// setWords judges the turn's transcript: backchannel words or others.
func (o *overlap) setWords(text string, lx *lexicon) {
	if countWords(text) == 0 {
		return
	}
	o.hasWords, o.backWords = true, lx.isBackchannel(text)
}

// soundsBackchannel: the words so far are a backchannel, or the overlap is
// soft against the person's own loud level (unknown before a second of
// their speech away from playout: then it does not). Words that are not a
// backchannel do not make soft speech loud: the recogniser hears VERA's
// echo too.
func (o *overlap) soundsBackchannel() bool {
	if o.hasWords && o.backWords {
		return true
	}
	return o.userN >= minUserFrames && o.levelN >= 3 && o.peak < o.userLoud-softDb
}

// begin: possible speech started at start over the assistant's voice.
func (o *overlap) begin(ev []Event, start, end int64) []Event {
	o.reset()
	o.start, o.lastSpeech, o.lastLoud, o.turnOverlapped = start, end, end, true
	o.echoRef = o.echoRing[o.echoPos] // the oldest held: before the speech's own onset
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
		if o.audible {
			o.lastLoud = end
		}
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
	loud := end-o.lastLoud < overlapTalking
	age := end - o.start
	// Words that are no backchannel interrupt speech that sounds like one
	// only once it has gone on, audibly, for wordsAfter (most backchannels
	// are over by then): the recogniser also hears VERA's echo (and the
	// prefix before the speech), and makes words of a soft "mm-hm" under it.
	interrupt := (loud && age >= max(wordsAfter, d.bargeIn) && o.hasWords && !o.backWords) ||
		(loud && age >= d.backchannel) ||
		(talking && age >= d.bargeIn && !o.soundsBackchannel())
	if !interrupt {
		return ev
	}
	o.sent = true
	return append(ev, Event{Type: OverlapSpeech, At: end, AudioStart: d.audioStart, SpeechStart: o.start})
}

// OverlapLevels reports the barge-in judgement's levels (dBFS) as of now:
// the current overlap's loudest frame with the echo taken out, the echo
// level it takes out, and the person's loud level away from playout with
// how many of their speech frames it rests on (for "vera-eval eot-barge -v").
func (d *Detector) OverlapLevels() (peak, echo, user float32, userFrames int) {
	return d.ov.peak, d.ov.echoRef, d.ov.userLoud, d.ov.userN
}
