package pipeline

import (
	"sync"
	"sync/atomic"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/jitter"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
)

// echoTailSamples is how long after playout the echo guard stays on
// (speaker path and jitter buffer delay).
const echoTailSamples = audio.SampleRate / 2

// Inbound is one stream's listening path (see the package doc for the
// stages, the clock and who may call what).
type Inbound struct {
	// mu guards jb and dec: Push runs on the network side, Pull on the
	// media clock.
	mu  sync.Mutex
	jb  *jitter.Buffer
	dec *codec.Decoder // the decode stage, driven by the jitter buffer (decode, FEC or PLC)

	// Owned by the media loop.
	pcm        [audio.Frame20]int16
	vad        *vad.VAD
	echo       *echoGuard // nil: no echo guard
	det        *turn.Detector
	prefix     prefixRing
	exit       float32 // the turn detector's exit threshold: below it a frame is not speech
	silenceMs  int     // the turn detector's silence duration (EndOfStream)
	lastPlay   int64   // detector time playout was last seen active; -1 never
	suppressed bool    // the previous 10 ms was speech judged to be our echo

	echoRuns atomic.Int64
}

// New builds every stage of cfg.
func New(cfg Config) (*Inbound, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dec, err := codec.NewDecoder(cfg.Codec)
	if err != nil {
		return nil, err
	}
	jb, err := jitter.New(cfg.Jitter, dec)
	if err != nil {
		return nil, err
	}
	v, err := vad.New(cfg.VAD)
	if err != nil {
		return nil, err
	}
	det, err := turn.New(cfg.Turn)
	if err != nil {
		return nil, err
	}
	in := &Inbound{jb: jb, dec: dec, vad: v, det: det, exit: cfg.Turn.ExitThreshold,
		silenceMs: cfg.Turn.SilenceDurationMs, lastPlay: -1}
	if cfg.EchoGuard {
		in.echo = &echoGuard{}
	}
	return in, nil
}

// Push offers one RTP packet's Opus payload to the jitter buffer. arrival
// is its receive time in ticks of audio.OpusRate on the stream's origin
// (audio.OpusTicks of the time since the stream started); it feeds the
// jitter estimate. The payload is copied. Late and duplicate packets are
// dropped silently (counted in Stats); a malformed payload is an error
// wrapping jitter.ErrBadPacket.
func (in *Inbound) Push(seq uint16, ts uint32, payload []byte, arrival int64) error {
	in.mu.Lock()
	err := in.jb.Push(seq, ts, payload, arrival)
	in.mu.Unlock()
	return err
}

// Pull takes the next 20 ms from the jitter buffer, decoded at
// audio.SampleRate: the packet due, rebuilt from the next one's FEC,
// concealed, or silence (the kind says which). Call it once per 20 ms of
// the media clock. The frame is valid until the next Pull.
func (in *Inbound) Pull() ([]int16, jitter.FrameKind, error) {
	in.mu.Lock()
	kind, err := in.jb.Pull(in.pcm[:])
	in.mu.Unlock()
	if err != nil {
		return nil, kind, err
	}
	return in.pcm[:], kind, nil
}

// Analyse runs pcm (whole 10 ms frames at audio.SampleRate; a Pull's frame
// or a file's) through the VAD, the echo guard and the turn detector, and
// keeps its whole 20 ms frames in the prefix ring. at is pcm's first sample
// on the stream's media clock (the echo guard's time; see Reference).
// playing says whether the gateway's voice is playing out now. emit sees
// each turn event, valid only during the call.
func (in *Inbound) Analyse(pcm []int16, at int64, playing bool, emit func(*turn.Event)) {
	now := in.det.Now()
	if playing {
		in.lastPlay = now
	}
	// Echo keeps arriving for a while after playout ends.
	guard := in.echo != nil && in.lastPlay >= 0 && now-in.lastPlay < echoTailSamples
	in.det.SetAssistantSpeaking(playing)
	for k := 0; k < len(pcm)/vad.FrameSamples; k++ {
		f := pcm[k*vad.FrameSamples : (k+1)*vad.FrameSamples]
		fAt := at + int64(k*vad.FrameSamples)
		p, feat, err := in.vad.ProcessFeatures(f)
		if err != nil {
			continue
		}
		raw := feat.Raw
		if in.echo != nil {
			// The input envelope is recorded always, so the guard has its
			// whole window the moment playout starts.
			in.echo.record(fAt, f)
			echo := guard && in.echo.judge(fAt)
			if echo && p >= in.exit {
				if !in.suppressed {
					in.echoRuns.Add(1)
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
	for k := 0; k+audio.Frame20 <= len(pcm); k += audio.Frame20 {
		in.prefix.push(pcm[k : k+audio.Frame20])
	}
}

// Reference feeds the echo guard a frame the gateway played (whole 10 ms
// frames at audio.SampleRate) whose last 10 ms went out at sample time at on
// the same media clock as Analyse's. Safe from another goroutine (the
// sender's tap); a no-op without the echo guard.
func (in *Inbound) Reference(at int64, pcm []int16) {
	if in.echo != nil {
		in.echo.addRef(at, pcm)
	}
}

// Prefix returns the analysed 20 ms frames covering the last samples
// samples before the frame being analysed, oldest first (at most 640 ms):
// the audio a recogniser started at SpeechStarted still needs. Call it from
// emit; the frames are the ring's own, valid until the next Analyse.
func (in *Inbound) Prefix(samples int64) [][]int16 { return in.prefix.since(samples) }

// Now is the turn detector's sample time: the samples analysed so far.
func (in *Inbound) Now() int64 { return in.det.Now() }

// EndOfStream closes a turn still open when the input ends (a file, not a
// live stream): the turn detector is fed silence with zero speech
// probability, 10 ms at a time, for its silence duration, so the
// SpeechStopped it would have decided comes out through emit.
func (in *Inbound) EndOfStream(emit func(*turn.Event)) {
	if !in.det.Speaking() {
		return
	}
	var silence [audio.Frame10]int16
	for range in.silenceMs / 10 {
		evs, err := in.det.Process(silence[:], 0)
		if err != nil {
			return
		}
		for i := range evs {
			emit(&evs[i])
		}
	}
}

// Stats are the jitter buffer's counters.
func (in *Inbound) Stats() jitter.Stats {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.jb.Stats()
}

// EchoRuns counts the stretches of speech-like input the echo guard
// judged to be the gateway's own voice and kept from the turn detector.
// Safe from any goroutine.
func (in *Inbound) EchoRuns() int { return int(in.echoRuns.Load()) }

// EchoReferenceSlots is how many 10 ms slots of played audio the echo
// guard holds above its silence floor (its window is 1.28 s); 0 without the
// guard. Safe from any goroutine.
func (in *Inbound) EchoReferenceSlots() int {
	if in.echo == nil {
		return 0
	}
	return in.echo.sounding()
}
