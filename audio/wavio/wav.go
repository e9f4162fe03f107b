package wavio

import (
	"errors"
	"fmt"
	"io"
	"os"

	goaudio "github.com/go-audio/audio"
	"github.com/go-audio/wav"
)

var (
	// ErrFormat is returned when a file is valid but not the expected format.
	ErrFormat = errors.New("wavio: unexpected format")
	// ErrInvalid is returned when a file is not a readable WAV or Ogg Opus stream.
	ErrInvalid = errors.New("wavio: invalid file")
)

// ReadWAV decodes a PCM WAV stream that must be wantRate Hz, mono, 16-bit.
func ReadWAV(r io.ReadSeeker, wantRate int) ([]int16, error) {
	d := wav.NewDecoder(r)
	if !d.IsValidFile() {
		return nil, fmt.Errorf("wavio: not a PCM WAV file (want %d Hz mono 16-bit): %w", wantRate, ErrInvalid)
	}
	got := struct{ SampleRate, Channels, BitDepth int }{int(d.SampleRate), int(d.NumChans), int(d.BitDepth)}
	if d.WavAudioFormat != 1 {
		return nil, fmt.Errorf("wavio: WAV audio format %d, want 1 (integer PCM) %d Hz mono 16-bit: %w", d.WavAudioFormat, wantRate, ErrFormat)
	}
	if got.SampleRate != wantRate || got.Channels != 1 || got.BitDepth != 16 {
		return nil, fmt.Errorf("wavio: got %d Hz, %d channel(s), %d-bit; want %d Hz, 1 channel, 16-bit: %w",
			got.SampleRate, got.Channels, got.BitDepth, wantRate, ErrFormat)
	}
	buf, err := d.FullPCMBuffer()
	if err != nil {
		return nil, fmt.Errorf("wavio: read samples: %v: %w", err, ErrInvalid)
	}
	out := make([]int16, len(buf.Data))
	for i, v := range buf.Data {
		out[i] = int16(v)
	}
	return out, nil
}

// ReadWAVFile opens path and calls ReadWAV.
func ReadWAVFile(path string, wantRate int) ([]int16, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("wavio: %w", err)
	}
	defer f.Close()
	pcm, err := ReadWAV(f, wantRate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pcm, nil
}

// WriteWAV writes pcm as a rate Hz mono 16-bit PCM WAV. The writer must seek
// because the header is patched on close.
func WriteWAV(w io.WriteSeeker, rate int, pcm []int16) error {
	if rate <= 0 {
		return fmt.Errorf("wavio: sample rate %d: %w", rate, ErrFormat)
	}
	e := wav.NewEncoder(w, rate, 16, 1, 1)
	data := make([]int, len(pcm))
	for i, s := range pcm {
		data[i] = int(s)
	}
	buf := &goaudio.IntBuffer{Format: &goaudio.Format{NumChannels: 1, SampleRate: rate}, Data: data, SourceBitDepth: 16}
	if err := e.Write(buf); err != nil {
		return fmt.Errorf("wavio: write: %w", err)
	}
	if err := e.Close(); err != nil {
		return fmt.Errorf("wavio: close: %w", err)
	}
	return nil
}

// WriteWAVFile creates path and writes pcm into it.
func WriteWAVFile(path string, rate int, pcm []int16) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("wavio: %w", err)
	}
	if err := WriteWAV(f, rate, pcm); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("wavio: %w", err)
	}
	return nil
}
