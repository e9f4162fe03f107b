//go:build !noembedded

package sphinx

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/safety"
)

// The passes after the streaming one (pocketsphinx's -fwdflat, run by
// ps_end_utt over the whole utterance, and -bestpath, run by the final
// ps_get_hyp) are all the recogniser does between the end of a turn and its
// transcript: the turn's frames were decoded as they arrived. What they
// cost and what they buy is measured here on real recorded speech with its
// reference text, and on the crisis and benign sentences the safety path
// depends on (the safety detector's verdict on the transcript, and on the
// transcript with the spotter's phrases it agrees with, as the live path
// judges a turn).

// finalPasses are the variants BenchmarkFinalPass compares: which passes
// run, and whether they run once the utterance has settled (Config.SettleMs,
// settle.go) or at the end of the turn.
var finalPasses = []struct {
	name       string
	flat, best bool
	settleMs   int
}{
	{"fwdflat+bestpath+settle", true, true, 250},
	{"fwdflat+bestpath", true, true, 0},
	{"bestpath", false, true, 0},
	{"fwdflat", true, false, 0},
	{"none", false, false, 0},
}

// refClip is real speech with the words said in it.
type refClip struct {
	name string
	pcm  []int16
	ref  string
}

// referenceClips are the recordings of ../shared/fixtures/audio that come
// with their text (NAME.txt, or the quoted transcript of benign/SOURCES.md)
// and the project's own speech clips (testdata/voice/README.md's TEXT).
func referenceClips(t testing.TB) []refClip {
	t.Helper()
	root := fixtures.RepoRoot(t)
	own := map[string]string{
		"testdata/router/goforward.16k.wav":  "go forward ten meters",
		"testdata/voice/gohome.16k.wav":      "I would like to go home",
		"testdata/voice/lights.16k.wav":      "please turn on the lights",
		"testdata/voice/crisis_kill.16k.wav": "I am going to kill myself tonight",
		"testdata/voice/crisis_end.16k.wav":  "I want to end my life",
		"testdata/voice/question.16k.wav":    "what time is it",
		"testdata/voice/barge.16k.wav":       "please stop talking now",
	}
	var out []refClip
	for f, ref := range own {
		out = append(out, refClip{name: filepath.Base(f), pcm: readWAV16k(t, filepath.Join(root, f)), ref: ref})
	}
	dir, ok := fixtures.LookupSharedAudioDir(t)
	if !ok {
		return out
	}
	txts, _ := filepath.Glob(filepath.Join(dir, "en_*.txt"))
	for _, f := range txts {
		wav := strings.TrimSuffix(f, ".txt") + ".16k.wav"
		b, err := os.ReadFile(f)
		if _, werr := os.Stat(wav); err != nil || werr != nil {
			continue
		}
		out = append(out, refClip{name: filepath.Base(wav), pcm: readWAV16k(t, wav), ref: string(b)})
	}
	// benign/SOURCES.md: "| FILE | en | … | "TRANSCRIPT" (speaker) |".
	src, err := os.ReadFile(filepath.Join(dir, "benign", "SOURCES.md"))
	if err != nil {
		return out
	}
	quoted := regexp.MustCompile(`"([^"]+)"`)
	for _, line := range strings.Split(string(src), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 7 || !strings.HasPrefix(strings.TrimSpace(cols[1]), "en_") {
			continue
		}
		name := strings.TrimSpace(cols[1])
		m := quoted.FindStringSubmatch(cols[len(cols)-2])
		if m == nil || strings.Contains(name, "ljspeech") && !strings.Contains(m[1], "Printing") {
			continue
		}
		// LJ Speech's transcript quotes a title inside itself; take the
		// whole last column's text between its first and last quote.
		ref := m[1]
		if strings.Contains(name, "ljspeech") {
			c := cols[len(cols)-2]
			ref = c[strings.Index(c, `"`)+1 : strings.LastIndex(c, `"`)]
		}
		wav := filepath.Join(dir, "benign", name)
		if _, err := os.Stat(wav); err != nil {
			continue
		}
		out = append(out, refClip{name: name, pcm: readWAV16k(t, wav), ref: strings.ReplaceAll(ref, " / ", " ")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

var nonWord = regexp.MustCompile(`[^a-z0-9' ]+`)

// words normalises text for word error rate: lower case, letters, digits
// and apostrophes.
func words(s string) []string {
	s = strings.ReplaceAll(strings.ToLower(s), "-", " ")
	return strings.Fields(nonWord.ReplaceAllString(s, " "))
}

// editDistance is the word-level Levenshtein distance.
func editDistance(ref, hyp []string) int {
	prev := make([]int, len(hyp)+1)
	cur := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			c := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(hyp)]
}

// finalCost accumulates what the end of turns cost.
type finalCost struct {
	turns       int
	audio       float64       // seconds of audio decoded
	streamCPU   time.Duration // CPU of the streaming pass (frames + partials)
	endCPU      time.Duration // CPU of ps_end_utt + the final hypothesis
	endWall     []time.Duration
	errs, nWord int // word errors, reference words
}

// decodeTurn feeds one turn as the router does (20 ms frames, a partial
// every 200 ms) and ends it, timing the end: what the voice path waits for
// once the turn detector has ended the turn (a settled utterance's final
// passes ran during the feed, and count in the stream's CPU).
func (c *finalCost) decodeTurn(t testing.TB, d *Decoder, pcm []int16) string {
	t.Helper()
	c0 := processCPU()
	if err := d.Start(SearchLM); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < len(pcm); j += 320 {
		if err := d.Process(pcm[j:min(j+320, len(pcm))]); err != nil {
			t.Fatal(err)
		}
		if j%3200 == 0 {
			_ = d.Hypothesis()
		}
	}
	c1, w1 := processCPU(), time.Now()
	text, err := d.End()
	if err != nil {
		t.Fatal(err)
	}
	c.endWall = append(c.endWall, time.Since(w1))
	c2 := processCPU()
	c.turns++
	c.audio += float64(len(pcm)) / 16000
	c.streamCPU += c1 - c0
	c.endCPU += c2 - c1
	return text
}

func (c *finalCost) endWallP50() time.Duration {
	if len(c.endWall) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), c.endWall...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// safetySentences are the crisis and benign sentences of the spotter's
// corpus spoken by one training voice (clean) and one held-out voice (in
// pink noise): the material the safety path must keep recognising.
func safetySentences(t testing.TB) (crisis, benign []clip) {
	t.Helper()
	needTools(t)
	a := []voice{trainVoices[0]}
	b := []voice{heldOutVoices[0]}
	normal, noisy := []condition{trainConds[1]}, []condition{heldOutConds[2]}
	crisisText := append(append([]string{}, crisisTrain...), crisisHeldOut...)
	benignText := append(append([]string{}, benignTrain...), benignHeldOut...)
	crisis = append(corpus(t, crisisText, true, a, normal), corpus(t, crisisText, true, b, noisy)...)
	benign = append(corpus(t, benignText, false, a, normal), corpus(t, benignText, false, b, noisy)...)
	return crisis, benign
}

// safetyTally is the safety detector's verdicts on a set of turns, from the
// transcript alone and from the transcript with the spotter's agreeing
// phrases (the live path).
type safetyTally struct {
	n                          int
	textCard, textCrisis       int
	withSpotCard, withSpotCris int
	missedText                 []string
}

// BenchmarkFinalPass compares the final passes: per variant, the CPU per
// audio second of the streaming pass, the CPU and wall time of the end of
// a turn (ps_end_utt + the final hypothesis, what the voice path waits for
// after the turn detector's end of turn), the word error rate on real
// recorded speech with reference text, cut into turns by the live path, and
// the safety detector's verdicts on the crisis and benign sentences.
// VERA_FINAL_PASSES picks variants (comma-separated names). One pass:
//
//	go test -tags nolibopusfile -count=1 -run '^$' -bench FinalPass -benchtime 1x -timeout 60m ./gateway/router/sphinx/
func BenchmarkFinalPass(b *testing.B) {
	clips := referenceClips(b)
	crisis, benign := safetySentences(b)
	det := safety.NewDetector()
	cat, err := safety.DefaultCatalog()
	if err != nil {
		b.Fatal(err)
	}
	gate, err := DefaultGate()
	if err != nil {
		b.Skip(err)
	}
	spotted := spotAll(b, append(append([]clip{}, crisis...), benign...))
	want := os.Getenv("VERA_FINAL_PASSES")
	for _, v := range finalPasses {
		if want != "" && !strings.Contains(","+want+",", ","+v.name+",") {
			continue
		}
		b.Run(v.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.FwdFlat, cfg.BestPath, cfg.SettleMs = v.flat, v.best, v.settleMs
			d := oneDecoder(b, NewPool, cfg)
			var real, synth finalCost
			var cr, be safetyTally
			for b.Loop() {
				real, synth, cr, be = finalCost{}, finalCost{}, safetyTally{}, safetyTally{}
				for _, c := range clips {
					var hyp []string
					for _, tu := range liveTurns(b, c.pcm) {
						hyp = append(hyp, real.decodeTurn(b, d, tu))
					}
					ref := words(c.ref)
					e := editDistance(ref, words(strings.Join(hyp, " ")))
					real.errs += e
					real.nWord += len(ref)
					b.Logf("%s %s: %d/%d errors: %q", v.name, c.name, e, len(ref), strings.Join(hyp, " | "))
				}
				judge := func(set []clip, tally *safetyTally) {
					for _, c := range set {
						text := synth.decodeTurn(b, d, c.pcm)
						ref := words(c.text)
						synth.errs += editDistance(ref, words(text))
						synth.nWord += len(ref)
						tally.add(det, cat, gate, c, text, spotted[c.String()])
					}
				}
				judge(crisis, &cr)
				judge(benign, &be)
			}
			for _, m := range cr.missedText {
				b.Logf("%s: crisis not recognised from the transcript alone: %s", v.name, m)
			}
			reportFinal(b, real, synth, cr, be)
		})
	}
}

func (s *safetyTally) add(det *safety.Detector, cat *safety.Catalog, gate *Gate, c clip, text string, spots []string) {
	s.n++
	t := assessTurn(det, cat, text, nil)
	l := assessTurn(det, cat, text, gate.Filter(text, spots))
	if t.card {
		s.textCard++
	}
	if t.crisis {
		s.textCrisis++
	}
	if l.card {
		s.withSpotCard++
	}
	if l.crisis {
		s.withSpotCris++
	}
	if c.crisis && !t.crisis {
		s.missedText = append(s.missedText, fmt.Sprintf("%s → %q", c, text))
	}
}

func reportFinal(b *testing.B, real, synth finalCost, cr, be safetyTally) {
	all := real.turns + synth.turns
	b.ReportMetric(float64((real.streamCPU+synth.streamCPU).Milliseconds())/(real.audio+synth.audio), "stream-cpu-ms/audio-s")
	b.ReportMetric(float64((real.endCPU+synth.endCPU).Microseconds())/1000/float64(all), "end-cpu-ms/turn")
	b.ReportMetric(float64(real.endCPU.Milliseconds())/real.audio, "end-cpu-ms/audio-s")
	b.ReportMetric(float64(real.endWallP50().Microseconds())/1000, "end-wall-p50-ms(real)")
	b.ReportMetric(float64(real.errs)/float64(max(real.nWord, 1)), "wer(real)")
	b.ReportMetric(float64(synth.errs)/float64(max(synth.nWord, 1)), "wer(sentences)")
	b.ReportMetric(float64(cr.textCrisis)/float64(max(cr.n, 1)), "crisis(text)")
	b.ReportMetric(float64(cr.withSpotCris)/float64(max(cr.n, 1)), "crisis(text+spot)")
	b.ReportMetric(float64(cr.withSpotCard)/float64(max(cr.n, 1)), "crisis-card(text+spot)")
	b.ReportMetric(float64(be.withSpotCard)/float64(max(be.n, 1)), "benign-card(text+spot)")
	b.ReportMetric(float64(real.turns), "real-turns")
}

// spotAll runs the spotter (built-in thresholds) over every clip once: its
// phrases do not depend on the transcription passes.
func spotAll(b *testing.B, clips []clip) map[string][]string {
	b.Helper()
	d := oneDecoder(b, NewSpotPool, DefaultConfig())
	out := map[string][]string{}
	for _, c := range clips {
		var ps []string
		for _, s := range decodeSpots(b, d, c.pcm) {
			ps = append(ps, s.Phrase)
		}
		out[c.String()] = ps
	}
	return out
}
