//go:build !noembedded

package sphinx

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// speechClips is the real recorded English speech of ../shared/fixtures/audio
// plus the repository's own clips, 16 kHz mono.
func speechClips(t testing.TB) [][]int16 {
	t.Helper()
	root := fixtures.RepoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "testdata", "voice", "*.16k.wav"))
	more, _ := filepath.Glob(filepath.Join(root, "testdata", "router", "*.16k.wav"))
	files = append(files, more...)
	if dir, ok := fixtures.LookupSharedAudioDir(t); ok {
		shared, _ := filepath.Glob(filepath.Join(dir, "en_*.16k.wav"))
		files = append(files, shared...)
	}
	var out [][]int16
	for _, f := range files {
		out = append(out, readWAV16k(t, f))
	}
	return out
}

// BenchmarkDecodeCPU measures what one real-time stream costs a decoder in
// CPU (thread CPU time, not wall time: the shared machine's load does not
// inflate it), per second of audio, over every speech clip fed in 20 ms
// frames with a partial hypothesis every 200 ms, as the router does. The
// ratio is the share of one core a live turn's recogniser takes.
func BenchmarkDecodeCPU(b *testing.B) {
	clips := speechClips(b)
	cfg := DefaultConfig()
	cfg.Pool = 1
	for _, kind := range []string{"transcribe", "spot"} {
		b.Run(kind, func(b *testing.B) {
			mk, search := NewPool, SearchLM
			if kind == "spot" {
				mk, search = NewSpotPool, SearchSpot
			}
			p, err := mk(cfg)
			if err != nil {
				b.Skip(err)
			}
			defer p.Close()
			d, err := p.Acquire(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer p.Release(d)
			// The decoder's calls run on the pool's worker threads, not on
			// this goroutine's: the cost is the process's CPU time (nothing
			// else runs in it meanwhile), not the calling thread's.
			var audio float64
			var cpu, end time.Duration
			for b.Loop() {
				for _, pcm := range clips {
					c0 := processCPU()
					if err := d.Start(search); err != nil {
						b.Fatal(err)
					}
					for j := 0; j < len(pcm); j += 320 {
						if err := d.Process(pcm[j:min(j+320, len(pcm))]); err != nil {
							b.Fatal(err)
						}
						if kind == "transcribe" && j%3200 == 0 {
							_ = d.Hypothesis()
						}
					}
					c1 := processCPU()
					if _, err := d.End(); err != nil {
						b.Fatal(err)
					}
					c2 := processCPU()
					cpu += c2 - c0
					end += c2 - c1
					audio += float64(len(pcm)) / 16000
				}
			}
			b.ReportMetric(float64(cpu.Milliseconds())/audio, "cpu-ms/audio-s")
			b.ReportMetric(float64(end.Milliseconds())/float64(b.N*len(clips)), "end-cpu-ms/turn")
			b.ReportMetric(audio/float64(b.N*len(clips)), "audio-s/turn")
		})
	}
}

// oneDecoder builds a one-decoder pool with mk (NewPool, NewSpotPool) and
// cfg, skips the test when the engine is not there, and hands back the
// acquired decoder; pool and decoder are released when the test ends.
func oneDecoder(tb testing.TB, mk func(Config) (*Pool, error), cfg Config) *Decoder {
	tb.Helper()
	cfg.Pool = 1
	p, err := mk(cfg)
	if err != nil {
		tb.Skip(err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	d, err := p.Acquire(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Release(d) })
	return d
}
