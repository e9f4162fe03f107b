package jitter

import (
	"errors"
	"fmt"

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
	// ClockRate is the RTP clock rate (48000 for Opus).
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
}

// DefaultConfig returns a 60 ms adaptive target within [20, 300] ms.
func DefaultConfig() Config {
	return Config{ClockRate: 48000, TargetDelayMs: 60, MinDelayMs: 20, MaxDelayMs: 300,
		Adaptive: true, Slots: 64, MaxConcealFrames: 5}
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

	stats Stats
}

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
	b.Reset()
	return b, nil
}

// Reset forgets every packet and counter (e.g. on an SSRC change).
func (b *Buffer) Reset() {
	clear(b.slots)
	b.started, b.playing, b.haveArrival = false, false, false
	b.concealRun = 0
	b.jitter = 0
	b.target = b.ms(b.cfg.TargetDelayMs)
	b.stats = Stats{}
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
	b.started, b.playing = true, false
	b.hiExt, b.hiTs = int64(seq), int64(ts)
	b.nextExt, b.playTs = b.hiExt, b.hiTs
	b.haveArrival = false
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
	if !b.cfg.Adaptive {
		return
	}
	// One frame of packetisation plus three jitter deviations, in whole frames.
	t := b.frame + int64(3*b.jitter)
	t = (t + b.frame - 1) / b.frame * b.frame
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
	return Decoded, nil
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
