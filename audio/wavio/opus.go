package wavio

import (
	"errors"
	"fmt"
	"time"

	"github.com/veraneural/vera-gateway/audio"
)

// ErrOpusPacket is returned for a packet whose TOC byte gives no valid
// duration: empty, a code-3 packet without a frame count, or longer than
// 120 ms (RFC 6716 §3.2.5).
var ErrOpusPacket = errors.New("wavio: not an Opus packet")

// maxOpusSamples is 120 ms at audio.OpusRate, the longest Opus packet.
const maxOpusSamples = audio.OpusRate * 120 / 1000

// OpusSamples is the duration of one Opus packet in samples at
// audio.OpusRate (the unit of RTP timestamps and Ogg granule positions),
// read from its TOC byte and, for code 3, its frame count (RFC 6716 §3.1).
// It reads at most two bytes and allocates nothing.
func OpusSamples(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, fmt.Errorf("%w: empty", ErrOpusPacket)
	}
	cfg := int(p[0] >> 3)
	var frame int // in 2.5 ms units
	switch {
	case cfg < 12: // SILK 10, 20, 40, 60 ms
		frame = [...]int{4, 8, 16, 24}[cfg%4]
	case cfg < 16: // hybrid 10, 20 ms
		frame = [...]int{4, 8}[cfg%2]
	default: // CELT 2.5, 5, 10, 20 ms
		frame = [...]int{1, 2, 4, 8}[cfg%4]
	}
	frame *= audio.OpusRate / 400
	n := 1
	switch p[0] & 3 {
	case 1, 2:
		n = 2
	case 3:
		if len(p) < 2 || p[1]&0x3f == 0 {
			return 0, fmt.Errorf("%w: code 3 without a frame count", ErrOpusPacket)
		}
		n = int(p[1] & 0x3f)
	}
	if d := n * frame; d <= maxOpusSamples {
		return d, nil
	}
	return 0, fmt.Errorf("%w: longer than 120 ms", ErrOpusPacket)
}

// OpusDuration is OpusSamples as a duration.
func OpusDuration(p []byte) (time.Duration, error) {
	n, err := OpusSamples(p)
	if err != nil {
		return 0, err
	}
	return time.Duration(n) * time.Second / audio.OpusRate, nil
}
