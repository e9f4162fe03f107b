package voice

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/safety"
)

// crisisPhrases are spoken crisis utterances (not the committed fixtures'
// wording) for the key-phrase recall measurement of issue 6 item 4.
var crisisPhrases = []string{
	"I want to kill myself",
	"I am going to end my life",
	"I want to die",
	"I am thinking about suicide",
	"I do not want to live anymore",
	"I am going to take all my pills tonight",
	"I want to commit suicide",
	"I am going to jump off the bridge",
}

// espeakVoices are the synthetic voices the phrases are spoken in.
var espeakVoices = [][]string{{"-v", "en-us", "-s", "120", "-p", "35"}, {"-v", "en-us", "-s", "150"}, {"-v", "en-us+m3", "-s", "130"}}

// speakFixture makes a 16 kHz clip of text with espeak-ng and sox, as
// testdata/voice/README.md describes.
func speakFixture(b testing.TB, dir, text string, voice []string) *fixtures.Audio {
	b.Helper()
	raw := filepath.Join(dir, "raw.wav")
	out := filepath.Join(dir, "clip.16k.wav")
	args := append(append([]string{}, voice...), "-w", raw, text)
	if err := exec.Command("espeak-ng", args...).Run(); err != nil {
		b.Skipf("espeak-ng unavailable: %v", err)
	}
	if err := exec.Command("sox", raw, "-r", "16000", "-c", "1", "-b", "16", out, "vol", "0.15", "pad", "0.3", "0.3").Run(); err != nil {
		b.Skipf("sox unavailable: %v", err)
	}
	return loadWAV(b, out)
}

// BenchmarkCrisisRecall measures how often a spoken crisis utterance raises
// the local detector's crisis verdict through the open transcription the
// voice path uses today (listen → transcript → detector), and how often the
// router's keyword-spotting search (router.sphinx.keyphrase_file) hears a
// crisis key phrase in the same audio. Run with -benchtime 1x.
func BenchmarkCrisisRecall(b *testing.B) {
	r, local := getShared(b)
	dir := b.TempDir()
	kws := filepath.Join(dir, "crisis.kws")
	keys := "kill myself /1e-20/\nend my life /1e-20/\nwant to die /1e-20/\nsuicide /1e-20/\nwant to live /1e-20/\ntake all my pills /1e-20/\njump off /1e-20/\n"
	if err := writeFile(kws, keys); err != nil {
		b.Fatal(err)
	}
	kcfg := router.DefaultConfig()
	kcfg.Sphinx.KeyphraseFile = kws
	kr, err := router.New(kcfg, noEnv, router.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer kr.Close()
	listen := func(rt *router.Router, a *fixtures.Audio, kw bool) string {
		ls, err := rt.Listen(context.Background(), router.ListenRequest{Language: "en", KeywordSpotting: kw})
		if err != nil {
			b.Fatal(err)
		}
		defer ls.Close()
		for i := 0; i+320 <= len(a.Samples); i += 320 {
			_ = ls.Write(a.Samples[i : i+320])
		}
		tr, err := ls.Final(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		return tr.Text
	}
	var n, viaText, viaKWS, textOK int
	for b.Loop() {
		n, viaText, viaKWS, textOK = 0, 0, 0, 0
		for vi, v := range espeakVoices {
			for _, p := range crisisPhrases {
				if local.Assess(nil, strings.ToLower(p), "US").Level == safety.LevelCrisis {
					textOK++
				}
				a := speakFixture(b, dir, p, v)
				n++
				tr := listen(r, a, false)
				if local.Assess(nil, tr, "US").Level == safety.LevelCrisis {
					viaText++
				}
				if k := listen(kr, a, true); strings.TrimSpace(k) != "" {
					viaKWS++
				}
				b.Logf("voice %d %q → transcript %q", vi, p, tr)
			}
		}
	}
	b.ReportMetric(100*float64(viaText)/float64(n), "transcript-recall-%")
	b.ReportMetric(100*float64(viaKWS)/float64(n), "kws-recall-%")
	b.ReportMetric(100*float64(textOK)/float64(n), "detector-on-text-%")
}
