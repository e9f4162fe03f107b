package jitter

import (
	"errors"
	"fmt"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/codec"
)

var (
	// ErrConfig is returned for an invalid Config.
	ErrConfig = errors.New("jitter: invalid config")
	// ErrBadPacket is returned by Push for an empty or oversized payload; the
	// packet is dropped and counted in Stats.Corrupt.
	ErrBadPacket = errors.New("jitter: bad packet")
	// ErrBufferSize is returned by Pull when pcm is not one frame long.
	ErrBufferSize = errors.New("jitter: pcm is not one frame")
)

// Decoder is the per-stream codec the buffer drives; *codec.Decoder
// implements it.
type Decoder interface {
	FrameSamples() int
	DecodeFrame(pkt []byte, pcm []int16) error
	ConcealFrame(pcm []int16) error
	RecoverFrame(next []byte, pcm []int16) error
}

// Config configures a Buffer.
type Config struct {
	// ClockRate is the RTP clock rate (audio.OpusRate for Opus).
	ClockRate int `yaml:"clock_rate"`
	// TargetDelayMs is the initial (and, when not Adaptive, fixed) playout delay.
	TargetDelayMs int `yaml:"target_delay_ms"`
	// MinDelayMs and MaxDelayMs bound the adaptive target; MaxDelayMs also
	// bounds the buffered span (older frames are dropped above it).
	MinDelayMs int `yaml:"min_delay_ms"`
	MaxDelayMs int `yaml:"max_delay_ms"`
	// Adaptive lets the target follow the measured interarrival jitter.
	Adaptive bool `yaml:"adaptive"`
	// Slots is the number of packet slots (a power of two, >= 2× the frames
	// in MaxDelayMs); packets further ahead of the play point reset the stream.
	Slots int `yaml:"slots"`
	// MaxConcealFrames bounds consecutive PLC frames in an underrun before the
	// buffer plays silence instead.
	MaxConcealFrames int `yaml:"max_conceal_frames"`
	// ShrinkWindowMs (Adaptive only): when the buffered span stayed at
	// least one frame above the target for this long, one frame is skipped,
	// preferably a quiet one, so delay gained in a burst (a stall, a loss,
	// a jitter spike) drains back at most one frame per window. 0 disables.
	ShrinkWindowMs int `yaml:"shrink_window_ms"`
}

// DefaultConfig returns an adaptive target within [20, 300] ms (60 ms until
// the first packets are measured) that shrinks back over 1 s windows.
func DefaultConfig() Config {
	return Config{ClockRate: audio.OpusRate, TargetDelayMs: 60, MinDelayMs: 20, MaxDelayMs: 300,
		Adaptive: true, Slots: 64, MaxConcealFrames: 5, ShrinkWindowMs: 1000}
}

// Validate reports the first invalid key.
func (c Config) Validate() error {
	switch {
	case c.ClockRate <= 0 || c.ClockRate%50 != 0:
		return fmt.Errorf("audio.jitter.clock_rate: must be a positive multiple of 50, got %d: %w", c.ClockRate, ErrConfig)
	case c.MinDelayMs < 0 || c.MinDelayMs > c.MaxDelayMs:
		return fmt.Errorf("audio.jitter.min_delay_ms: must be in [0, max_delay_ms], got %d: %w", c.MinDelayMs, ErrConfig)
	case c.MaxDelayMs < codec.FrameMs || c.MaxDelayMs > 2000:
		return fmt.Errorf("audio.jitter.max_delay_ms: must be in [%d,2000], got %d: %w", codec.FrameMs, c.MaxDelayMs, ErrConfig)
	case c.TargetDelayMs < c.MinDelayMs || c.TargetDelayMs > c.MaxDelayMs:
		return fmt.Errorf("audio.jitter.target_delay_ms: must be in [min_delay_ms, max_delay_ms], got %d: %w", c.TargetDelayMs, ErrConfig)
	case c.Slots < 4 || c.Slots&(c.Slots-1) != 0 || c.Slots < 2*c.MaxDelayMs/codec.FrameMs:
		return fmt.Errorf("audio.jitter.slots: must be a power of two >= 4 and >= 2*max_delay_ms/20, got %d: %w", c.Slots, ErrConfig)
	case c.MaxConcealFrames < 0:
		return fmt.Errorf("audio.jitter.max_conceal_frames: must be >= 0, got %d: %w", c.MaxConcealFrames, ErrConfig)
	case c.ShrinkWindowMs != 0 && (c.ShrinkWindowMs < codec.FrameMs || c.ShrinkWindowMs > 60000):
		return fmt.Errorf("audio.jitter.shrink_window_ms: must be 0 or in [%d,60000], got %d: %w", codec.FrameMs, c.ShrinkWindowMs, ErrConfig)
	}
	return nil
}

