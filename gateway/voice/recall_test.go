package voice

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
	"github.com/veraneural/vera-gateway/safety"
)

// Crisis key-phrase recall (issue 6 item 4): spoken crisis sentences are
// synthesised at test time with espeak-ng, listened to as the voice path
// does (router listen session: transcript + audio spotter), and assessed by
// the local detector on what the session gives it (transcript plus spotted
// phrases). The spotter's thresholds were tuned on other voices and other
// sentences (gateway/router/sphinx corpus_test.go); these are held out.

// crisisPhrases are held-out spoken crisis sentences.
var crisisPhrases = []string{
	"I want to kill myself",
	"I am going to end my life",
	"I want to die",
	"I am thinking about suicide",
	"I do not want to live anymore",
	"I am going to take all my pills tonight",
	"I want to commit suicide",
	"I am going to jump off the bridge",
	"I might hurt myself tonight",
	"I feel like ending it all",
}

// benignPhrases are held-out everyday sentences, near misses among them.
var benignPhrases = []string{
	"this traffic is killing me",
	"I could die laughing",
	"my feet are killing me after that hike",
	"we should end the call soon",
	"I take my vitamins every morning",
	"the kids jumped off the swing",
	"what a lovely day for a walk",
	"remind me to buy bread",
}

// espeakVoices are held-out synthetic voices (none is a tuning voice), each
// at a different level: the spotter's gain control must make level moot.
var espeakVoices = []struct {
	args  []string
	level string // sox vol factor
}{
	{[]string{"-v", "en-us", "-s", "120", "-p", "35"}, "0.15"},
	{[]string{"-v", "en-us+f4", "-s", "145"}, "0.05"},
	{[]string{"-v", "en-gb-scotland+m2", "-s", "135"}, "0.8"},
	{[]string{"-v", "en-us+m5", "-s", "160", "-p", "60"}, "0.3"},
}

// needSpeechTools skips when espeak-ng or sox is missing.
func needSpeechTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (%v); crisis speech is synthesised with espeak-ng and sox", tool, err)
		}
	}
}

// speakFixture makes a 16 kHz clip of text with espeak-ng and sox at the
// given sox volume, as testdata/voice/README.md describes.
func speakFixture(b testing.TB, dir, text string, voice []string, vol string) *fixtures.Audio {
	b.Helper()
	raw := filepath.Join(dir, "raw.wav")
	out := filepath.Join(dir, "clip.16k.wav")
	args := append(append([]string{}, voice...), "-w", raw, text)
	if o, err := exec.Command("espeak-ng", args...).CombinedOutput(); err != nil {
		b.Fatalf("espeak-ng: %v %s", err, o)
	}
	if o, err := exec.Command("sox", raw, "-r", "16000", "-c", "1", "-b", "16", out, "vol", vol, "pad", "0.3", "0.3").CombinedOutput(); err != nil {
		b.Fatalf("sox: %v %s", err, o)
	}
	return loadWAV(b, out)
}

