package codec

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hraban/opus"

	"github.com/veraneural/vera-gateway/audio"
)

var (
	// ErrConfig is returned for an invalid Config.
	ErrConfig = errors.New("codec: invalid config")
	// ErrCorrupt is returned when libopus rejects a packet (corrupt, truncated or
	// of an unsupported duration); the decoder state stays usable.
	ErrCorrupt = errors.New("codec: corrupt packet")
	// ErrEmpty is returned for an empty packet.
	ErrEmpty = errors.New("codec: empty packet")
	// ErrTooLarge is returned for a packet larger than MaxPacketBytes.
	ErrTooLarge = errors.New("codec: packet too large")
	// ErrBufferSize is returned when a pcm buffer does not hold exactly the
	// samples the operation needs.
	ErrBufferSize = errors.New("codec: wrong pcm buffer size")
)

// MaxPacketBytes bounds an accepted Opus packet (RFC 6716 allows at most
// 1275 bytes per frame and 120 ms per packet; 1500 covers any one datagram).
const MaxPacketBytes = 1500

// FrameMs is the frame duration this package decodes and encodes.
const FrameMs = audio.FrameMs

// Config configures a stream's codec.
type Config struct {
	// DecodeRate is the decoder output rate: audio.SampleRate (internal) or
	// audio.OpusRate.
	DecodeRate int `yaml:"decode_rate"`
	// EncodeRate is the encoder input rate: audio.OpusRate (default) or
	// audio.SampleRate.
	EncodeRate int `yaml:"encode_rate"`
	// Bitrate in bit/s (6000..510000).
	Bitrate int `yaml:"bitrate"`
	// Complexity 0..10; 5 costs about half of 10 on speech.
	Complexity int `yaml:"complexity"`
	// FEC enables in-band forward error correction in the encoder.
	FEC bool `yaml:"fec"`
	// PacketLossPercent is the expected loss that sizes FEC (0..100).
	PacketLossPercent int `yaml:"packet_loss_percent"`
	// DTX enables discontinuous transmission in the encoder.
	DTX bool `yaml:"dtx"`
	// MaxBandwidth caps the encoded audio bandwidth: "narrowband", "mediumband",
	// "wideband", "superwideband" or "fullband" (wideband is plenty for speech
	// to ASR and saves ~20 % encode CPU).
	MaxBandwidth string `yaml:"max_bandwidth"`
}

// DefaultConfig returns 16 kHz decode, 48 kHz 24 kbit/s complexity 5 encode
// with FEC (10 % expected loss), no DTX, full band.
func DefaultConfig() Config {
	return Config{
		DecodeRate: audio.SampleRate, EncodeRate: audio.OpusRate, Bitrate: 24000, Complexity: 5,
		FEC: true, PacketLossPercent: 10, MaxBandwidth: "fullband",
	}
}

var bandwidths = map[string]opus.Bandwidth{
	"narrowband": opus.Narrowband, "mediumband": opus.Mediumband, "wideband": opus.Wideband,
	"superwideband": opus.SuperWideband, "fullband": opus.Fullband,
}

// Validate reports the first invalid key.
func (c Config) Validate() error {
	switch {
	case c.DecodeRate != audio.SampleRate && c.DecodeRate != audio.OpusRate:
		return fmt.Errorf("audio.codec.decode_rate: must be %d or %d, got %d: %w", audio.SampleRate, audio.OpusRate, c.DecodeRate, ErrConfig)
	case c.EncodeRate != audio.SampleRate && c.EncodeRate != audio.OpusRate:
		return fmt.Errorf("audio.codec.encode_rate: must be %d or %d, got %d: %w", audio.SampleRate, audio.OpusRate, c.EncodeRate, ErrConfig)
	case c.Bitrate < 6000 || c.Bitrate > 510000:
		return fmt.Errorf("audio.codec.bitrate: must be in [6000,510000], got %d: %w", c.Bitrate, ErrConfig)
	case c.Complexity < 0 || c.Complexity > 10:
		return fmt.Errorf("audio.codec.complexity: must be in [0,10], got %d: %w", c.Complexity, ErrConfig)
	case c.PacketLossPercent < 0 || c.PacketLossPercent > 100:
		return fmt.Errorf("audio.codec.packet_loss_percent: must be in [0,100], got %d: %w", c.PacketLossPercent, ErrConfig)
	}
	if _, ok := bandwidths[c.MaxBandwidth]; !ok {
		return fmt.Errorf("audio.codec.max_bandwidth: must be one of narrowband|mediumband|wideband|superwideband|fullband, got %q: %w", c.MaxBandwidth, ErrConfig)
	}
	return nil
}

