package turn

import (
	"errors"
	"fmt"

	"github.com/veraneural/vera-gateway/audio"
)

// SampleRate is the detector's sample clock in Hz (audio.SampleRate).
const SampleRate = audio.SampleRate

var (
	// ErrConfig is returned for an invalid Config.
	ErrConfig = errors.New("turn: invalid config")
	// ErrFrame is returned for an empty or oversized frame or a NaN probability.
	ErrFrame = errors.New("turn: bad frame")
)

// Config holds the turn-taking parameters (BRIEF §7 defaults).
type Config struct {
	Threshold         float32 `yaml:"threshold"`
	ExitThreshold     float32 `yaml:"exit_threshold"`
	PrefixPaddingMs   int     `yaml:"prefix_padding_ms"`
	MinSpeechMs       int     `yaml:"min_speech_ms"`
	SilenceDurationMs int     `yaml:"silence_duration_ms"`
	MaxTurnMs         int     `yaml:"max_turn_ms"`
	// BargeInMs of user speech while the assistant speaks raises OverlapSpeech.
	BargeInMs int `yaml:"barge_in_ms"`
	// EndRunMs is the shortest run of raw speech evidence (frames with the
	// raw probability at or above Threshold) that counts as speech once a
	// turn is under way, unless the smoothed probability is at or above
	// Threshold too. Shorter blips (a noise burst, a click, a breath) inside
	// the silence neither extend the turn nor move its end. 0: every frame
	// counts.
	EndRunMs int `yaml:"end_run_ms"`
}

// DefaultConfig returns 0.5/0.35, 300 ms prefix, 100 ms min speech, 500 ms
// silence, 30 s max turn, 300 ms barge-in, 50 ms end run (measured with
// BenchmarkEndOfTurnEval; see BENCHMARKS.md, "End-of-turn delay").
func DefaultConfig() Config {
	return Config{Threshold: 0.5, ExitThreshold: 0.35, PrefixPaddingMs: 300, MinSpeechMs: 100,
		SilenceDurationMs: 500, MaxTurnMs: 30000, BargeInMs: 300, EndRunMs: 50}
}

// Validate reports the first invalid key.
func (c Config) Validate() error {
	switch {
	case !(c.Threshold > 0 && c.Threshold < 1):
		return fmt.Errorf("audio.turn.threshold: must be in (0,1), got %v: %w", c.Threshold, ErrConfig)
	case !(c.ExitThreshold > 0 && c.ExitThreshold <= c.Threshold):
		return fmt.Errorf("audio.turn.exit_threshold: must be in (0, threshold], got %v: %w", c.ExitThreshold, ErrConfig)
	case c.PrefixPaddingMs < 0 || c.PrefixPaddingMs > 5000:
		return fmt.Errorf("audio.turn.prefix_padding_ms: must be in [0,5000], got %d: %w", c.PrefixPaddingMs, ErrConfig)
	case c.MinSpeechMs < 0 || c.MinSpeechMs > 5000:
		return fmt.Errorf("audio.turn.min_speech_ms: must be in [0,5000], got %d: %w", c.MinSpeechMs, ErrConfig)
	case c.SilenceDurationMs < 10 || c.SilenceDurationMs > 10000:
		return fmt.Errorf("audio.turn.silence_duration_ms: must be in [10,10000], got %d: %w", c.SilenceDurationMs, ErrConfig)
	case c.MaxTurnMs < 1000 || c.MaxTurnMs > 600000:
		return fmt.Errorf("audio.turn.max_turn_ms: must be in [1000,600000], got %d: %w", c.MaxTurnMs, ErrConfig)
	case c.BargeInMs < 0 || c.BargeInMs > 10000:
		return fmt.Errorf("audio.turn.barge_in_ms: must be in [0,10000], got %d: %w", c.BargeInMs, ErrConfig)
	case c.EndRunMs < 0 || c.EndRunMs >= c.SilenceDurationMs:
		return fmt.Errorf("audio.turn.end_run_ms: must be in [0, silence_duration_ms), got %d: %w", c.EndRunMs, ErrConfig)
	}
	return nil
}

// EventType names a detector event.
type EventType uint8

const (
	// SpeechStarted: a turn began. AudioStart, SpeechStart are set.
	SpeechStarted EventType = iota + 1
	// SpeechStopped: the turn ended. SpeechEnd (true end), Audio, MaxTurn set.
	SpeechStopped
	// OverlapSpeech: the user has spoken BargeInMs while the assistant speaks.
	OverlapSpeech
)

