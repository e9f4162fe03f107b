//go:build !noembedded

package sphinx

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
)

// Real and long benign speech for the spotter's false alarms (issue 13
// item 2). Every clip of ../shared/fixtures/audio and its benign/ folder is
// benign (read speech, meetings with overlap and room tone, other
// languages, background noise); the project's own long stretches are
// espeak-ng narration of the text below, alone and mixed with the shared
// noise recordings. Each goes through the live path's turns (liveTurns).

// narration is ordinary prose written for this corpus: a walk, a kitchen,
// a town's history, a meeting, a garden, a trip. It is read as paragraphs,
// so turns run long like an audiobook's.
var narration = []string{
	"The path left the village by the old mill and climbed slowly through the beech woods. " +
		"In the early morning the light came low between the trunks, and the ground was soft with last year's leaves. " +
		"Halfway up there was a bench where walkers rested and looked back over the roofs and the river. " +
		"From there the trail turned north along the ridge, past a stone wall that nobody remembered building.",
	"She put the kettle on and took the flour down from the top shelf. " +
		"The recipe was her grandmother's, written in pencil on a card that had gone soft at the corners. " +
		"Two cups of flour, a spoon of sugar, a pinch of salt, and butter cut into small cubes. " +
		"While the oven warmed she rolled the dough out on the table and cut it into rounds with the rim of a glass.",
	"The town grew up around a ford where the road from the coast crossed the river. " +
		"By the twelfth century there was a market every Thursday, and a charter gave the merchants the right to hold a fair each autumn. " +
		"The bridge that replaced the ford was built of timber at first and rebuilt in stone after a flood carried it away. " +
		"Most of the houses on the high street still stand on their medieval plots, narrow at the front and long at the back.",
	"The meeting started ten minutes late because the projector would not talk to the laptop. " +
		"When it finally worked, the first slide showed last quarter's numbers, which were better than anyone had expected. " +
		"The team agreed to move the launch to the second week of March and to test the new design with a few customers first. " +
		"Before they finished, someone asked who would take the notes next time, and everybody looked at the floor.",
	"By the end of June the garden was crowded with beans and tomatoes, and the courgettes had taken over the corner by the shed. " +
		"He watered everything in the evening, when the soil was still warm and the slugs had not yet come out. " +
		"The neighbours' cat liked to sleep under the rhubarb leaves and watch the birds at the feeder. " +
		"In August there was more fruit than the family could eat, so they left baskets of it by the gate for anyone passing.",
	"The train left the city a little after nine and ran along the coast for most of the morning. " +
		"Out of the window the sea was grey and flat, with a few fishing boats far out and gulls following them. " +
		"At the junction they changed to a smaller train with two carriages that stopped at every station, however small. " +
		"They reached the harbour town in time for lunch and ate fish and chips on the wall while the tide came in.",
	"Every winter the lake froze from the edges inward, and the children waited for the day the ice was thick enough to skate on. " +
		"Their father would walk out first with a long pole, tapping ahead of him and listening to the sound it made. " +
		"When he waved from the middle, they ran down the bank with their skates tied together over their shoulders. " +
		"They stayed until their fingers were numb and the sun was gone behind the hills.",
	"The library was open late on Tuesdays, and that was when the chess club met in the reading room at the back. " +
		"Most of the members were retired, but a few students came too, and one girl of eleven beat nearly everybody. " +
		"The librarian let them stay until the last game was over, as long as they put the chairs back and turned off the lights. " +
		"Afterwards some of them walked to the café on the corner and argued about the openings over hot chocolate.",
}

// narrationVoices read the narration: espeak-ng voices of several accents
// and speeds, none of the crisis corpus's training voices.
var narrationVoices = []voice{{"en-us", 165, 45}, {"en-gb-x-rp", 150, 55}, {"en-029", 155, 40},
	{"en-gb-scotland+f2", 145, 65}, {"en-us+m7", 180, 35}, {"en-gb-x-gbclan", 140, 50}}

// noiseMix is a shared background recording mixed under speech at an SNR.
type noiseMix struct {
	file string  // NAME of ../shared/fixtures/audio/NAME.16k.wav; "" none
	snr  float64 // dB below the speech's RMS
}

