package turn

import (
	"errors"
	"fmt"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/vad"
)

// SampleRate is the detector's sample clock in Hz (audio.SampleRate).
const SampleRate = audio.SampleRate

var (
	// ErrConfig is returned for an invalid Config.
	ErrConfig = errors.New("turn: invalid config")
	// ErrFrame is returned for an empty or oversized frame or a NaN probability.
	ErrFrame = errors.New("turn: bad frame")
)

// Policies: how long a silence after speech ends the turn.
const (
	// PolicyFixed ends the turn SilenceDurationMs after the speech.
	PolicyFixed = "fixed"
	// PolicyAdaptive waits between SilenceDurationMs and MaxSilenceMs,
	// as the prosody and the words before the pause say.
	PolicyAdaptive = "adaptive"
)

// MaxPatience bounds SetPatience: waits are widened at most threefold.
const MaxPatience = 3

// Config holds the turn-taking parameters (BRIEF §7 defaults).
type Config struct {
	Threshold       float32 `yaml:"threshold"`
	ExitThreshold   float32 `yaml:"exit_threshold"`
	PrefixPaddingMs int     `yaml:"prefix_padding_ms"`
	MinSpeechMs     int     `yaml:"min_speech_ms"`
	// SilenceDurationMs is the shortest silence after speech that ends a
	// turn: the whole wait with the fixed policy, the earliest the
	// adaptive policy may end one.
	SilenceDurationMs int `yaml:"silence_duration_ms"`
	MaxTurnMs         int `yaml:"max_turn_ms"`
	// BargeInMs of user speech over the assistant's voice, unless it sounds
	// like a backchannel, raises OverlapSpeech (an interruption).
	BargeInMs int `yaml:"barge_in_ms"`
	// EndRunMs is the shortest run of raw speech evidence (frames with the
	// raw probability at or above Threshold) that counts as speech once a
	// turn is under way, unless the smoothed probability is at or above
	// Threshold too. Shorter blips (a noise burst, a click, a breath) inside
	// the silence neither extend the turn nor move its end. 0: every frame
	// counts.
	EndRunMs int `yaml:"end_run_ms"`
	// Policy is "adaptive" (default) or "fixed".
	Policy string `yaml:"policy"`
	// MaxSilenceMs is the longest the adaptive policy waits: a pause this
	// long always ends the turn.
	MaxSilenceMs int `yaml:"max_silence_ms"`
	// WeightsFile, when set, replaces the adaptive policy's built-in
	// weights (weights.json; the format "vera-eval eot-train" writes).
	WeightsFile string `yaml:"weights_file"`
	// BackchannelMs: speech over the assistant's voice that sounds like a
	// backchannel but goes on this long is an interruption after all.
	BackchannelMs int `yaml:"backchannel_ms"`
	// Language picks the word lists (en, es, fr, de); the voice session
	// sets it from voice.language.
	Language string `yaml:"-"`
	// Weights, when set by code, replaces WeightsFile and the built-in
	// weights (the evaluation's sweep).
	Weights *Weights `yaml:"-"`
}

// DefaultConfig returns 0.5/0.35, 300 ms prefix, 100 ms min speech, the
// fixed policy's 500 ms silence (max_silence_ms 2 s, used if the policy is
// switched to adaptive), 30 s max turn, 200 ms barge-in (800 ms for what
// sounds like a backchannel), 50 ms end run. The fixed policy stays the
// default: on the project's held-out voices the adaptive one does not yet
// beat it on cutoffs (BENCHMARKS.md, "Turn-taking").
func DefaultConfig() Config {
	return Config{Threshold: 0.5, ExitThreshold: 0.35, PrefixPaddingMs: 300, MinSpeechMs: 100,
		SilenceDurationMs: 500, MaxTurnMs: 30000, BargeInMs: 200, EndRunMs: 50,
		Policy: PolicyFixed, MaxSilenceMs: 2000, BackchannelMs: 800, Language: "en"}
}

// FixedConfig is the fixed policy and its 500 ms silence (the detector
// before the adaptive policy; measured with BenchmarkEndOfTurnEval, see
// BENCHMARKS.md "End-of-turn delay"): DefaultConfig.
func FixedConfig() Config { return DefaultConfig() }

