//go:build !noembedded

package sphinx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-audio/wav"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/fixtures"
)

func TestMain(m *testing.M) {
	if os.Getenv(benchChildEnv) != "" { // BenchmarkMediaBesideDecode's worker process
		os.Exit(runDecodeChild())
	}
	goleak.VerifyTestMain(m)
}

// readWAV16k loads a 16 kHz mono 16-bit WAV.
func readWAV16k(t testing.TB, path string) []int16 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	dec := wav.NewDecoder(f)
	buf, err := dec.FullPCMBuffer()
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if buf.Format.SampleRate != 16000 || buf.Format.NumChannels != 1 {
		t.Fatalf("%s: want 16 kHz mono, got %d Hz %d ch", path, buf.Format.SampleRate, buf.Format.NumChannels)
	}
	out := make([]int16, len(buf.Data))
	for i, v := range buf.Data {
		out[i] = int16(v)
	}
	return out
}

// transcribe feeds pcm in 20 ms frames, as the voice pipeline does, and
// returns the partial hypotheses seen and the final text.
func transcribe(t testing.TB, d *Decoder, pcm []int16) (partials []string, final string) {
	t.Helper()
	if err := d.Start(SearchLM); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(pcm); i += 320 {
		if err := d.Process(pcm[i:min(i+320, len(pcm))]); err != nil {
			t.Fatal(err)
		}
		if i%3200 == 0 {
			if h := d.Hypothesis(); h != "" {
				partials = append(partials, h)
			}
		}
	}
	final, err := d.End()
	if err != nil {
		t.Fatal(err)
	}
	return partials, final
}

func newTestPool(t *testing.T, size int) *Pool {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Pool = size
	if _, err := os.Stat(cfg.HMM); err != nil {
		t.Skipf("pocketsphinx-en-us model not installed (%v): install pocketsphinx-en-us", err)
	}
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestTranscribesProjectClip(t *testing.T) {
	p := newTestPool(t, 1)
	cases := []struct {
		file string
		want []string
	}{
		{"goforward.16k.wav", []string{"go forward"}},
		{"gohome.16k.wav", []string{"would like to go"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			pcm := readWAV16k(t, filepath.Join(fixtures.RepoRoot(t), "testdata", "router", tc.file))
			d, err := p.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer p.Release(d)
			partials, final := transcribe(t, d, pcm)
			for _, w := range tc.want {
				if !strings.Contains(final, w) {
					t.Errorf("final %q lacks %q", final, w)
				}
			}
			if len(partials) == 0 {
				t.Errorf("no partial hypothesis during the utterance (final %q)", final)
			}
		})
	}
}

func TestTranscribesSharedClip(t *testing.T) {
	path := filepath.Join(fixtures.SharedAudioDir(t), "en_cmu_goforward.16k.wav")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared fixture absent (%v)", err)
	}
	p := newTestPool(t, 1)
	d, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(d)
	_, final := transcribe(t, d, readWAV16k(t, path))
	for _, w := range []string{"go", "forward", "ten", "meters"} {
		if !strings.Contains(final, w) {
			t.Errorf("final %q lacks %q", final, w)
		}
	}
}

func TestDecoderReusedAcrossUtterances(t *testing.T) {
	p := newTestPool(t, 1)
	pcm := readWAV16k(t, filepath.Join(fixtures.RepoRoot(t), "testdata", "router", "goforward.16k.wav"))
	d1, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, first := transcribe(t, d1, pcm)
	p.Release(d1)
	d2, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(d2)
	if d1 != d2 {
		t.Fatal("pool of one made a second decoder instead of reusing the first")
	}
	// The cepstral mean adapts across utterances (pocketsphinx's live CMN),
	// so the text of a repeat may differ; a reused decoder must still decode.
	if _, second := transcribe(t, d2, pcm); !strings.Contains(first, "go forward") || strings.TrimSpace(second) == "" {
		t.Errorf("utterances on a reused decoder: first %q, second %q", first, second)
	}
}

func TestPoolBoundWaitsAndHonoursContext(t *testing.T) {
	p := newTestPool(t, 1)
	d, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second acquire on a full pool: got %v, want deadline exceeded", err)
	}
	p.Release(d)
	p.Close()
	if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after close: got %v, want ErrClosed", err)
	}
}

func TestProcessOutsideUtterance(t *testing.T) {
	p := newTestPool(t, 1)
	d, _ := p.Acquire(context.Background())
	defer p.Release(d)
	if err := d.Process(make([]int16, 320)); !errors.Is(err, ErrDecoder) {
		t.Fatalf("got %v, want ErrDecoder", err)
	}
	if err := d.Start(SearchKeyphrase); !errors.Is(err, ErrNoSearch) {
		t.Fatalf("kws without keyphrase file: got %v, want ErrNoSearch", err)
	}
}

func TestValidate(t *testing.T) {
	c := DefaultConfig()
	c.Pool = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "sphinx.pool") {
		t.Fatalf("got %v", err)
	}
	c = DefaultConfig()
	c.LM = ""
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "sphinx.lm") {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkTranscribe2s(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Pool = 1
	p, err := NewPool(cfg)
	if err != nil {
		b.Skip(err)
	}
	defer p.Close()
	pcm := readWAV16k(b, filepath.Join(fixtures.RepoRoot(b), "testdata", "router", "goforward.16k.wav"))
	d, _ := p.Acquire(context.Background())
	defer p.Release(d)
	b.ReportAllocs()
	for b.Loop() {
		transcribe(b, d, pcm)
	}
}