func (n noiseMix) String() string {
	if n.file == "" {
		return "clean"
	}
	return fmt.Sprintf("%s@%gdB", strings.TrimPrefix(n.file, "noise_"), n.snr)
}

// noiseMixes are the conditions long benign stretches are heard in.
var noiseMixes = []noiseMix{{"", 0}, {"noise_coffee_shop_babble", 15}, {"noise_coffee_shop_babble", 5},
	{"noise_city_street", 10}, {"noise_wind", 10}}

// loadNoise reads a shared noise recording, or skips when the corpus is absent.
func loadNoise(t testing.TB, name string) []int16 {
	t.Helper()
	return readWAV16k(t, filepath.Join(fixtures.SharedAudioDir(t), name+".16k.wav"))
}

// speechRMS is pcm's RMS over samples louder than −60 dBFS.
func speechRMS(pcm []int16) float64 {
	var sum float64
	var n int
	for _, s := range pcm {
		if v := float64(s); math.Abs(v) > 33 {
			sum += v * v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(sum / float64(n))
}

// mixNoise adds noise (looped from offset) at snr dB below pcm's speech
// level, returning a new slice.
func mixNoise(pcm, noise []int16, snr float64, offset int) []int16 {
	var sum float64
	for _, s := range noise {
		sum += float64(s) * float64(s)
	}
	nr := math.Sqrt(sum / float64(len(noise)))
	g := speechRMS(pcm) * math.Pow(10, -snr/20) / nr
	out := make([]int16, len(pcm))
	for i, s := range pcm {
		v := float64(s) + g*float64(noise[(i+offset)%len(noise)])
		out[i] = int16(min(max(math.Round(v), -32768), 32767))
	}
	return out
}

// realClips are every recording of ../shared/fixtures/audio and its
// benign/ folder (all benign), as recorded; none when absent.
func realClips(t testing.TB) []clip {
	t.Helper()
	dir, ok := fixtures.LookupSharedAudioDir(t)
	if !ok {
		return nil
	}
	var out []clip
	for _, pat := range []string{"*.16k.wav", "benign/*.16k.wav"} {
		files, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".16k.wav")
			out = append(out, clip{text: name, voice: voice{name: "real"}, cond: condition{name: "as-recorded"}, pcm: readWAV16k(t, f)})
		}
	}
	return out
}

// narrationClips reads each paragraph with each narration voice, in each
// noise mix, at −26 dBFS speech level (the gain control makes level moot);
// with VERA_SPOT_QUICK, half the voices in two mixes.
func narrationClips(t testing.TB) []clip {
	t.Helper()
	dir := t.TempDir()
	noise := map[string][]int16{}
	for _, m := range noiseMixes {
		if m.file != "" && noise[m.file] == nil {
			noise[m.file] = loadNoise(t, m.file)
		}
	}
	voices, mixes := narrationVoices, noiseMixes
	if os.Getenv("VERA_SPOT_QUICK") != "" {
		// Half the voices, clean and in the loudest babble.
		voices, mixes = voices[:3], []noiseMix{noiseMixes[0], noiseMixes[2]}
	}
	var out []clip
	for vi, v := range voices {
		for pi, p := range narration {
			pcm := synth(t, dir, p, v, condition{level: -26})
			for mi, m := range mixes {
				x := pcm
				if m.file != "" {
					x = mixNoise(pcm, noise[m.file], m.snr, 16000*(vi+pi+mi))
				}
				out = append(out, clip{text: fmt.Sprintf("narration%d", pi), voice: v, cond: condition{name: m.String()}, pcm: x})
			}
		}
	}
	return out
}

// crisisClips are the spotter corpus's crisis sentences (train and held
// out, each with its own voices and conditions) plus crisisNoiseClips.
func crisisClips(t testing.TB) []clip {
	t.Helper()
	out := corpus(t, crisisTrain, true, trainVoices, trainConds)
	out = append(out, corpus(t, crisisHeldOut, true, heldOutVoices, heldOutConds)...)
	return append(out, crisisNoiseClips(t)...)
}