// AdaptiveConfig is DefaultConfig with the adaptive policy waiting 200 ms
// to 2 s (voice.turn.policy: adaptive, silence_duration_ms: 200).
func AdaptiveConfig() Config {
	c := DefaultConfig()
	c.Policy, c.SilenceDurationMs = PolicyAdaptive, 200
	return c
}

// Validate reports the first invalid key, by its path under the turn
// section ("turn.silence_duration_ms"), and loads WeightsFile when set.
func (c Config) Validate() error {
	bad := func(key, want string, got any) error {
		return fmt.Errorf("turn.%s: must be %s, got %v: %w", key, want, got, ErrConfig)
	}
	switch {
	case !(c.Threshold > 0 && c.Threshold < 1):
		return bad("threshold", "in (0,1)", c.Threshold)
	case !(c.ExitThreshold > 0 && c.ExitThreshold <= c.Threshold):
		return bad("exit_threshold", "in (0, threshold]", c.ExitThreshold)
	case c.PrefixPaddingMs < 0 || c.PrefixPaddingMs > 5000:
		return bad("prefix_padding_ms", "in [0,5000]", c.PrefixPaddingMs)
	case c.MinSpeechMs < 0 || c.MinSpeechMs > 5000:
		return bad("min_speech_ms", "in [0,5000]", c.MinSpeechMs)
	case c.SilenceDurationMs < 10 || c.SilenceDurationMs > 10000:
		return bad("silence_duration_ms", "in [10,10000]", c.SilenceDurationMs)
	case c.MaxTurnMs < 1000 || c.MaxTurnMs > 600000:
		return bad("max_turn_ms", "in [1000,600000]", c.MaxTurnMs)
	case c.BargeInMs < 0 || c.BargeInMs > 10000:
		return bad("barge_in_ms", "in [0,10000]", c.BargeInMs)
	case c.EndRunMs < 0 || c.EndRunMs >= c.SilenceDurationMs:
		return bad("end_run_ms", "in [0, silence_duration_ms)", c.EndRunMs)
	case c.Policy != PolicyFixed && c.Policy != PolicyAdaptive:
		return bad("policy", `"fixed" or "adaptive"`, fmt.Sprintf("%q", c.Policy))
	case c.MaxSilenceMs < c.SilenceDurationMs || c.MaxSilenceMs > 10000:
		return bad("max_silence_ms", "in [silence_duration_ms, 10000]", c.MaxSilenceMs)
	case c.BackchannelMs < c.BargeInMs || c.BackchannelMs > 10000:
		return bad("backchannel_ms", "in [barge_in_ms, 10000]", c.BackchannelMs)
	}
	if c.Weights != nil {
		if err := c.Weights.Validate(); err != nil {
			return fmt.Errorf("turn.weights: %w: %w", err, ErrConfig)
		}
	} else if c.WeightsFile != "" {
		if _, err := LoadWeights(c.WeightsFile); err != nil {
			return fmt.Errorf("turn.weights_file: %s: %w: %w", c.WeightsFile, err, ErrConfig)
		}
	}
	return nil
}

// weights returns the configured weights.
func (c Config) weights() (Weights, error) {
	switch {
	case c.Weights != nil:
		return *c.Weights, nil
	case c.WeightsFile != "":
		return LoadWeights(c.WeightsFile)
	}
	return DefaultWeights(), nil
}

// EventType names a detector event.
type EventType uint8

const (
	// SpeechStarted: a turn began. AudioStart, SpeechStart are set.
	SpeechStarted EventType = iota + 1
	// SpeechStopped: the turn ended. SpeechEnd (true end), Audio, MaxTurn,
	// Overlapped set.
	SpeechStopped
	// OverlapSpeech: user speech over the assistant's voice is an
	// interruption (BargeInMs of it that does not sound like a
	// backchannel, words that are not one, or BackchannelMs of any).
	OverlapSpeech
	// OverlapStarted: user speech began over the assistant's voice (the
	// session ducks it until OverlapEnded or OverlapSpeech).
	OverlapStarted
	// OverlapEnded: the speech over the assistant's voice stopped without
	// being an interruption (a backchannel, a click).
	OverlapEnded
)

