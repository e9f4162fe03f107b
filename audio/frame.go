package audio

import (
	"errors"
	"fmt"
	"math"
	"time"

	goaudio "github.com/go-audio/audio"
)

// The units of the audio path. Internal audio runs on one sample clock at
// SampleRate; the network side is on Opus's 48 kHz clock (RTP timestamps,
// Ogg granule positions), which only the jitter buffer, the codec and the
// Ogg files see.
const (
	// SampleRate is the internal sample rate in Hz.
	SampleRate = 16000
	// Frame10 is the number of samples in a 10 ms frame at SampleRate.
	Frame10 = SampleRate / 100
	// Frame20 is the number of samples in a 20 ms frame at SampleRate.
	Frame20 = SampleRate / 50
	// BitDepth is the internal sample width in bits.
	BitDepth = 16
	// FrameMs is the media frame in milliseconds: one RTP packet, one Opus
	// frame, one jitter-buffer pull.
	FrameMs = 20
	// OpusRate is Opus's clock in Hz: RTP timestamps (RFC 7587), Ogg
	// granule positions (RFC 7845) and the encoder's input on the way out.
	OpusRate = 48000
	// OpusFrame20 is one 20 ms frame on OpusRate's clock: the RTP timestamp
	// step of a packet.
	OpusFrame20 = OpusRate / 50
)

var (
	// ErrFrameSize is returned when a buffer is not the size an operation needs.
	ErrFrameSize = errors.New("audio: wrong frame size")
	// ErrFormat is returned when a go-audio buffer's format is not 16 kHz mono 16-bit.
	ErrFormat = errors.New("audio: wrong format")
)

// Format16k is the go-audio format of internal audio. Treat it as read-only.
var Format16k = &goaudio.Format{NumChannels: 1, SampleRate: SampleRate}

// SamplesPerMs returns the number of samples in ms milliseconds at rate Hz.
func SamplesPerMs(rate, ms int) int { return rate * ms / 1000 }

// SampleTime is d on the sample clock: whole samples at SampleRate,
// rounded down.
func SampleTime(d time.Duration) int64 { return int64(d * SampleRate / time.Second) }

// SampleDuration is the wall-clock length of n samples at SampleRate.
func SampleDuration(n int64) time.Duration { return time.Duration(n) * time.Second / SampleRate }

// OpusTicks is d on Opus's 48 kHz clock, rounded down (RTP arrival times
// for the jitter buffer).
func OpusTicks(d time.Duration) int64 { return int64(d * OpusRate / time.Second) }

// ToIntBuffer copies pcm into dst, reusing dst.Data when it has capacity, and
// sets dst's format to 16 kHz mono 16-bit. It allocates only when dst.Data is
// too small. dst keeps no reference to pcm.
func ToIntBuffer(dst *goaudio.IntBuffer, pcm []int16) {
	if cap(dst.Data) < len(pcm) {
		dst.Data = make([]int, len(pcm))
	}
	dst.Data = dst.Data[:len(pcm)]
	for i, s := range pcm {
		dst.Data[i] = int(s)
	}
	dst.Format = Format16k
	dst.SourceBitDepth = BitDepth
}

// FromIntBuffer copies src's samples into dst (clipping to int16) and returns
// the number copied. src must be mono 16 kHz; its bit depth must be 16 (or 0,
// meaning 16). It returns ErrFrameSize when dst is shorter than src.
func FromIntBuffer(dst []int16, src *goaudio.IntBuffer) (int, error) {
	if src == nil || src.Format == nil {
		return 0, fmt.Errorf("audio: go-audio buffer without format: %w", ErrFormat)
	}
	if src.Format.NumChannels != 1 || src.Format.SampleRate != SampleRate {
		return 0, fmt.Errorf("audio: got %d Hz %d ch, want %d Hz mono: %w",
			src.Format.SampleRate, src.Format.NumChannels, SampleRate, ErrFormat)
	}
	if src.SourceBitDepth != 0 && src.SourceBitDepth != BitDepth {
		return 0, fmt.Errorf("audio: got %d-bit, want %d-bit: %w", src.SourceBitDepth, BitDepth, ErrFormat)
	}
	if len(dst) < len(src.Data) {
		return 0, fmt.Errorf("audio: dst holds %d samples, need %d: %w", len(dst), len(src.Data), ErrFrameSize)
	}
	for i, v := range src.Data {
		dst[i] = clip16(v)
	}
	return len(src.Data), nil
}

// PowerDBFS is the mean power of pcm in dB relative to full scale (a
// full-scale square wave is 0 dBFS; digital silence is -120).
func PowerDBFS(pcm []int16) float32 {
	var e float64
	for _, v := range pcm {
		e += float64(v) * float64(v)
	}
	e /= float64(len(pcm)) * 32768 * 32768
	return float32(10 * math.Log10(e+1e-12))
}

func clip16(v int) int16 {
	if v > 32767 {
		return 32767
	}
	if v < -32768 {
		return -32768
	}
	return int16(v)
}

// Framer cuts a stream of arbitrary-length PCM chunks into fixed-size frames
// without allocating. It owns one frame of carry-over storage.
type Framer struct {
	buf []int16
	n   int
}

// NewFramer returns a Framer emitting frames of size samples (e.g. Frame10).
func NewFramer(size int) (*Framer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("audio: framer size %d: %w", size, ErrFrameSize)
	}
	return &Framer{buf: make([]int16, size)}, nil
}

// Size is the frame size in samples.
func (f *Framer) Size() int { return len(f.buf) }

// Buffered is the number of samples waiting for a full frame.
func (f *Framer) Buffered() int { return f.n }

// Write feeds pcm and calls emit for every completed frame. The frame passed
// to emit is only valid during the call (it is the Framer's own storage or a
// sub-slice of pcm). It stops at the first error emit returns.
func (f *Framer) Write(pcm []int16, emit func(frame []int16) error) error {
	size := len(f.buf)
	for len(pcm) > 0 {
		if f.n == 0 && len(pcm) >= size {
			if err := emit(pcm[:size:size]); err != nil {
				return err
			}
			pcm = pcm[size:]
			continue
		}
		c := copy(f.buf[f.n:], pcm)
		f.n += c
		pcm = pcm[c:]
		if f.n == size {
			f.n = 0
			if err := emit(f.buf); err != nil {
				return err
			}
		}
	}
	return nil
}

// Reset drops any partial frame.
func (f *Framer) Reset() { f.n = 0 }
