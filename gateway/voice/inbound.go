package voice

import (
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
)

// inbound is the listening half of the media path for one connection:
// VAD per 10 ms, the echo guard while the gateway's voice may be leaking
// back, and the turn detector, all on sample time. The media loop owns it;
// the offline echo measurement and the benchmarks drive the same code.
type inbound struct {
	vad  *vad.VAD
	det  *turn.Detector
	echo *echoGuard // nil: no echo guard
	exit float32    // the turn detector's exit threshold: below it a frame is not speech

	lastPlay   int64 // sample time playout was last seen active; -1 never
	suppressed bool  // the previous 10 ms was speech judged to be our echo
	// echoRuns counts stretches of speech-like input the guard judged to be
	// the gateway's own voice.
	echoRuns int
}

func newInbound(v *vad.VAD, det *turn.Detector, exit float32, echo *echoGuard) *inbound {
	return &inbound{vad: v, det: det, echo: echo, exit: exit, lastPlay: -1}
}

// echoTailSamples is how long after playout the echo guard stays on
// (speaker path and jitter buffer delay), in 16 kHz samples.
const echoTailSamples = 16000 / 2

// analyse runs one 20 ms frame at 16 kHz. playing says whether the sender
// is playing the gateway's voice now; slot is the echo guard's 10 ms slot
// of the frame's first half (wall time live, sample time offline). emit
// sees each turn event; the event is valid only during the call.
func (in *inbound) analyse(pcm []int16, playing bool, slot int64, emit func(*turn.Event)) {
	now := in.det.Now()
	if playing {
		in.lastPlay = now
	}
	// Echo keeps arriving for a while after playout ends.
	guard := in.echo != nil && in.lastPlay >= 0 && now-in.lastPlay < echoTailSamples
	in.det.SetAssistantSpeaking(playing)
	for half := 0; half < len(pcm)/vad.FrameSamples; half++ {
		f := pcm[half*vad.FrameSamples : (half+1)*vad.FrameSamples]
		p, feat, err := in.vad.ProcessFeatures(f)
		if err != nil {
			continue
		}
		raw := feat.Raw
		if in.echo != nil {
			// The input envelope is recorded always, so the guard has its
			// whole window the moment playout starts.
			in.echo.record(slot+int64(half), f)
			echo := guard && in.echo.judge(slot+int64(half))
			if echo && p >= in.exit {
				if !in.suppressed {
					in.echoRuns++
				}
				in.suppressed = true
				p, raw = 0, 0
			} else if !echo {
				in.suppressed = false
			}
		}
		evs, err := in.det.ProcessRaw(f, p, raw)
		if err != nil {
			continue
		}
		for i := range evs {
			emit(&evs[i])
		}
	}
}
