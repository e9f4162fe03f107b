//go:build !noembedded

package sphinx

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
)

func silence(ms int) []int16 { return make([]int16, ms*16) }

// feed gives d pcm in 20 ms frames, as the router does.
func feed(t *testing.T, d *Decoder, pcm []int16) {
	t.Helper()
	for i := 0; i < len(pcm); i += 320 {
		if err := d.Process(pcm[i:min(i+320, len(pcm))]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSettleEndsEarlyAndRestarts: a transcription decoder settles its
// utterance after Config.SettleMs of quiet following speech (the final
// passes run then, and End has nothing left to do); speech after the
// settling starts the utterance over with all of its audio, so the
// transcript holds the words before and after the pause.
func TestSettleEndsEarlyAndRestarts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SettleMs = 250
	d := oneDecoder(t, NewPool, cfg)
	root := fixtures.RepoRoot(t)
	home := readWAV16k(t, filepath.Join(root, "testdata", "voice", "gohome.16k.wav"))
	lights := readWAV16k(t, filepath.Join(root, "testdata", "voice", "lights.16k.wav"))

	if err := d.Start(SearchLM); err != nil {
		t.Fatal(err)
	}
	feed(t, d, silence(300))
	if d.st.settled {
		t.Fatal("settled on the quiet before any speech")
	}
	feed(t, d, append(append([]int16{}, home...), silence(500)...))
	if !d.st.settled {
		t.Fatal("not settled after 500 ms of quiet following speech")
	}
	text, err := d.End()
	if err != nil || !strings.Contains(text, "would like to go") {
		t.Fatalf("settled transcript %q (%v), want the words", text, err)
	}

	// A pause longer than SettleMs within the turn.
	if err := d.Start(SearchLM); err != nil {
		t.Fatal(err)
	}
	feed(t, d, append(append([]int16{}, home...), silence(400)...))
	if !d.st.settled {
		t.Fatal("not settled in the pause")
	}
	feed(t, d, append(append([]int16{}, lights...), silence(500)...))
	if d.st.settled {
		t.Fatal("still settled after speech came again (settles once per utterance)")
	}
	first := text
	text, err = d.End()
	// "please turn on the lights" is heard roughly on a decoder that heard
	// espeak before (testdata/voice/README.md): count its words.
	if err != nil || !strings.Contains(text, "like to go") || len(strings.Fields(text)) < len(strings.Fields(first))+3 {
		t.Fatalf("transcript %q (%v), want the words before and after the pause", text, err)
	}

	// Off: nothing settles.
	if err := d.Start(SearchLM); err != nil {
		t.Fatal(err)
	}
	d.st.after = 0
	feed(t, d, append(append([]int16{}, home...), silence(500)...))
	if d.st.settled {
		t.Fatal("settled with settle_ms 0")
	}
	if text, err := d.End(); err != nil || text == "" {
		t.Fatalf("transcript %q (%v)", text, err)
	}
}
