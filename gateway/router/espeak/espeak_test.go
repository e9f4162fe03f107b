package espeak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newSynth(t testing.TB) *Synth {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed: apt-get install espeak-ng")
	}
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSpeakPlausibleLengthAndRates(t *testing.T) {
	s := newSynth(t)
	text := "Go forward ten meters. Then turn left at the corner."
	for _, rate := range []int{48000, 16000} {
		var chunks, total int
		var peak int16
		err := s.Speak(context.Background(), text, "", rate, func(pcm []int16) error {
			chunks++
			total += len(pcm)
			for _, v := range pcm {
				peak = max(peak, v, -v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// 10 words at 160 wpm is about 3.75 s of speech plus pauses; allow a
		// wide but finite band so a silent or runaway synthesis fails.
		secs := float64(total) / float64(rate)
		if secs < 2 || secs > 8 {
			t.Errorf("rate %d: %.2f s of audio for %q, want 2..8 s", rate, secs, text)
		}
		if peak < 1000 {
			t.Errorf("rate %d: peak %d: audio is near silent", rate, peak)
		}
		if chunks < 2 {
			t.Errorf("rate %d: %d chunks, want streamed output", rate, chunks)
		}
	}
}

func TestSpeakRunsOneProcessPerSentence(t *testing.T) {
	// A stand-in espeak-ng logs each invocation's text and replies with a
	// short WAV, so the test sees exactly when each sentence is synthesised.
	dir := t.TempDir()
	wavPath := filepath.Join(dir, "reply.wav")
	w := wavHeader(22050, 1)
	w = append(w, make([]byte, 2*2205)...) // 0.1 s of silence
	if err := os.WriteFile(wavPath, w, 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "log")
	script := "#!/bin/sh\ncat >> '" + logPath + "'\necho '|' >> '" + logPath + "'\ncat '" + wavPath + "'\n"
	bin := filepath.Join(dir, "espeak-ng")
	if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Binary = bin
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	calls := func() []string {
		b, _ := os.ReadFile(logPath)
		parts := strings.Split(strings.TrimSuffix(strings.TrimSpace(string(b)), "|"), "|")
		var out []string
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	var seenAtFirst []string
	n := 0
	err = s.Speak(context.Background(), "Hello there. How are you today? Fine.", "", 16000, func(pcm []int16) error {
		if seenAtFirst == nil {
			seenAtFirst = calls()
		}
		n += len(pcm)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seenAtFirst, []string{"Hello there."}) {
		t.Fatalf("at the first audio, espeak had been asked for %q; want only the first sentence", seenAtFirst)
	}
	if got := calls(); !reflect.DeepEqual(got, []string{"Hello there.", "How are you today?", "Fine."}) {
		t.Fatalf("invocations %q", got)
	}
	if n != 3*1600 {
		t.Fatalf("%d samples, want 3 x 0.1 s at 16 kHz", n)
	}
}

func longSentence() string {
	var b bytes.Buffer
	for range 30 {
		b.WriteString("and then a little more, ")
	}
	return b.String() + "until the end."
}

func TestSpeakCancel(t *testing.T) {
	s := newSynth(t)
	ctx, cancel := context.WithCancel(context.Background())
	first := true
	start := time.Now()
	err := s.Speak(ctx, longSentence()+" "+longSentence(), "", 16000, func([]int16) error {
		if first {
			first = false
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("cancel took %v (hang guard)", d)
	}
}

func TestSpeakEmpty(t *testing.T) {
	s := newSynth(t)
	if err := s.Speak(context.Background(), " ... \n ", "", 0, func([]int16) error { return nil }); !errors.Is(err, ErrEmpty) {
		t.Fatalf("got %v, want ErrEmpty", err)
	}
}

func TestSentences(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want []string
	}{
		{"Hello. How are you? Fine!", 40, []string{"Hello.", "How are you?", "Fine!"}},
		{"It costs 3.5 dollars.", 40, []string{"It costs 3.5 dollars."}},
		{"line one\nline two", 40, []string{"line one", "line two"}},
		{"  ...  ", 40, nil},
		{"aaaa, bbbb cccc dddd", 10, []string{"aaaa,", "bbbb cccc", "dddd"}},
		{"ééééééééééé", 9, []string{"éééé", "éééé", "ééé"}},
	}
	for _, tc := range cases {
		got := Sentences(tc.in, tc.max)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Sentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStreamRejectsBadWAV(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":  nil,
		"notwav": []byte("hello world, this is not a wav file"),
		"stereo": wavHeader(22050, 2),
	} {
		err := stream(bufio.NewReader(bytes.NewReader(data)), 16000, func([]int16) error { return nil })
		if !errors.Is(err, ErrOutput) {
			t.Errorf("%s: got %v, want ErrOutput", name, err)
		}
	}
}

func wavHeader(rate, channels int) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(0xffffffff))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, binary.LittleEndian, uint32(16))
	binary.Write(&b, binary.LittleEndian, uint16(1))
	binary.Write(&b, binary.LittleEndian, uint16(channels))
	binary.Write(&b, binary.LittleEndian, uint32(rate))
	binary.Write(&b, binary.LittleEndian, uint32(rate*2*channels))
	binary.Write(&b, binary.LittleEndian, uint16(2*channels))
	binary.Write(&b, binary.LittleEndian, uint16(16))
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(0xffffffff))
	return b.Bytes()
}

func FuzzSentences(f *testing.F) {
	f.Add("Hello. How are you?", 20)
	f.Add("a,b,c,d,e,f,g,h,i,j,k,l,m", 20)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = 20 + (n & 0xff)
		for _, p := range Sentences(s, n) {
			if len(p) > n {
				t.Fatalf("piece of %d bytes over limit %d", len(p), n)
			}
			if !utf8.ValidString(p) && utf8.ValidString(s) {
				t.Fatalf("piece %q splits a rune", p)
			}
		}
	})
}
