//go:build !noembedded

package sphinx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
)

func TestKeyphraseSpotting(t *testing.T) {
	cfg := DefaultConfig()
	if _, err := os.Stat(cfg.HMM); err != nil {
		t.Skipf("pocketsphinx-en-us model not installed (%v)", err)
	}
	kws := filepath.Join(t.TempDir(), "kws.txt")
	if err := os.WriteFile(kws, []byte("go forward /1e-20/\nend my life /1e-20/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Pool, cfg.KeyphraseFile = 1, kws
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	d, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(d)
	// espeak's synthetic voice is below the spotting threshold on this
	// acoustic model; spotting is checked on real speech.
	clip := filepath.Join(fixtures.SharedAudioDir(t), "en_cmu_goforward.16k.wav")
	if _, err := os.Stat(clip); err != nil {
		t.Skipf("shared fixture absent (%v)", err)
	}
	pcm := readWAV16k(t, clip)
	spot := func(search string) string {
		if err := d.Start(search); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(pcm); i += 320 {
			if err := d.Process(pcm[i:min(i+320, len(pcm))]); err != nil {
				t.Fatal(err)
			}
		}
		h, err := d.End()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := spot(SearchKeyphrase); !strings.Contains(h, "go forward") || strings.Contains(h, "end my life") {
		t.Fatalf("keyphrase search heard %q", h)
	}
	// Switching back to the language model works on the same decoder.
	if h := spot(SearchLM); !strings.Contains(h, "go forward") {
		t.Fatalf("LM search after KWS heard %q", h)
	}
	silence := make([]int16, 16000)
	if err := d.Start(SearchKeyphrase); err != nil {
		t.Fatal(err)
	}
	_ = d.Process(silence)
	if h, _ := d.End(); h != "" {
		t.Fatalf("keyphrase spotted in silence: %q", h)
	}
}