// FrameKind says how Pull produced a frame.
type FrameKind uint8

const (
	// Silence: nothing to play (before the first packet, while buffering, or
	// after MaxConcealFrames of underrun); pcm is zeroed.
	Silence FrameKind = iota
	// Decoded: the packet due was decoded.
	Decoded
	// Recovered: the packet due was lost and rebuilt from the next one's FEC.
	Recovered
	// Concealed: PLC filled a lost packet, an underrun or a corrupt packet.
	Concealed
)

func (k FrameKind) String() string {
	return [...]string{"silence", "decoded", "recovered", "concealed"}[k]
}

// Stats are cumulative counters since New or Reset.
type Stats struct {
	Received   uint64 // packets accepted into the buffer
	Decoded    uint64 // frames decoded from their own packet
	Lost       uint64 // packets never received by their play time
	Recovered  uint64 // lost packets rebuilt from FEC
	Concealed  uint64 // frames made by PLC (losses, underruns, corrupt packets)
	Late       uint64 // packets that arrived after their play time (dropped)
	Reordered  uint64 // packets that arrived after a higher sequence number
	Duplicates uint64 // packets already buffered (dropped)
	Dropped    uint64 // frames dropped to keep the span under MaxDelayMs
	Corrupt    uint64 // packets rejected by Push or failing to decode
	Underruns  uint64 // Pulls with nothing buffered while playing
	Resets     uint64 // stream restarts after a sequence jump beyond Slots
	Skipped    uint64 // frames skipped to shrink the delay back to the target
	// TargetDelayMs is the current target; JitterMs the RFC 3550 estimate.
	TargetDelayMs int
	JitterMs      float64
}

type slot struct {
	used bool
	ext  int64
	ts   int64
	n    int
}

// Buffer is one stream's jitter buffer.
type Buffer struct {
	cfg   Config
	dec   Decoder
	frame int64 // RTP ticks per 20 ms
	mask  int64
	slots []slot
	data  []byte // Slots × codec.MaxPacketBytes

	started, playing bool
	hiExt, hiTs      int64 // highest sequence number and its timestamp
	nextExt, playTs  int64 // next packet to play and its expected timestamp
	concealRun       int

	haveArrival         bool
	lastArrival, lastTs int64
	jitter              float64 // ticks
	target              int64   // ticks
	haveBase            bool
	base, peak          float64 // ticks: minimum transit (arrival − ts) and peak delay above it

	// Shrinking: the smallest span seen in the current window of pulls, the
	// pulls counted, and how long a due shrink has waited for a quiet frame.
	minSpan       int64
	windowPulls   int
	shrinkWindow  int     // pulls per window; 0 when shrinking is off
	shrinkPending int     // pulls since a shrink became due; 0 when none is
	floorE        float32 // running floor of decoded frame energy (sum of squares)

	stats Stats
}

// Shrink tuning: a frame within 6 dB of the running floor is quiet; a due
// shrink that found no quiet frame within maxPendingPulls (2 s) skips the
// next frame anyway.
const (
	// The transit minimum may creep up by 0.1 % of a frame per packet (clock
	// drift between sender and receiver); the peak delay decays by 1 % of a
	// frame per packet (10 ms per second of audio).
	baseRisePerPacket  = 0.001
	peakDecayPerPacket = 0.01

	quietRatio      = 3.98   // 6 dB
	floorRise       = 1.0116 // 0.05 dB per frame: the floor follows a louder room by 2.5 dB/s
	maxPendingPulls = 100
)

