package rtc

import (
	"fmt"

	"github.com/veraneural/vera-gateway/audio/codec"
)

// PCMRate is the sample rate of PCM playout sources (the gateway's internal
// rate); PCMFrame is one 20 ms frame at that rate.
const (
	PCMRate  = 16000
	PCMFrame = 320
)

// pcmEncoder adapts the audio package's per-stream Opus encoder to the
// Sender: 16 kHz input, one packet per 20 ms frame. Not goroutine-safe: one
// per Sender, used under the Sender's lock.
type pcmEncoder struct {
	enc *codec.Encoder
	buf []byte
}

func newPCMEncoder(bitrate, complexity int) (*pcmEncoder, error) {
	cfg := codec.DefaultConfig()
	cfg.EncodeRate = PCMRate
	cfg.Bitrate = bitrate
	cfg.Complexity = complexity
	cfg.FEC = true
	cfg.PacketLossPercent = 5
	enc, err := codec.NewEncoder(cfg)
	if err != nil {
		return nil, fmt.Errorf("rtc: opus encoder: %w", err)
	}
	if enc.FrameSamples() != PCMFrame {
		return nil, fmt.Errorf("rtc: opus encoder frame is %d samples, want %d", enc.FrameSamples(), PCMFrame)
	}
	return &pcmEncoder{enc: enc, buf: make([]byte, codec.MaxPacketBytes)}, nil
}

// encode returns one Opus packet for a 320-sample frame; the slice is
// reused by the next call.
func (e *pcmEncoder) encode(pcm []int16) ([]byte, error) {
	n, err := e.enc.Encode(pcm, e.buf)
	if err != nil {
		return nil, fmt.Errorf("rtc: opus encode: %w", err)
	}
	return e.buf[:n], nil
}
