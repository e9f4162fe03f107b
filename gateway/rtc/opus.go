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
	enc    *codec.Encoder
	buf    []byte
	params EncoderParams
}

// EncoderParams are the settings of a Sender's Opus encoder (rtc config
// encoder_bitrate, encoder_complexity). Audio pre-encoded by EncodePCM with
// the same params is what the Sender would send for that PCM from a fresh
// encoder, so a fixed phrase can be encoded once and played with PlayOpus
// by every session.
type EncoderParams struct {
	Bitrate    int
	Complexity int
}

// EncodePCM encodes 16 kHz mono PCM into 20 ms Opus packets with a fresh
// encoder; a short last frame is padded with silence. The packets share one
// backing array and are safe to share read-only.
func EncodePCM(p EncoderParams, pcm []int16) ([][]byte, error) {
	e, err := newPCMEncoder(p.Bitrate, p.Complexity)
	if err != nil {
		return nil, err
	}
	n := (len(pcm) + PCMFrame - 1) / PCMFrame
	lens := make([]int, n)
	var all []byte
	frame := make([]int16, PCMFrame)
	for i := range n {
		clear(frame)
		copy(frame, pcm[i*PCMFrame:])
		pkt, err := e.encode(frame)
		if err != nil {
			return nil, err
		}
		all = append(all, pkt...)
		lens[i] = len(pkt)
	}
	frames := make([][]byte, n)
	off := 0
	for i, l := range lens {
		frames[i] = all[off : off+l : off+l]
		off += l
	}
	return frames, nil
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
	return &pcmEncoder{enc: enc, buf: make([]byte, codec.MaxPacketBytes), params: EncoderParams{Bitrate: bitrate, Complexity: complexity}}, nil
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