// New returns a buffer that decodes with dec (one per stream).
func New(cfg Config, dec Decoder) (*Buffer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dec == nil {
		return nil, fmt.Errorf("jitter: nil decoder: %w", ErrConfig)
	}
	b := &Buffer{cfg: cfg, dec: dec, frame: int64(cfg.ClockRate * codec.FrameMs / 1000),
		mask: int64(cfg.Slots - 1), slots: make([]slot, cfg.Slots),
		data: make([]byte, cfg.Slots*codec.MaxPacketBytes)}
	if cfg.Adaptive && cfg.ShrinkWindowMs > 0 {
		b.shrinkWindow = cfg.ShrinkWindowMs / codec.FrameMs
	}
	b.Reset()
	return b, nil
}

// Reset forgets every packet and counter (e.g. on an SSRC change).
func (b *Buffer) Reset() {
	clear(b.slots)
	b.started, b.playing, b.haveArrival = false, false, false
	b.concealRun = 0
	b.jitter = 0
	b.haveBase, b.peak = false, 0
	b.target = b.ms(b.cfg.TargetDelayMs)
	b.stats = Stats{}
	b.resetShrink()
	b.floorE = 0
}

func (b *Buffer) resetShrink() {
	b.minSpan, b.windowPulls, b.shrinkPending = 1<<62, 0, 0
}

func (b *Buffer) ms(ms int) int64 { return int64(ms) * int64(b.cfg.ClockRate) / 1000 }

// Stats returns the counters and the current target and jitter estimate.
func (b *Buffer) Stats() Stats {
	s := b.stats
	s.TargetDelayMs = int(b.target * 1000 / int64(b.cfg.ClockRate))
	s.JitterMs = b.jitter * 1000 / float64(b.cfg.ClockRate)
	return s
}

func (b *Buffer) restart(seq uint16, ts uint32) {
	clear(b.slots)
	b.resetShrink()
	b.started, b.playing = true, false
	b.hiExt, b.hiTs = int64(seq), int64(ts)
	b.nextExt, b.playTs = b.hiExt, b.hiTs
	b.haveArrival = false
	b.haveBase, b.peak = false, 0
}

// Push offers one packet. arrival is the receive time in RTP clock ticks on
// any monotonic origin (e.g. media-clock samples at ClockRate); it feeds the
// jitter estimate. The payload is copied. Late and duplicate packets are
// dropped silently (counted); only a malformed payload is an error.
func (b *Buffer) Push(seq uint16, ts uint32, payload []byte, arrival int64) error {
	if len(payload) == 0 || len(payload) > codec.MaxPacketBytes {
		b.stats.Corrupt++
		return fmt.Errorf("jitter: seq %d: %d-byte payload (want 1..%d): %w", seq, len(payload), codec.MaxPacketBytes, ErrBadPacket)
	}
	if !b.started {
		b.restart(seq, ts)
	}
	ext := b.hiExt + int64(int16(seq-uint16(b.hiExt)))
	tsExt := b.hiTs + int64(int32(ts-uint32(b.hiTs)))
	if ext < b.nextExt && !b.playing && b.stats.Decoded+b.stats.Recovered == 0 && b.hiExt-ext < int64(len(b.slots)) {
		b.nextExt = ext // first packets arrived out of order: start earlier
	}
	if ext < b.nextExt {
		b.stats.Late++
		return nil
	}
	if ext-b.nextExt >= int64(len(b.slots)) {
		// A jump beyond the window: the sender restarted or we fell far behind.
		b.stats.Resets++
		b.restart(seq, ts)
		ext, tsExt = b.hiExt, b.hiTs
	}
	s := &b.slots[ext&b.mask]
	if s.used && s.ext == ext {
		b.stats.Duplicates++
		return nil
	}
	if ext < b.hiExt {
		b.stats.Reordered++
	} else {
		b.hiExt, b.hiTs = ext, tsExt
	}
	*s = slot{used: true, ext: ext, ts: tsExt, n: len(payload)}
	off := int(ext&b.mask) * codec.MaxPacketBytes
	copy(b.data[off:off+len(payload)], payload)
	b.stats.Received++
	b.updateJitter(tsExt, arrival)
	return nil
}