// Decoder decodes one stream's Opus packets to mono int16 at its rate.
type Decoder struct {
	dec     *opus.Decoder
	rate    int
	frame   int     // samples per 20 ms at rate
	scratch []int16 // 120 ms at rate, for packets longer than one frame
}

// NewDecoder returns a mono decoder whose output rate is cfg.DecodeRate.
func NewDecoder(cfg Config) (*Decoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, err := opus.NewDecoder(cfg.DecodeRate, 1)
	if err != nil {
		return nil, fmt.Errorf("codec: new decoder: %w", err)
	}
	return &Decoder{dec: d, rate: cfg.DecodeRate, frame: cfg.DecodeRate * FrameMs / 1000,
		scratch: make([]int16, cfg.DecodeRate*120/1000)}, nil
}

// Rate is the output sample rate in Hz.
func (d *Decoder) Rate() int { return d.rate }

// FrameSamples is the number of samples in one 20 ms frame at Rate.
func (d *Decoder) FrameSamples() int { return d.frame }

func checkPacket(pkt []byte) error {
	if len(pkt) == 0 {
		return ErrEmpty
	}
	if len(pkt) > MaxPacketBytes {
		return fmt.Errorf("codec: %d bytes > %d: %w", len(pkt), MaxPacketBytes, ErrTooLarge)
	}
	return nil
}

// Decode decodes one packet into pcm and returns the samples written. pcm must
// hold the packet's duration (FrameSamples for a 20 ms packet); a packet longer
// than len(pcm) is an ErrBufferSize error.
func (d *Decoder) Decode(pkt []byte, pcm []int16) (int, error) {
	if err := checkPacket(pkt); err != nil {
		return 0, err
	}
	if len(pcm) == 0 {
		return 0, fmt.Errorf("codec: decode into empty buffer: %w", ErrBufferSize)
	}
	n, err := d.dec.Decode(pkt, pcm[:len(pcm):len(pcm)])
	if err != nil {
		var oe opus.Error
		if errors.As(err, &oe) && oe == opus.ErrBufferTooSmall {
			return 0, fmt.Errorf("codec: packet longer than %d samples: %w", len(pcm), ErrBufferSize)
		}
		return 0, fmt.Errorf("codec: decode: %v: %w", err, ErrCorrupt)
	}
	return n, nil
}

// DecodeFrame decodes a packet that must be exactly one 20 ms frame into pcm
// (len FrameSamples). Packets of another duration return ErrCorrupt.
func (d *Decoder) DecodeFrame(pkt []byte, pcm []int16) error {
	if len(pcm) != d.frame {
		return fmt.Errorf("codec: pcm has %d samples, want %d: %w", len(pcm), d.frame, ErrBufferSize)
	}
	n, err := d.Decode(pkt, d.scratch)
	if err != nil {
		return err
	}
	if n != d.frame {
		return fmt.Errorf("codec: packet holds %d samples, want one %d ms frame (%d): %w", n, FrameMs, d.frame, ErrCorrupt)
	}
	copy(pcm, d.scratch[:n])
	return nil
}

// ConcealFrame fills pcm (len FrameSamples) by packet loss concealment.
func (d *Decoder) ConcealFrame(pcm []int16) error {
	if len(pcm) != d.frame {
		return fmt.Errorf("codec: pcm has %d samples, want %d: %w", len(pcm), d.frame, ErrBufferSize)
	}
	if err := d.dec.DecodePLC(pcm[:d.frame:d.frame]); err != nil {
		return fmt.Errorf("codec: plc: %w", err)
	}
	return nil
}

// RecoverFrame rebuilds the frame lost just before next from next's in-band
// FEC data into pcm (len FrameSamples). libopus falls back to PLC when next
// carries no FEC; HasFEC tells which will happen.
func (d *Decoder) RecoverFrame(next []byte, pcm []int16) error {
	if err := checkPacket(next); err != nil {
		return err
	}
	if len(pcm) != d.frame {
		return fmt.Errorf("codec: pcm has %d samples, want %d: %w", len(pcm), d.frame, ErrBufferSize)
	}
	if err := d.dec.DecodeFEC(next, pcm[:d.frame:d.frame]); err != nil {
		return fmt.Errorf("codec: fec: %v: %w", err, ErrCorrupt)
	}
	return nil
}

