//go:build !noembedded

package router

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-audio/wav"

	"github.com/veraneural/vera-gateway/fixtures"
)

func embeddedRouter(t *testing.T) *Router {
	t.Helper()
	if _, err := os.Stat(DefaultConfig().Sphinx.HMM); err != nil {
		t.Skipf("pocketsphinx-en-us not installed (%v)", err)
	}
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed")
	}
	r, err := New(DefaultConfig(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func readClip(t *testing.T, name string) []int16 {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtures.RepoRoot(t), "testdata", "router", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf, err := wav.NewDecoder(f).FullPCMBuffer()
	if err != nil || buf.Format.SampleRate != 16000 {
		t.Fatalf("%s: %v", name, err)
	}
	out := make([]int16, len(buf.Data))
	for i, v := range buf.Data {
		out[i] = int16(v)
	}
	return out
}

func TestEmbeddedListenThroughRouter(t *testing.T) {
	r := embeddedRouter(t)
	if got := r.Slots()[SlotListen]; len(got) != 1 || got[0] != EmbeddedListen {
		t.Fatalf("default listen slot %q", got)
	}
	pcm := readClip(t, "goforward.16k.wav")
	ls, err := r.Listen(tctx(t), ListenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	partials := 0
	for i := 0; i < len(pcm); i += 320 {
		if err := ls.Write(pcm[i:min(i+320, len(pcm))]); err != nil {
			t.Fatal(err)
		}
		if ls.Partial() != "" {
			partials++
		}
	}
	tr, err := ls.Final(tctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tr.Text, "go forward") || tr.Model != EmbeddedListen || tr.Provider != ProviderPocketsphinx {
		t.Fatalf("transcript %+v", tr)
	}
	if partials == 0 {
		t.Fatal("no partial text during the turn")
	}
}

func TestEmbeddedSpeakThroughRouter(t *testing.T) {
	r := embeddedRouter(t)
	for _, rate := range []int{48000, 16000} {
		n, chunks := 0, 0
		res, err := r.Speak(tctx(t), SpeakRequest{Text: "Hello. I'm here to listen.", SampleRate: rate}, func(c AudioChunk) error {
			if c.Codec != CodecPCM || c.SampleRate != rate {
				t.Errorf("chunk %v at %d", c.Codec, c.SampleRate)
			}
			n += len(c.PCM)
			chunks++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		secs := float64(n) / float64(rate)
		if secs < 0.8 || secs > 5 || res.Model != EmbeddedSpeak {
			t.Fatalf("rate %d: %.2f s of audio from %s, want 0.8..5 s", rate, secs, res.Model)
		}
	}
}

func TestEmbeddedOneshotDefault(t *testing.T) {
	r := embeddedRouter(t)
	out, err := r.Oneshot(tctx(t), OneshotRequest{Assignment: SlotSnappy, Messages: []Message{{Role: RoleUser, Text: "plot a course for the shiny buttons"}}})
	if err != nil || out.Provider != ProviderCompanion || out.Text == "" {
		t.Fatalf("%+v %v", out, err)
	}
}

func TestEmbeddedKeywordSpotting(t *testing.T) {
	if _, err := os.Stat(DefaultConfig().Sphinx.HMM); err != nil {
		t.Skipf("pocketsphinx-en-us not installed (%v)", err)
	}
	clip := filepath.Join(fixtures.SharedAudioDir(t), "en_cmu_goforward.16k.wav")
	if _, err := os.Stat(clip); err != nil {
		t.Skipf("shared fixture absent (%v)", err)
	}
	kws := filepath.Join(t.TempDir(), "kws.txt")
	if err := os.WriteFile(kws, []byte("go forward /1e-20/\nhurt myself /1e-20/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Sphinx.KeyphraseFile = kws
	r, err := New(cfg, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.Open(clip)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := wav.NewDecoder(f).FullPCMBuffer()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ls, err := r.Listen(tctx(t), ListenRequest{KeywordSpotting: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	frame := make([]int16, 0, 320)
	for _, v := range buf.Data {
		frame = append(frame, int16(v))
		if len(frame) == 320 {
			ls.Write(frame)
			frame = frame[:0]
		}
	}
	tr, err := ls.Final(tctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tr.Text, "go forward") || strings.Contains(tr.Text, "hurt myself") {
		t.Fatalf("spotted %q", tr.Text)
	}
	// Without a keyphrase file, spotting is refused, naming the key.
	r2 := embeddedRouter(t)
	if _, err := r2.Listen(tctx(t), ListenRequest{KeywordSpotting: true}); err == nil || !strings.Contains(err.Error(), "keyphrase_file") {
		t.Fatalf("got %v", err)
	}
}

func TestEmbeddedListenPoolBusyMovesOn(t *testing.T) {
	if _, err := os.Stat(DefaultConfig().Sphinx.HMM); err != nil {
		t.Skipf("pocketsphinx-en-us not installed (%v)", err)
	}
	cfg := DefaultConfig()
	cfg.Sphinx.Pool = 1
	cfg.Models = []ModelConfig{{Name: "ps", Provider: ProviderPocketsphinx, TTFTMs: 500}}
	cfg.Slots = map[string][]string{SlotListen: {"ps"}}
	clk := newFakeClock()
	r, err := New(cfg, nil, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, err := r.Listen(tctx(t), ListenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	res := make(chan error, 1)
	go func() {
		_, err := r.Listen(tctx(t), ListenRequest{})
		res <- err
	}()
	clk.Advance(waitTimer(t, clk, func(d time.Duration) bool { return d == 500*time.Millisecond }))
	err = <-res
	if got := attemptSummary(err); got != "ps:ttft" || !strings.Contains(err.Error(), "no recogniser free") {
		t.Fatalf("second session with the pool busy: %v", err)
	}
	// Once the first session ends, its decoder serves the next.
	first.Close()
	again, err := r.Listen(tctx(t), ListenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
}
