//go:build !noembedded

package sphinx

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
)

// The spotter's evaluation corpus: sentences spoken by espeak-ng at test
// time. Training material (voices and sentences) set the thresholds in
// crisis.kws; the held-out material shares neither voice nor sentence
// wording with it, and adds level, noise and reverberation changes.

// crisisTrain and crisisHeldOut are first-person crisis sentences, each
// naming one key phrase of crisis.kws in a different carrier.
var crisisTrain = []string{
	"I want to kill myself",
	"I am going to end my life",
	"I just want to die",
	"I keep thinking about suicide",
	"I do not want to live anymore",
	"I am going to take all my pills tonight",
	"sometimes I want to hurt myself",
	"I feel suicidal",
	"I want to end it all",
	"I am going to jump off the bridge",
	"I think I might kill myself tonight",
	"I would be better off dead",
	"I have no reason to live",
	"I cut myself again last night",
}

var crisisHeldOut = []string{
	"honestly I might kill myself",
	"I have decided to end my life",
	"I wanna die",
	"I have been thinking about suicide a lot",
	"I don't want to live any more",
	"I'm going to overdose tonight",
	"I keep wanting to hurt myself",
	"I'm going to hang myself",
	"I just want to end it all",
	"I will jump off the bridge tonight",
	"I'm thinking about killing myself",
	"I am better off dead",
	"I want to take my own life",
	"I've been feeling suicidal lately",
}

// benignTrain and benignHeldOut are everyday sentences, many of them near
// misses (idioms with die, kill, end, pills, jump).
var benignTrain = []string{
	"this traffic is killing me",
	"I could die laughing",
	"I'm dying to see that movie",
	"let's end the meeting early",
	"I want to live in Paris one day",
	"I need to take my pills with breakfast",
	"we jumped off the boat into the lake",
	"my phone battery died again",
	"I killed it at the gym today",
	"what time does the store open",
	"can you tell me a joke",
	"I'm feeling a bit tired today",
}

var benignHeldOut = []string{
	"this homework is killing me",
	"I'm so hungry I could die",
	"she cut the birthday cake",
	"I hurt my knee playing football",
	"the bridge was closed for repairs",
	"my plants died while I was away",
	"I want to learn to cook",
	"I'm excited about my trip to the coast",
	"that chocolate cake was to die for",
	"at the end of the day it was fine",
	"he will shoot the ball from the corner",
	"I really love my life right now",
}

// voice is one espeak-ng speaker.
type voice struct {
	name  string
	speed int
	pitch int
}

var (
	trainVoices   = []voice{{"en-us", 150, 50}, {"en-us+m3", 130, 40}, {"en-gb", 165, 55}}
	heldOutVoices = []voice{{"en-us+f3", 140, 60}, {"en-us+m7", 175, 45}, {"en-gb-x-rp+f2", 125, 70}, {"en-029", 150, 35}}
)

// condition is a sox effect chain applied after synthesis: level, noise,
// reverberation. Levels are in dBFS RMS of the speech.
type condition struct {
	name  string
	level float64 // dBFS RMS the clip is brought to
	snr   float64 // pink-noise SNR in dB; 0 = none
	verb  int     // sox reverb amount; 0 = none
}

var (
	trainConds   = []condition{{"quiet", -38, 0, 0}, {"normal", -22, 0, 0}, {"noisy", -20, 12, 0}, {"reverb", -28, 0, 60}}
	heldOutConds = []condition{{"very-quiet", -45, 0, 0}, {"loud", -10, 0, 0}, {"noisy", -26, 15, 0}, {"reverb", -24, 0, 40}}
)

// clip is one synthesised utterance.
type clip struct {
	text   string
	crisis bool
	voice  voice
	cond   condition
	pcm    []int16
}

func (c clip) String() string {
	return fmt.Sprintf("%s/%s/%q", c.voice.name, c.cond.name, c.text)
}

// needTools skips when espeak-ng or sox is missing.
func needTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (%v); the spotter corpus is synthesised with espeak-ng and sox", tool, err)
		}
	}
}

// synth speaks text with v and applies cond, returning 16 kHz mono PCM
// with 300 ms of silence either side (the voice path's prefix padding).
func synth(t testing.TB, dir, text string, v voice, cond condition) []int16 {
	t.Helper()
	raw := filepath.Join(dir, "raw.wav")
	mid := filepath.Join(dir, "mid.wav")
	out := filepath.Join(dir, "out.wav")
	if b, err := exec.Command("espeak-ng", "-v", v.name, "-s", strconv.Itoa(v.speed), "-p", strconv.Itoa(v.pitch), "-w", raw, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng %q: %v %s", text, err, b)
	}
	if b, err := exec.Command("sox", raw, "-r", "16000", "-c", "1", "-b", "16", mid, "pad", "0.3", "0.3").CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, b)
	}
	pcm := readWAV16k(t, mid)
	if cond.verb > 0 {
		if b, err := exec.Command("sox", mid, out, "reverb", strconv.Itoa(cond.verb)).CombinedOutput(); err != nil {
			t.Fatalf("sox reverb: %v %s", err, b)
		}
		pcm = readWAV16k(t, out)
	}
	pcm = setLevel(pcm, cond.level)
	if cond.snr > 0 {
		addPinkNoise(pcm, cond.level-cond.snr, int64(len(text)))
	}
	return pcm
}

// corpus builds the clips of texts × voices × conds.
func corpus(t testing.TB, texts []string, crisis bool, voices []voice, conds []condition) []clip {
	t.Helper()
	dir := t.TempDir()
	var out []clip
	for _, v := range voices {
		for _, c := range conds {
			for _, s := range texts {
				out = append(out, clip{text: s, crisis: crisis, voice: v, cond: c, pcm: synth(t, dir, s, v, c)})
			}
		}
	}
	return out
}

// sharedSpeech loads the English real-speech fixtures from
// ../shared/fixtures/audio (none when absent).
func sharedSpeech(t testing.TB) []clip {
	t.Helper()
	dir, _ := fixtures.LookupSharedAudioDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "en_*.16k.wav"))
	var out []clip
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".16k.wav")
		out = append(out, clip{text: name, voice: voice{name: "real"}, cond: condition{name: "as-recorded"}, pcm: readWAV16k(t, f)})
	}
	return out
}