func (t EventType) String() string {
	switch t {
	case SpeechStarted:
		return "speech_started"
	case SpeechStopped:
		return "speech_stopped"
	case OverlapSpeech:
		return "overlap_speech"
	case OverlapStarted:
		return "overlap_started"
	case OverlapEnded:
		return "overlap_ended"
	}
	return "unknown"
}

// Event is one detector output. Times are sample indices at 16 kHz since
// the detector's start (or Reset).
type Event struct {
	Type EventType
	// At is the sample time at which the event was decided (end of the frame).
	At int64
	// AudioStart is where the turn's audio begins, prefix padding included.
	AudioStart int64
	// SpeechStart is the start of the first speech frame of the turn (for
	// the overlap events: of the speech over the assistant's voice).
	SpeechStart int64
	// SpeechEnd is the end of the last speech frame (SpeechStopped only).
	SpeechEnd int64
	// MaxTurn is true when the turn was cut at MaxTurnMs.
	MaxTurn bool
	// Overlapped: some of the turn's speech was over the assistant's voice
	// (SpeechStopped only); a turn of backchannel words then is listening,
	// not a new turn.
	Overlapped bool
	// Audio is the turn's PCM [AudioStart, SpeechEnd) (SpeechStopped only),
	// valid until the next Process or Reset.
	Audio []int16
}

type state uint8

const (
	idle state = iota
	candidate
	speaking
)

// Detector is one stream's turn detector.
type Detector struct {
	cfg                             Config
	prefix, minSpeech, silence, max int64
	bargeIn, endRun, backchannel    int64

	now   int64 // samples fed so far
	st    state
	ring  []int16 // last `prefix` samples, circular
	rpos  int
	rfull int
	turn  []int16 // audio of the current turn from AudioStart

	audioStart, speechStart, lastSpeechEnd int64
	// runStart is where the current run of raw speech evidence began; -1
	// outside a run.
	runStart  int64
	assistant bool

	pol    policy
	ov     overlap
	events [4]Event
}

// New returns a detector.
func New(cfg Config) (*Detector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w, err := cfg.weights()
	if err != nil {
		return nil, fmt.Errorf("turn.weights_file: %w: %w", err, ErrConfig)
	}
	ms := func(v int) int64 { return int64(v) * SampleRate / 1000 }
	d := &Detector{cfg: cfg, prefix: ms(cfg.PrefixPaddingMs), minSpeech: ms(cfg.MinSpeechMs),
		silence: ms(cfg.SilenceDurationMs), max: ms(cfg.MaxTurnMs), bargeIn: ms(cfg.BargeInMs),
		endRun: ms(cfg.EndRunMs), backchannel: ms(cfg.BackchannelMs), runStart: -1}
	d.pol.init(cfg, w)
	d.ov.reset()
	d.ov.resetEcho()
	d.ring = make([]int16, d.prefix)
	d.turn = make([]int16, 0, d.prefix+ms(2000))
	return d, nil
}

// Reset returns to idle at sample time 0 and forgets the speaker.
func (d *Detector) Reset() {
	d.now, d.st, d.rpos, d.rfull = 0, idle, 0, 0
	d.turn = d.turn[:0]
	d.runStart = -1
	d.pol.reset()
	d.ov.reset()
	d.ov.resetEcho()
	d.ov.userLoud, d.ov.userN = 0, 0
}

// Now is the sample time after the last frame.
func (d *Detector) Now() int64 { return d.now }

// Speaking reports whether a turn is in progress (SpeechStarted sent).
func (d *Detector) Speaking() bool { return d.st == speaking }

// SetAssistantSpeaking tells the detector whether assistant audio is playing.
func (d *Detector) SetAssistantSpeaking(on bool) {
	if on != d.assistant {
		d.assistant = on
		d.ov.reset()
		d.ov.resetEcho()
	}
}

// SetTranscript is SetTranscriptHeard for a recogniser that has heard
// all the audio so far.
func (d *Detector) SetTranscript(text string) { d.SetTranscriptHeard(text, d.now) }