// crisisNoiseClips are the held-out crisis sentences in the held-out
// voices, in each of the shared noise mixes (VERA_SPOT_QUICK: café babble
// at two levels).
func crisisNoiseClips(t testing.TB) []clip {
	t.Helper()
	mixes := noiseMixes[1:]
	if os.Getenv("VERA_SPOT_QUICK") != "" {
		mixes = noiseMixes[1:3] // café babble at 15 and 5 dB SNR
	}
	var out []clip
	dir := t.TempDir()
	for vi, v := range heldOutVoices {
		for si, s := range crisisHeldOut {
			pcm := synth(t, dir, s, v, condition{level: -26})
			for mi, m := range mixes {
				x := mixNoise(pcm, loadNoise(t, m.file), m.snr, 8000*(vi+si+mi))
				out = append(out, clip{text: s, crisis: true, voice: v, cond: condition{name: m.String()}, pcm: x})
			}
		}
	}
	return out
}

// TestSpotLiveTurns writes, for every turn the live path would make of a
// corpus's clips, the embedded transcript and each phrase's best score at
// the search floor, one tab-separated line a turn, to $VERA_SPOT_OUT (or
// the log): the data thresholds and the agreement gate are judged on.
// VERA_SPOT_SET is real, narration, crisis or crisis-noise (its noise
// mixes alone).
//
//	VERA_SPOT_TUNE=1 VERA_SPOT_SET=real VERA_SPOT_OUT=/tmp/real.tsv go test -tags nolibopusfile -run TestSpotLiveTurns -timeout 60m ./gateway/router/sphinx/
func TestSpotLiveTurns(t *testing.T) {
	if os.Getenv("VERA_SPOT_TUNE") == "" {
		t.Skip("tuning report; set VERA_SPOT_TUNE=1")
	}
	needTools(t)
	var clips []clip
	switch set := os.Getenv("VERA_SPOT_SET"); set {
	case "real":
		clips = realClips(t)
		if len(clips) == 0 {
			fixtures.SharedAudioDir(t)
		}
	case "narration":
		clips = narrationClips(t)
	case "crisis":
		clips = crisisClips(t)
	case "crisis-noise":
		clips = crisisNoiseClips(t)
	default:
		t.Fatalf("VERA_SPOT_SET=%q: want real, narration, crisis or crisis-noise", set)
	}
	cfg := DefaultConfig()
	cfg.Pool = 1
	floor := CrisisKeyphrases()
	for i := range floor {
		floor[i].MinScore = math.MinInt32
	}
	cfg.Spot.Keyphrases = floor
	sp, err := NewSpotPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	lm, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	sd, _ := sp.Acquire(context.Background())
	defer sp.Release(sd)
	ld, _ := lm.Acquire(context.Background())
	defer lm.Release(ld)
	w := os.Stdout
	if p := os.Getenv("VERA_SPOT_OUT"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w = f
	}
	for _, c := range clips {
		for i, tu := range liveTurns(t, c.pcm) {
			spots := decodeSpots(t, sd, tu)
			_, text := transcribe(t, ld, tu)
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%.2f\t%v\t%s\t%s\n", c.voice.name, c.cond.name, c.text, i,
				float64(len(tu))/16000, c.crisis, text, bestScores(spots))
		}
	}
}

// decodeSpots runs one utterance through a spotter decoder in 20 ms frames.
func decodeSpots(t testing.TB, d *Decoder, pcm []int16) []Spot {
	t.Helper()
	if err := d.Start(SearchSpot); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < len(pcm); j += 320 {
		if err := d.Process(pcm[j:min(j+320, len(pcm))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.End(); err != nil {
		t.Fatal(err)
	}
	return d.Spots()
}

// bestScores formats each phrase's best score, "phrase=score" by phrase.
func bestScores(spots []Spot) string {
	best := map[string]int32{}
	for _, s := range spots {
		if v, ok := best[s.Phrase]; !ok || s.Score > v {
			best[s.Phrase] = s.Score
		}
	}
	var parts []string
	for p, v := range best {
		parts = append(parts, fmt.Sprintf("%s=%d", p, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