// HasFEC reports whether pkt carries in-band FEC (LBRR) data for the previous
// frame: a SILK or hybrid packet whose first frame has its LBRR flag set
// (RFC 6716 §4.2.3-4.2.4). It reads only the first few bits, allocation-free.
func HasFEC(pkt []byte) bool {
	if len(pkt) < 2 {
		return false
	}
	toc := pkt[0]
	config := toc >> 3
	if config >= 16 { // CELT-only: no LBRR
		return false
	}
	// SILK frames per packet-frame: 10 ms → 1, 20 ms → 1, 40 ms → 2, 60 ms → 3.
	silkFrames := 1 // hybrid (configs 12-15) and 10/20 ms SILK
	if config < 12 {
		switch config & 3 {
		case 2:
			silkFrames = 2
		case 3:
			silkFrames = 3
		}
	}
	var payload []byte
	switch toc & 3 {
	case 0:
		payload = pkt[1:]
	case 1: // two equal frames; first is the first half
		payload = pkt[1:]
	case 2: // two frames, first length coded
		l, n := frameLen(pkt[1:])
		if n == 0 || 1+n+l > len(pkt) {
			return false
		}
		payload = pkt[1+n : 1+n+l]
	default: // code 3: count byte, optional padding, CBR/VBR
		if len(pkt) < 3 {
			return false
		}
		ch := pkt[1]
		off := 2
		if ch&0x40 != 0 { // padding
			for off < len(pkt) {
				p := pkt[off]
				off++
				if p != 255 {
					break
				}
			}
		}
		if ch&0x80 != 0 { // VBR: first frame length coded
			l, n := frameLen(pkt[off:])
			if n == 0 {
				return false
			}
			off += n
			if off+l > len(pkt) {
				return false
			}
			payload = pkt[off : off+l]
		} else {
			payload = pkt[off:]
		}
	}
	if len(payload) == 0 {
		return false
	}
	// Range-coded header: VAD flags (silkFrames bits) then the LBRR flag, each
	// coded with probability 1/2, i.e. the top bits of the first byte.
	return payload[0]>>(7-uint(silkFrames))&1 == 1
}

func frameLen(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	if b[0] < 252 {
		return int(b[0]), 1
	}
	if len(b) < 2 {
		return 0, 0
	}
	return int(b[1])*4 + int(b[0]), 2
}

// Encoder encodes one stream's mono 20 ms frames.
type Encoder struct {
	enc   *opus.Encoder
	frame int
	buf   []byte
}

// NewEncoder returns a VOIP encoder at cfg.EncodeRate configured with the
// bitrate, complexity, FEC, DTX and bandwidth settings of cfg.
func NewEncoder(cfg Config) (*Encoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e, err := opus.NewEncoder(cfg.EncodeRate, 1, opus.AppVoIP)
	if err != nil {
		return nil, fmt.Errorf("codec: new encoder: %w", err)
	}
	steps := []struct {
		key string
		err error
	}{
		{"bitrate", e.SetBitrate(cfg.Bitrate)},
		{"complexity", e.SetComplexity(cfg.Complexity)},
		{"fec", e.SetInBandFEC(cfg.FEC)},
		{"packet_loss_percent", e.SetPacketLossPerc(cfg.PacketLossPercent)},
		{"dtx", e.SetDTX(cfg.DTX)},
		{"max_bandwidth", e.SetMaxBandwidth(bandwidths[cfg.MaxBandwidth])},
	}
	for _, s := range steps {
		if s.err != nil {
			return nil, fmt.Errorf("codec: encoder %s: %w", s.key, s.err)
		}
	}
	return &Encoder{enc: e, frame: cfg.EncodeRate * FrameMs / 1000, buf: make([]byte, MaxPacketBytes)}, nil
}

// FrameSamples is the number of input samples per 20 ms frame.
func (e *Encoder) FrameSamples() int { return e.frame }

// Encode encodes one frame (len FrameSamples) into dst and returns the packet
// length. dst should hold MaxPacketBytes. With DTX a silent frame may encode
// to 1-2 bytes, which the caller may skip sending.
func (e *Encoder) Encode(pcm []int16, dst []byte) (int, error) {
	if len(pcm) != e.frame {
		return 0, fmt.Errorf("codec: pcm has %d samples, want %d: %w", len(pcm), e.frame, ErrBufferSize)
	}
	if len(dst) == 0 {
		return 0, fmt.Errorf("codec: empty packet buffer: %w", ErrBufferSize)
	}
	n, err := e.enc.Encode(pcm, dst)
	if err != nil {
		return 0, fmt.Errorf("codec: encode: %w", err)
	}
	return n, nil
}

// EncodeAppend encodes one frame and returns dst with the packet appended
// (a convenience for callers that keep packets; allocates when dst is short).
func (e *Encoder) EncodeAppend(dst []byte, pcm []int16) ([]byte, error) {
	n, err := e.Encode(pcm, e.buf)
	if err != nil {
		return dst, err
	}
	return append(slices.Grow(dst, n), e.buf[:n]...), nil
}