func (b *Buffer) updateJitter(ts, arrival int64) {
	if b.haveArrival {
		d := float64((arrival - b.lastArrival) - (ts - b.lastTs))
		if d < 0 {
			d = -d
		}
		b.jitter += (d - b.jitter) / 16
	}
	b.haveArrival, b.lastArrival, b.lastTs = true, arrival, ts
	// Peak delay: how much later than the quickest packet any recent one
	// arrived (transit minus its running minimum), decaying linearly so a
	// one-off stall is forgotten over tens of seconds while recurring ones
	// keep the margin.
	transit := float64(arrival - ts)
	if !b.haveBase || transit < b.base {
		b.base, b.haveBase = transit, true
	} else {
		b.base += float64(b.frame) * baseRisePerPacket
	}
	b.peak = max(transit-b.base, b.peak-float64(b.frame)*peakDecayPerPacket)
	if !b.cfg.Adaptive {
		return
	}
	// One frame of packetisation plus the larger of three jitter deviations
	// (about the largest deviation for uniform jitter) and the peak delay,
	// in whole frames, rounding up only beyond a 2 ms tolerance: a fraction
	// of a millisecond must not add a frame to every clean stream.
	t := b.frame + int64(max(3*b.jitter, b.peak))
	tol := int64(b.cfg.ClockRate / 500)
	t = max(t-tol+b.frame-1, b.frame) / b.frame * b.frame
	t = max(b.ms(b.cfg.MinDelayMs), min(t, b.ms(b.cfg.MaxDelayMs)))
	b.target = t
}

func (b *Buffer) payload(ext int64) []byte {
	s := &b.slots[ext&b.mask]
	off := int(ext&b.mask) * codec.MaxPacketBytes
	return b.data[off : off+s.n]
}

func (b *Buffer) present(ext int64) bool {
	s := &b.slots[ext&b.mask]
	return s.used && s.ext == ext
}

// Pull writes the next 20 ms frame into pcm (len FrameSamples of the
// decoder) and says how it was made. Call it once per frame on the media clock.
func (b *Buffer) Pull(pcm []int16) (FrameKind, error) {
	if len(pcm) != b.dec.FrameSamples() {
		return Silence, fmt.Errorf("jitter: pcm has %d samples, want %d: %w", len(pcm), b.dec.FrameSamples(), ErrBufferSize)
	}
	if !b.started {
		clear(pcm)
		return Silence, nil
	}
	if !b.playing {
		if b.hiExt < b.nextExt {
			return b.underrun(pcm)
		}
		// Anchor the play clock on the earliest buffered packet.
		first := b.nextExt
		for first < b.hiExt && !b.present(first) {
			first++
		}
		b.playTs = b.slots[first&b.mask].ts - (first-b.nextExt)*b.frame
		if b.hiTs+b.frame-b.playTs < b.target {
			return b.underrun(pcm)
		}
		b.playing = true
	}
	// Keep the buffered span bounded (counted in packets, which a sender's
	// timestamps cannot inflate).
	for (b.hiExt-b.nextExt+1)*b.frame > b.ms(b.cfg.MaxDelayMs) && b.nextExt < b.hiExt {
		b.slots[b.nextExt&b.mask].used = false
		b.nextExt++
		b.playTs += b.frame
		b.stats.Dropped++
	}
	if b.hiExt < b.nextExt {
		b.playing = false
		b.stats.Underruns++
		return b.underrun(pcm)
	}
	if !b.present(b.nextExt) {
		// Lost: later packets are here but this one is not.
		b.stats.Lost++
		kind := Concealed
		next := b.nextExt + 1
		if b.present(next) && b.slots[next&b.mask].ts == b.playTs+b.frame && codec.HasFEC(b.payload(next)) &&
			b.dec.RecoverFrame(b.payload(next), pcm) == nil {
			b.stats.Recovered++
			kind = Recovered
		} else {
			kind = b.conceal(pcm)
		}
		b.nextExt++
		b.playTs += b.frame
		if kind == Recovered {
			b.concealRun = 0
		}
		return kind, nil
	}
	span := b.hiTs + b.frame - b.playTs // buffered ahead, the frame due now included
	s := &b.slots[b.nextExt&b.mask]
	if gap := s.ts - b.playTs; gap > 0 && gap <= b.ms(b.cfg.MaxDelayMs) {
		// Timestamp gap with contiguous sequence numbers (DTX): fill it. A
		// larger step is a sender clock jump, resynchronised below.
		b.playTs += b.frame
		return b.conceal(pcm), nil
	}
	b.playTs = s.ts // resynchronise if the sender's clock stepped
	err := b.dec.DecodeFrame(b.payload(b.nextExt), pcm)
	s.used = false
	b.nextExt++
	b.playTs += b.frame
	if err != nil {
		b.stats.Corrupt++
		return b.conceal(pcm), nil
	}
	b.concealRun = 0
	b.stats.Decoded++
	if b.shrinkWindow > 0 {
		b.shrink(span, pcm)
	}
	return Decoded, nil
}

