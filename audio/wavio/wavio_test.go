package wavio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWAVRoundTripAndFormatErrors(t *testing.T) {
	dir := t.TempDir()
	pcm := []int16{0, 100, -100, 32767, -32768}
	p := filepath.Join(dir, "a.wav")
	if err := WriteWAVFile(p, 16000, pcm); err != nil {
		t.Fatal(err)
	}
	got, err := ReadWAVFile(p, 16000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(pcm) {
		t.Fatalf("len %d", len(got))
	}
	for i := range pcm {
		if got[i] != pcm[i] {
			t.Fatalf("sample %d", i)
		}
	}
	_, err = ReadWAVFile(p, 48000)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "want 48000 Hz, 1 channel, 16-bit") || !strings.Contains(err.Error(), "got 16000 Hz") {
		t.Fatalf("rate mismatch error: %v", err)
	}
	if err := WriteWAVFile(p, 0, pcm); !errors.Is(err, ErrFormat) {
		t.Fatalf("rate 0: %v", err)
	}
	bad := filepath.Join(dir, "bad.wav")
	os.WriteFile(bad, []byte("not a wav file at all, no RIFF header here"), 0o644)
	if _, err := ReadWAVFile(bad, 16000); !errors.Is(err, ErrInvalid) {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := ReadWAVFile(filepath.Join(dir, "missing.wav"), 16000); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestWAVWrongChannelsAndDepth(t *testing.T) {
	// Hand-made 44-byte headers: stereo 16-bit and mono 24-bit at 16 kHz.
	mk := func(ch, bits uint16) []byte {
		le16 := func(v uint16) []byte { return []byte{byte(v), byte(v >> 8)} }
		le32 := func(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
		data := make([]byte, 64)
		var b bytes.Buffer
		b.WriteString("RIFF")
		b.Write(le32(uint32(36 + len(data))))
		b.WriteString("WAVEfmt ")
		b.Write(le32(16))
		b.Write(le16(1))
		b.Write(le16(ch))
		b.Write(le32(16000))
		b.Write(le32(16000 * uint32(ch) * uint32(bits/8)))
		b.Write(le16(ch * bits / 8))
		b.Write(le16(bits))
		b.WriteString("data")
		b.Write(le32(uint32(len(data))))
		b.Write(data)
		return b.Bytes()
	}
	for _, c := range []struct {
		ch, bits uint16
		want     string
	}{{2, 16, "2 channel(s)"}, {1, 24, "24-bit"}} {
		_, err := ReadWAV(bytes.NewReader(mk(c.ch, c.bits)), 16000)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "want 16000 Hz, 1 channel, 16-bit") {
			t.Errorf("%d ch %d bit: %v", c.ch, c.bits, err)
		}
	}
	if _, err := ReadWAV(bytes.NewReader(mk(1, 16)), 16000); err != nil {
		t.Errorf("valid hand-made header rejected: %v", err)
	}
}