func (t EventType) String() string {
	switch t {
	case SpeechStarted:
		return "speech_started"
	case SpeechStopped:
		return "speech_stopped"
	case OverlapSpeech:
		return "overlap_speech"
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
	// SpeechStart is the start of the first speech frame of the turn.
	SpeechStart int64
	// SpeechEnd is the end of the last speech frame (SpeechStopped only).
	SpeechEnd int64
	// MaxTurn is true when the turn was cut at MaxTurnMs.
	MaxTurn bool
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
	bargeIn, endRun                 int64

	now   int64 // samples fed so far
	st    state
	ring  []int16 // last `prefix` samples, circular
	rpos  int
	rfull int
	turn  []int16 // audio of the current turn from AudioStart

	audioStart, speechStart, lastSpeechEnd int64
	// runStart is where the current run of raw speech evidence began; -1
	// outside a run.
	runStart    int64
	assistant   bool
	overlap     int64
	overlapSent bool
	events      [3]Event
}

// New returns a detector.
func New(cfg Config) (*Detector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ms := func(v int) int64 { return int64(v) * SampleRate / 1000 }
	d := &Detector{cfg: cfg, prefix: ms(cfg.PrefixPaddingMs), minSpeech: ms(cfg.MinSpeechMs),
		silence: ms(cfg.SilenceDurationMs), max: ms(cfg.MaxTurnMs), bargeIn: ms(cfg.BargeInMs),
		endRun: ms(cfg.EndRunMs), runStart: -1}
	d.ring = make([]int16, d.prefix)
	d.turn = make([]int16, 0, d.prefix+ms(2000))
	return d, nil
}

// Reset returns to idle at sample time 0.
func (d *Detector) Reset() {
	d.now, d.st, d.rpos, d.rfull = 0, idle, 0, 0
	d.turn = d.turn[:0]
	d.overlap, d.overlapSent = 0, false
	d.runStart = -1
}

// Now is the sample time after the last frame.
func (d *Detector) Now() int64 { return d.now }

// Speaking reports whether a turn is in progress (SpeechStarted sent).
func (d *Detector) Speaking() bool { return d.st == speaking }

// SetAssistantSpeaking tells the detector whether assistant audio is playing.
func (d *Detector) SetAssistantSpeaking(on bool) {
	if on != d.assistant {
		d.assistant = on
		d.overlap, d.overlapSent = 0, false
	}
}

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
// turn stops SilenceDurationMs after it.
func (d *Detector) ProcessRaw(frame []int16, p, raw float32) ([]Event, error) {
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
	ev := d.events[:0]

	switch d.st {
	case idle:
		if p >= d.cfg.Threshold {
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
			if end-d.speechStart >= d.minSpeech {
				ev = d.start(ev, end)
			}
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
		}
	case speaking:
		if speechEnd {
			d.lastSpeechEnd = end
		}
		if int64(len(d.turn)) < d.prefix+d.max {
			d.turn = append(d.turn, frame...)
		}
		switch {
		// The silence counts from the last speech evidence, not from where
		// the smoothed probability falls. A run still too short to judge
		// that began inside the silence defers the decision until it
		// qualifies (the turn goes on) or breaks off (the turn ends, with
		// the same back-dated end).
		case end-d.lastSpeechEnd >= d.silence && (d.runStart < 0 || d.runStart-d.lastSpeechEnd >= d.silence):
			ev = d.stop(ev, end, d.lastSpeechEnd, false)
		case end-d.speechStart >= d.max:
			ev = d.stop(ev, end, end, true)
		}
	}

	// Barge-in: count user speech while the assistant plays.
	if d.assistant && d.st != idle && p >= d.cfg.ExitThreshold && !d.overlapSent {
		d.overlap += int64(len(frame))
		if d.overlap >= d.bargeIn && d.st == speaking {
			d.overlapSent = true
			ev = append(ev, Event{Type: OverlapSpeech, At: end, AudioStart: d.audioStart, SpeechStart: d.speechStart})
		}
	}
	if d.st == idle {
		d.overlap = 0
	}

	d.writeRing(frame)
	d.now = end
	return ev, nil
}

func (d *Detector) start(ev []Event, at int64) []Event {
	d.st = speaking
	d.overlapSent = false
	return append(ev, Event{Type: SpeechStarted, At: at, AudioStart: d.audioStart, SpeechStart: d.speechStart})
}

func (d *Detector) stop(ev []Event, at, speechEnd int64, maxTurn bool) []Event {
	d.st = idle
	n := min(int64(len(d.turn)), speechEnd-d.audioStart)
	e := Event{Type: SpeechStopped, At: at, AudioStart: d.audioStart, SpeechStart: d.speechStart,
		SpeechEnd: speechEnd, MaxTurn: maxTurn, Audio: d.turn[:max(n, 0)]}
	d.overlap, d.overlapSent = 0, false
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