// listenTurn plays a as one turn in 20 ms frames and returns the transcript.
func listenTurn(t testing.TB, r *router.Router, a *fixtures.Audio) router.Transcript {
	t.Helper()
	ls, err := r.Listen(context.Background(), router.ListenRequest{Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	for i := 0; i+320 <= len(a.Samples); i += 320 {
		if err := ls.Write(a.Samples[i : i+320]); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := ls.Final(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// assessed is what the session's local detector sees for a voice turn:
// the transcript and the spotted phrases (session.SubmitVoiceTurn).
func assessed(tr router.Transcript) string {
	if len(tr.Spotted) == 0 {
		return tr.Text
	}
	return tr.Text + ". " + strings.Join(tr.Spotted, ". ")
}

// TestCrisisListReachesDetector: every phrase the spotter can report makes
// the local detector show resources on its own, so a spotted phrase is
// never lost between the spotter and the card.
func TestCrisisListReachesDetector(t *testing.T) {
	_, local := getShared(t)
	ks := sphinx.CrisisKeyphrases()
	if len(ks) < 10 {
		t.Fatalf("built-in crisis list has %d phrases", len(ks))
	}
	for _, k := range ks {
		a := local.Assess(nil, "okay. "+k.Phrase, "US")
		if !a.DisplayRequired || a.Level < safety.LevelElevated {
			t.Errorf("spotted %q alone gives level %v display %v", k.Phrase, a.Level, a.DisplayRequired)
		}
	}
}

// TestSpotterHearsCrisisSpeech: a clearly spoken (synthetic) crisis
// sentence in a voice the spotter was not tuned on, at a quiet level,
// reaches the detector as crisis through the listen session; a held-out
// everyday sentence does not raise it, and its transcript is unchanged by
// spotting.
func TestSpotterHearsCrisisSpeech(t *testing.T) {
	needSpeechTools(t)
	r, local := getShared(t)
	dir := t.TempDir()
	voice := []string{"-v", "en-us+m5", "-s", "160", "-p", "60"}
	// Quiet (about −45 dBFS) and loud: the spotter's gain control makes
	// the level moot.
	for _, vol := range []string{"0.05", "0.8"} {
		tr := listenTurn(t, r, speakFixture(t, dir, "I want to kill myself", voice, vol))
		if len(tr.Spotted) == 0 {
			t.Errorf("vol %s: spotted %q in a crisis sentence (transcript %q)", vol, tr.Spotted, tr.Text)
		}
		if a := local.Assess(nil, assessed(tr), "US"); a.Level != safety.LevelCrisis {
			t.Errorf("vol %s: crisis sentence assessed %v from %q", vol, a.Level, assessed(tr))
		}
	}
	tr := listenTurn(t, r, speakFixture(t, dir, "what a lovely day for a walk", voice, "0.1"))
	if len(tr.Spotted) != 0 {
		t.Errorf("spotted %q in an everyday sentence (transcript %q)", tr.Spotted, tr.Text)
	}
	if strings.Contains(tr.Text, ".") {
		t.Errorf("transcript %q carries spotter text", tr.Text)
	}
}

// BenchmarkCrisisRecall measures, on held-out voices and sentences, how
// often a spoken crisis sentence makes the local detector answer crisis
// from the transcript alone and from transcript + spotted phrases (what the
// voice session assesses), and how often everyday sentences raise it
// (false alarms, level elevated or above). Run with -benchtime 1x -v.
func BenchmarkCrisisRecall(b *testing.B) {
	needSpeechTools(b)
	r, local := getShared(b)
	dir := b.TempDir()
	type clip struct {
		text   string
		crisis bool
		a      *fixtures.Audio
	}
	var clips []clip
	var secs float64
	for _, v := range espeakVoices {
		for _, p := range crisisPhrases {
			clips = append(clips, clip{p, true, speakFixture(b, dir, p, v.args, v.level)})
		}
		for _, p := range benignPhrases {
			clips = append(clips, clip{p, false, speakFixture(b, dir, p, v.args, v.level)})
		}
	}
	for _, c := range clips {
		secs += float64(len(c.a.Samples)) / 16000
	}
	var pos, neg, textHit, bothHit, spotOnly, textFA, bothFA, spotFA int
	for b.Loop() {
		pos, neg, textHit, bothHit, spotOnly, textFA, bothFA, spotFA = 0, 0, 0, 0, 0, 0, 0, 0
		for _, c := range clips {
			tr := listenTurn(b, r, c.a)
			tLevel := local.Assess(nil, tr.Text, "US").Level
			bLevel := local.Assess(nil, assessed(tr), "US").Level
			if c.crisis {
				pos++
				if tLevel == safety.LevelCrisis {
					textHit++
				}
				if bLevel == safety.LevelCrisis {
					bothHit++
				}
				if len(tr.Spotted) > 0 {
					spotOnly++
				}
			} else {
				neg++
				if tLevel >= safety.LevelElevated {
					textFA++
				}
				if bLevel >= safety.LevelElevated {
					bothFA++
				}
				if len(tr.Spotted) > 0 {
					spotFA++
				}
			}
			b.Log(fmt.Sprintf("crisis=%v %q → transcript %q spotted %q", c.crisis, c.text, tr.Text, tr.Spotted))
		}
	}
	b.ReportMetric(100*float64(textHit)/float64(pos), "transcript-recall-%")
	b.ReportMetric(100*float64(bothHit)/float64(pos), "with-spotter-recall-%")
	b.ReportMetric(100*float64(spotOnly)/float64(pos), "spotter-hit-%")
	b.ReportMetric(100*float64(textFA)/float64(neg), "transcript-FA-%")
	b.ReportMetric(100*float64(bothFA)/float64(neg), "with-spotter-FA-%")
	b.ReportMetric(100*float64(spotFA)/float64(neg), "spotter-FA-%")
	b.ReportMetric(secs, "audio-s")
}