// SetTranscriptHeard gives the detector the recogniser's current
// (partial) transcript of the turn in progress, from the audio up to
// sample time heard: its last words inform the adaptive policy's wait,
// and over the assistant's voice they tell a backchannel from an
// interruption. Call it whenever the recogniser is polled, from the
// turn's start (an empty text says a recogniser is listening); the text
// is not kept. Ignored outside a turn.
//
// Once a recogniser is listening, the adaptive policy does not end a turn
// on a pause whose speech the recogniser has not yet heard to its end (a
// recogniser behind a busy machine): it waits for the words, never past
// max_silence_ms.
func (d *Detector) SetTranscriptHeard(text string, heard int64) {
	if d.st == idle {
		return
	}
	d.pol.setWords(d.pol.lex.classify(text), d.now, min(heard, d.now), d)
	if d.ov.active() && !d.ov.sent {
		d.ov.setWords(text, d.pol.lex)
	}
}

// SetPatience widens every wait of the current and later pauses by
// factor (1 = as configured, at most MaxPatience): for people who speak
// slowly, or who dictate into a composer. Values outside [1, MaxPatience]
// are clamped.
func (d *Detector) SetPatience(factor float32) {
	d.pol.setPatience(factor, d.lastSpeechEnd)
}

// MaxWaitMs is the longest silence after speech the detector waits before
// ending a turn, patience included.
func (d *Detector) MaxWaitMs() int { return int(d.pol.maxWait() * 1000 / SampleRate) }

// maxFrame bounds one Process call (100 ms at 16 kHz).
const maxFrame = SampleRate / 10

// Process feeds one frame (any length up to 100 ms, normally 10 or 20 ms)
// and its speech probability, and returns the events it caused (at most one
// of each type), valid until the next call.
func (d *Detector) Process(frame []int16, p float32) ([]Event, error) {
	return d.ProcessRaw(frame, p, p)
}

// ProcessRaw is Process for a smoothed probability p (which starts turns)
// plus the frame's unsmoothed probability raw (vad.Features.Raw), which ends
// them without the smoother's lag: SpeechEnd is the end of the last frame of
// speech evidence (raw at or above Threshold and p at or above ExitThreshold,
// in a run of at least EndRunMs or with p at or above Threshold), and the
// turn stops once the silence after it reaches the policy's wait. Without
// the VAD's features the adaptive policy weighs words and silence only.
func (d *Detector) ProcessRaw(frame []int16, p, raw float32) ([]Event, error) {
	return d.process(frame, p, raw, nil)
}

// ProcessFeatures is ProcessRaw for one 10 ms VAD frame with all of its
// features (vad.VAD.ProcessFeatures): the adaptive policy also reads the
// pitch contour, energy decay, final lengthening and speaking rate from
// them, and the barge-in judgement the level.
func (d *Detector) ProcessFeatures(frame []int16, p float32, f *vad.Features) ([]Event, error) {
	if len(frame) != vad.FrameSamples {
		return nil, fmt.Errorf("turn: features frame of %d samples (want %d): %w", len(frame), vad.FrameSamples, ErrFrame)
	}
	return d.process(frame, p, f.Raw, f)
}

func (d *Detector) process(frame []int16, p, raw float32, f *vad.Features) ([]Event, error) {
	if len(frame) == 0 || len(frame) > maxFrame {
		return nil, fmt.Errorf("turn: frame of %d samples (want 1..%d): %w", len(frame), maxFrame, ErrFrame)
	}
	if p != p || raw != raw {
		return nil, fmt.Errorf("turn: NaN probability: %w", ErrFrame)
	}
	start := d.now
	end := start + int64(len(frame))
	// Speech evidence for the end of turn: a raw run long enough, or one the
	// smoothed probability confirms.
	speechEnd := p >= d.cfg.ExitThreshold && raw >= d.cfg.Threshold
	if speechEnd {
		if d.runStart < 0 {
			d.runStart = start
		}
		speechEnd = end-d.runStart >= d.endRun || p >= d.cfg.Threshold
	} else {
		d.runStart = -1
	}
	d.ov.audible = true
	if f != nil {
		if d.pol.adaptive {
			d.pol.push(speechEnd, f)
		}
		d.ov.level(frame, speechEnd, d.assistant)
	}
	ev := d.events[:0]

	switch d.st {
	case idle:
		if p >= d.cfg.Threshold {
			ev = d.begin(ev, frame, start, end)
		}
	case candidate:
		d.turn = append(d.turn, frame...)
		if p >= d.cfg.ExitThreshold {
			if speechEnd {
				d.lastSpeechEnd = end
			}
			if end-d.speechStart >= d.minSpeech {
				ev = d.start(ev, end)
			}
		} else {
			d.st = idle // too short: a click, not a turn
			d.turn = d.turn[:0]
			ev = d.ov.blipEnded(ev, end)
		}
	case speaking:
		ev = d.speak(ev, frame, end, speechEnd)
	}
	if d.assistant && d.st != idle {
		ev = d.ov.frame(ev, d, start, end, speechEnd)
	}
	d.writeRing(frame)
	d.now = end
	return ev, nil
}