// shrink runs after a frame was decoded into pcm with span buffered at the
// pull. When every pull of a window had at least one frame more than the
// target, the next quiet frame (or, after maxPendingPulls, the next frame)
// is skipped: pcm is replaced by the frame after it, decoded in its place.
func (b *Buffer) shrink(span int64, pcm []int16) {
	quiet := b.quiet(pcm)
	b.minSpan = min(b.minSpan, span)
	b.windowPulls++
	if b.shrinkPending == 0 && b.windowPulls >= b.shrinkWindow {
		if b.minSpan >= b.target+b.frame {
			b.shrinkPending = 1
		}
		b.minSpan, b.windowPulls = 1<<62, 0
	}
	if b.shrinkPending == 0 {
		return
	}
	if span < b.target+b.frame {
		b.shrinkPending = 0 // the surplus is gone (jitter grew, a burst ended)
		return
	}
	b.shrinkPending++
	if !quiet && b.shrinkPending <= maxPendingPulls {
		return
	}
	// Skip only onto the next contiguous packet; anything else (a gap, DTX)
	// waits for the next pull.
	if !b.present(b.nextExt) || b.slots[b.nextExt&b.mask].ts != b.playTs {
		return
	}
	s := &b.slots[b.nextExt&b.mask]
	if b.dec.DecodeFrame(b.payload(b.nextExt), pcm) != nil {
		return // pcm may be damaged, but the frame due was decoded: conceal next time
	}
	s.used = false
	b.nextExt++
	b.playTs += b.frame
	b.stats.Skipped++
	b.shrinkPending = 0
	b.quiet(pcm)
}

// quiet tracks the floor of the decoded frames' energy and reports whether
// pcm is within 6 dB of it. Energies stay linear (sum of squares, +1 so
// digital silence has a floor to rise from): no logarithm per frame.
func (b *Buffer) quiet(pcm []int16) bool {
	// Every 4th sample: an unbiased energy estimate at a quarter of the cost.
	var acc int64
	for i := 0; i < len(pcm); i += 4 {
		acc += int64(pcm[i]) * int64(pcm[i])
	}
	e := float32(acc) + 1
	if b.stats.Decoded <= 1 || e < b.floorE {
		b.floorE = e
	} else {
		b.floorE *= floorRise
	}
	return e <= b.floorE*quietRatio
}

func (b *Buffer) underrun(pcm []int16) (FrameKind, error) {
	return b.conceal(pcm), nil
}

// conceal runs PLC for at most MaxConcealFrames in a row, then plays silence.
func (b *Buffer) conceal(pcm []int16) FrameKind {
	if b.concealRun < b.cfg.MaxConcealFrames && b.stats.Decoded+b.stats.Recovered > 0 {
		b.concealRun++
		if b.dec.ConcealFrame(pcm) == nil {
			b.stats.Concealed++
			return Concealed
		}
	}
	clear(pcm)
	return Silence
}
