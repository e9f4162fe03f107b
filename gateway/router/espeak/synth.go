package espeak

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/audio/resample"
)

// Sentinel errors.
var (
	// ErrEmpty: nothing speakable in the text.
	ErrEmpty = errors.New("espeak: nothing to speak")
	// ErrOutput: espeak-ng wrote something that is not the expected WAV.
	ErrOutput = errors.New("espeak: unexpected output")
	// ErrRun: the espeak-ng process failed.
	ErrRun = errors.New("espeak: process failed")
)

// Synth speaks text with espeak-ng. Safe for concurrent use: each call runs
// its own processes, at most Config.Concurrent at a time.
type Synth struct {
	cfg   Config
	slots chan struct{} // one token per running espeak-ng process
}

// New validates cfg and resolves the binary.
func New(cfg Config) (*Synth, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	path, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("espeak.binary: %w", err)
	}
	cfg.Binary = path
	return &Synth{cfg: cfg, slots: make(chan struct{}, cfg.Concurrent)}, nil
}

// Speak synthesises text sentence by sentence and calls emit with PCM at
// rate Hz (0: Config.SampleRate) as soon as each piece is ready. emit owns
// nothing: the slice is reused after it returns. An error from emit stops
// synthesis and is returned. Cancelling ctx kills the running process.
func (s *Synth) Speak(ctx context.Context, text, voice string, rate int, emit func(pcm []int16) error) error {
	if rate == 0 {
		rate = s.cfg.SampleRate
	}
	if rate < 8000 || rate > 48000 {
		return fmt.Errorf("espeak: sample rate %d: must be in [8000,48000]", rate)
	}
	if voice == "" {
		voice = s.cfg.Voice
	}
	sentences := Sentences(text, s.cfg.MaxSentenceChars)
	if len(sentences) == 0 {
		return ErrEmpty
	}
	for _, sent := range sentences {
		if err := s.sentence(ctx, sent, voice, rate, emit); err != nil {
			return err
		}
	}
	return nil
}

func (s *Synth) sentence(ctx context.Context, text, voice string, rate int, emit func([]int16) error) (err error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-s.slots }()
	cmd := exec.CommandContext(ctx, s.cfg.Binary, "-v", voice, "-s", strconv.Itoa(s.cfg.WordsPerMinute), "--stdout")
	// Text goes on stdin so a sentence starting with "-" is never an option.
	cmd.Stdin = strings.NewReader(text)
	cmd.WaitDelay = time.Second
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRun, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: start %s: %v", ErrRun, s.cfg.Binary, err)
	}
	// Best effort: a process that could not be niced still runs, bounded
	// in number.
	_ = lowerPriority(cmd.Process.Pid, s.cfg.Nice)
	defer func() {
		if err != nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		werr := cmd.Wait()
		if ctx.Err() != nil {
			err = context.Cause(ctx)
			return
		}
		if err == nil && werr != nil {
			err = fmt.Errorf("%w: %v: %s", ErrRun, werr, strings.TrimSpace(stderr.String()))
		}
	}()
	return stream(bufio.NewReaderSize(io.LimitReader(out, s.cfg.MaxSentenceBytes), 16<<10), rate, emit)
}

// stream parses espeak-ng's WAV output (its header announces an unknown
// length, so data is read to EOF) and emits resampled PCM as it arrives.
func stream(r *bufio.Reader, rate int, emit func([]int16) error) error {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("%w: wav header: %v", ErrOutput, err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return fmt.Errorf("%w: not a RIFF/WAVE stream", ErrOutput)
	}
	inRate := 0
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return fmt.Errorf("%w: wav chunk: %v", ErrOutput, err)
		}
		id, size := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		if id == "data" {
			break
		}
		if size > 1<<16 {
			return fmt.Errorf("%w: wav chunk %q of %d bytes", ErrOutput, id, size)
		}
		body := make([]byte, size+size%2)
		if _, err := io.ReadFull(r, body); err != nil {
			return fmt.Errorf("%w: wav chunk %q: %v", ErrOutput, id, err)
		}
		if id == "fmt " {
			if size < 16 {
				return fmt.Errorf("%w: short fmt chunk", ErrOutput)
			}
			format, channels := binary.LittleEndian.Uint16(body[0:2]), binary.LittleEndian.Uint16(body[2:4])
			inRate = int(binary.LittleEndian.Uint32(body[4:8]))
			bits := binary.LittleEndian.Uint16(body[14:16])
			if format != 1 || channels != 1 || bits != 16 {
				return fmt.Errorf("%w: want PCM mono 16-bit, got format %d, %d channels, %d bits", ErrOutput, format, channels, bits)
			}
		}
	}
	if inRate == 0 {
		return fmt.Errorf("%w: data before fmt", ErrOutput)
	}
	rs, err := resample.New(inRate, rate)
	if err != nil {
		return err
	}
	raw := make([]byte, 8192)
	in := make([]int16, 0, 4096)
	var out []int16
	var carry []byte // at most one byte: a sample split across reads
	for {
		n, rerr := r.Read(raw)
		data := append(carry, raw[:n]...)
		whole := len(data) &^ 1
		in = in[:0]
		for i := 0; i < whole; i += 2 {
			in = append(in, int16(binary.LittleEndian.Uint16(data[i:])))
		}
		carry = append(make([]byte, 0, 1), data[whole:]...)
		out = rs.Write(out[:0], in)
		if rerr == io.EOF {
			out = rs.Flush(out)
		}
		if len(out) > 0 {
			if err := emit(out); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("%w: read: %v", ErrOutput, rerr)
		}
	}
}

// Sentences splits text into speakable pieces at sentence ends (. ! ? ;
// and line breaks), splitting pieces longer than maxChars at the last
// comma or space before the limit. Blank pieces are dropped.
func Sentences(text string, maxChars int) []string {
	var out []string
	var cur strings.Builder
	push := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		for len(s) > maxChars && maxChars > 0 {
			cut := strings.LastIndexAny(s[:maxChars], ",;:")
			if cut < maxChars/3 {
				cut = strings.LastIndexFunc(s[:maxChars], unicode.IsSpace)
			}
			if cut <= 0 {
				cut = maxChars - 1
				for cut > 0 && !utf8.RuneStart(s[cut+1]) { // never split a rune
					cut--
				}
			}
			out = append(out, strings.TrimSpace(s[:cut+1]))
			s = strings.TrimSpace(s[cut+1:])
		}
		if hasLetterOrDigit(s) {
			out = append(out, s)
		}
	}
	rs := []rune(text)
	for i, c := range rs {
		cur.WriteRune(c)
		switch c {
		case '\n':
			push()
		case '.', '!', '?', ';':
			// A sentence ends at punctuation followed by space or the end,
			// so "3.5" and "e.g." mid-word do not split.
			if i+1 == len(rs) || unicode.IsSpace(rs[i+1]) {
				push()
			}
		}
	}
	push()
	return out
}

func hasLetterOrDigit(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// limitedWriter keeps the first n bytes and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}
