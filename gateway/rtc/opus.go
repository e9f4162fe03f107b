package rtc

import (
	"errors"
	"fmt"

	"github.com/hraban/opus"
)

// PCMRate is the sample rate of PCM playout sources (the gateway's internal
// rate); PCMFrame is one 20 ms frame at that rate.
const (
	PCMRate  = 16000
	PCMFrame = 320
)

// pcmEncoder is a small adapter over hraban/opus so the codec can be swapped
// for the audio package's once it lands. Not goroutine-safe: one per Sender.
type pcmEncoder struct {
	enc *opus.Encoder
	buf []byte
}

func newPCMEncoder(bitrate, complexity int) (*pcmEncoder, error) {
	enc, err := opus.NewEncoder(PCMRate, 1, opus.AppVoIP)
	if err != nil {
		return nil, fmt.Errorf("rtc: opus encoder: %w", err)
	}
	if err := errors.Join(enc.SetBitrate(bitrate), enc.SetComplexity(complexity), enc.SetInBandFEC(true), enc.SetPacketLossPerc(5)); err != nil {
		return nil, fmt.Errorf("rtc: opus encoder settings: %w", err)
	}
	return &pcmEncoder{enc: enc, buf: make([]byte, 1500)}, nil
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