// begin moves idle to candidate on the first frame of possible speech.
func (d *Detector) begin(ev []Event, frame []int16, start, end int64) []Event {
	d.st = candidate
	d.speechStart, d.lastSpeechEnd = start, end
	// The turn begins with the prefix held in the ring.
	n := int64(d.rfull)
	d.audioStart = start - n
	d.turn = d.turn[:0]
	if d.rfull == len(d.ring) {
		d.turn = append(d.turn, d.ring[d.rpos:]...)
		d.turn = append(d.turn, d.ring[:d.rpos]...)
	} else {
		d.turn = append(d.turn, d.ring[:d.rfull]...)
	}
	d.turn = append(d.turn, frame...)
	d.pol.newTurn()
	d.ov.turnOverlapped = false
	if d.assistant {
		ev = d.ov.begin(ev, start, end)
	}
	if end-d.speechStart >= d.minSpeech {
		ev = d.start(ev, end)
	}
	return ev
}

// speak is one frame of a turn in progress: it ends the turn once the
// silence reaches the policy's wait, or at MaxTurnMs.
func (d *Detector) speak(ev []Event, frame []int16, end int64, speechEnd bool) []Event {
	if speechEnd {
		d.lastSpeechEnd = end
		d.pol.speech()
	} else if !d.pol.inPause {
		d.pol.pause(d)
	}
	if int64(len(d.turn)) < d.prefix+d.max {
		d.turn = append(d.turn, frame...)
	}
	wait := d.pol.wait
	switch {
	// The silence counts from the last speech evidence, not from where
	// the smoothed probability falls. A run still too short to judge
	// that began inside the silence defers the decision until it
	// qualifies (the turn goes on) or breaks off (the turn ends, with
	// the same back-dated end).
	case !speechEnd && end-d.lastSpeechEnd >= wait && (d.runStart < 0 || d.runStart-d.lastSpeechEnd >= wait):
		ev = d.stop(ev, end, d.lastSpeechEnd, false)
	case end-d.speechStart >= d.max:
		ev = d.stop(ev, end, end, true)
	}
	return ev
}

func (d *Detector) start(ev []Event, at int64) []Event {
	d.st = speaking
	return append(ev, Event{Type: SpeechStarted, At: at, AudioStart: d.audioStart, SpeechStart: d.speechStart})
}

func (d *Detector) stop(ev []Event, at, speechEnd int64, maxTurn bool) []Event {
	d.st = idle
	n := min(int64(len(d.turn)), speechEnd-d.audioStart)
	e := Event{Type: SpeechStopped, At: at, AudioStart: d.audioStart, SpeechStart: d.speechStart,
		SpeechEnd: speechEnd, MaxTurn: maxTurn, Overlapped: d.ov.turnOverlapped, Audio: d.turn[:max(n, 0)]}
	if d.ov.active() && !d.ov.sent {
		ev = append(ev, Event{Type: OverlapEnded, At: at, SpeechStart: d.ov.start})
	}
	d.ov.reset()
	d.pol.endTurn()
	return append(ev, e)
}

func (d *Detector) writeRing(frame []int16) {
	if len(d.ring) == 0 {
		return
	}
	if len(frame) >= len(d.ring) {
		copy(d.ring, frame[len(frame)-len(d.ring):])
		d.rpos, d.rfull = 0, len(d.ring)
		return
	}
	n := copy(d.ring[d.rpos:], frame)
	if n < len(frame) {
		copy(d.ring, frame[n:])
	}
	d.rpos = (d.rpos + len(frame)) % len(d.ring)
	d.rfull = min(d.rfull+len(frame), len(d.ring))
}
