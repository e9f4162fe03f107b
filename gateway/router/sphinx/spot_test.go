//go:build !noembedded

package sphinx

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// spotClips runs a spotter from cfg over each clip in 20 ms frames.
func spotClips(t testing.TB, cfg Config, clips []clip) [][]Spot {
	t.Helper()
	p, err := NewSpotPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	d, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(d)
	out := make([][]Spot, len(clips))
	for i, c := range clips {
		if err := d.Start(SearchSpot); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < len(c.pcm); j += 320 {
			if err := d.Process(c.pcm[j:min(j+320, len(c.pcm))]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.End(); err != nil {
			t.Fatal(err)
		}
		out[i] = d.Spots()
	}
	return out
}

// TestSpotTune prints, for a floor threshold, each phrase's best detection
// score on training crisis and benign clips: the data crisis.kws's
// thresholds were chosen from. Run with VERA_SPOT_TUNE=1 -v.
func TestSpotTune(t *testing.T) {
	if os.Getenv("VERA_SPOT_TUNE") == "" {
		t.Skip("tuning report; set VERA_SPOT_TUNE=1")
	}
	needTools(t)
	cfg := DefaultConfig()
	cfg.Pool = 1
	floor := CrisisKeyphrases()
	for i := range floor {
		floor[i].MinScore = math.MinInt32
	}
	cfg.Spot.Keyphrases = floor
	if v := os.Getenv("VERA_SPOT_PLP"); v != "" {
		fmt.Sscan(v, &cfg.Spot.PhoneLoop)
	}
	set := os.Getenv("VERA_SPOT_SET")
	var pos, neg []clip
	if set == "heldout" {
		pos = corpus(t, crisisHeldOut, true, heldOutVoices, heldOutConds)
		neg = append(corpus(t, benignHeldOut, false, heldOutVoices, heldOutConds), sharedSpeech(t)...)
	} else {
		pos = corpus(t, crisisTrain, true, trainVoices, trainConds)
		neg = corpus(t, benignTrain, false, trainVoices, trainConds)
	}
	all := append(append([]clip{}, pos...), neg...)
	start := time.Now()
	spots := spotClips(t, cfg, all)
	var n int
	for _, c := range all {
		n += len(c.pcm)
	}
	t.Logf("decode %v for %.1f s of audio", time.Since(start), float64(n)/16000)
	for i, c := range all {
		best := map[string]int32{}
		for _, s := range spots[i] {
			sc := s.Score
			if os.Getenv("VERA_SPOT_NORM") != "" {
				sc = int32(100 * s.Score / int32(max(1, s.EndFrame-s.StartFrame+1)))
			}
			if v, ok := best[s.Phrase]; !ok || sc > v {
				best[s.Phrase] = sc
			}
		}
		var parts []string
		for p, v := range best {
			parts = append(parts, fmt.Sprintf("%s=%d", strings.TrimSpace(p), v))
		}
		sort.Strings(parts)
		t.Logf("SPOT crisis=%v %s :: %s", c.crisis, c, strings.Join(parts, " "))
	}
}

// BenchmarkSpotter measures the spotter's decoding time (one thread) per second of audio (the
// turn fed in 20 ms frames, as the router does), against the transcription
// decoder on the same audio.
func BenchmarkSpotter(b *testing.B) {
	needTools(b)
	pcm := synth(b, b.TempDir(), "I have been thinking about suicide a lot lately", voice{"en-us+m3", 150, 50}, condition{level: -26})
	run := func(b *testing.B, p *Pool, search string) {
		d, err := p.Acquire(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		defer p.Release(d)
		b.ReportAllocs()
		var secs float64
		for b.Loop() {
			if err := d.Start(search); err != nil {
				b.Fatal(err)
			}
			for j := 0; j < len(pcm); j += 320 {
				if err := d.Process(pcm[j:min(j+320, len(pcm))]); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := d.End(); err != nil {
				b.Fatal(err)
			}
			secs += float64(len(pcm)) / 16000
		}
		b.ReportMetric(b.Elapsed().Seconds()*1000/secs, "ms/audio-s")
	}
	cfg := DefaultConfig()
	cfg.Pool = 1
	b.Run("spot", func(b *testing.B) {
		p, err := NewSpotPool(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		run(b, p, SearchSpot)
	})
	b.Run("transcribe", func(b *testing.B) {
		p, err := NewPool(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		run(b, p, SearchLM)
	})
}
