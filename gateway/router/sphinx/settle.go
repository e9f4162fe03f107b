//go:build !noembedded

package sphinx

import "math"

// A transcription decoder's work between the end of a turn and its
// transcript is the final passes over the whole utterance (ps_end_utt's
// -fwdflat and the final hypothesis' -bestpath: 300 ms of CPU for an
// average turn, BENCHMARKS.md "first reply"). The turn detector only ends a
// turn after voice.turn.silence_duration_ms of silence, so a decoder that
// has heard Config.SettleMs of quiet after speech runs those passes then,
// while the detector still waits: the utterance "settles". When the turn
// then ends with nothing but quiet fed since, End returns the settled
// transcript at once. When speech comes again (a pause within the turn),
// the utterance is started over and the whole of its audio so far is
// decoded again, so the transcript is the one an unsettled decoder would
// give: settling never changes what is heard, only when. It is tried once
// per utterance, which bounds the cost of a pause taken for the end: one
// more decoding of the turn so far.

// Quiet is judged on each fed chunk's RMS against the utterance's loudest
// chunk: speech is within speechSpan of it, or above quietFloor whatever
// the level; settling waits for speech at least speechMin loud first.
const (
	speechSpan = 0.05  // −26 dB below the loudest chunk so far
	quietFloor = 60.0  // ≈ −55 dBFS: room tone of a quiet microphone
	speechMin  = 300.0 // ≈ −41 dBFS: the utterance has had speech
)

// settling is a transcription decoder's early end of its utterance.
type settling struct {
	after   int     // samples of quiet after which to settle; 0: never
	utt     []int16 // the utterance's audio so far, for a restart
	level   float64 // loudest chunk's RMS so far
	quiet   int     // trailing quiet samples
	tried   bool    // settled once this utterance (a restart does not again)
	settled bool    // ps_end_utt has run; final is the transcript so far
	final   string
}

func (s *settling) reset() {
	s.utt, s.level, s.quiet, s.tried, s.settled, s.final = s.utt[:0], 0, 0, false, false, ""
}

func rms(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum float64
	for _, v := range pcm {
		x := float64(v)
		sum += x * x
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// settleProcess is Process for a settling decoder: it keeps the audio,
// tracks the trailing quiet, settles the utterance after enough of it, and
// after settling restarts it when speech comes again.
func (d *Decoder) settleProcess(pcm []int16) error {
	st := &d.st
	st.utt = append(st.utt, pcm...)
	r := rms(pcm)
	loud := r >= quietFloor && r >= st.level*speechSpan
	st.level = max(st.level, r)
	if st.settled {
		if !loud {
			return nil // more quiet: the settled transcript stands
		}
		return d.unsettle()
	}
	if err := d.process(pcm); err != nil {
		return err
	}
	if loud {
		st.quiet = 0
	} else {
		st.quiet += len(pcm)
	}
	if st.tried || st.level < speechMin || st.quiet < st.after {
		return nil
	}
	st.tried = true
	if d.run(opEnd); d.rc < 0 {
		return nil // End will try again and report it
	}
	d.run(opHypothesis)
	st.settled, st.final = true, d.hyp
	return nil
}

// unsettle starts the settled utterance over with everything heard so far.
func (d *Decoder) unsettle() error {
	st := &d.st
	st.settled, st.final, st.quiet = false, "", 0
	if err := d.startUtt(); err != nil {
		d.inUtt = false
		return err
	}
	for i := 0; i < len(st.utt); i += 320 {
		if err := d.process(st.utt[i:min(i+320, len(st.utt))]); err != nil {
			return err
		}
	}
	return nil
}
