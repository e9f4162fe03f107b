package turn_test

// End-of-turn evaluation: labelled real speech (../shared/fixtures/audio,
// *.segments.json) and espeak-ng utterances with known sample-exact ends,
// each mixed into noise, run through the VAD and the turn detector on sample
// time. It reports how long after the true end of speech plus the configured
// silence input.speech_stopped would fire, how far the back-dated SpeechEnd
// is from the true end, and whether turns were split, merged, missed or
// invented. BenchmarkEndOfTurnEval prints the table; the tests in
// eot_test.go assert behaviour on the same machinery.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
	"github.com/veraneural/vera-gateway/audio/wavio"
	"github.com/veraneural/vera-gateway/fixtures"
)

const rate = turn.SampleRate

// span is a half-open sample range.
type span struct{ s, e int64 }

// clip is one labelled recording: expected turns (label segments merged over
// gaps shorter than the configured silence) and, per boundary between turns,
// whether it is ambiguous (a gap within ±ambiguousMs of the silence, where
// either a split or a merge is right given label error).
type clip struct {
	name    string
	set     string // "real-forced", "real-energy", "espeak"
	pcm     []int16
	turns   []span
	optAft  []bool // optAft[i]: the boundary after turns[i] is ambiguous
	optIn   []bool // optIn[i]: turns[i] holds a gap within ambiguousMs under the silence
	speechP float64
}

const ambiguousMs = 150

// turnsFrom merges label segments over gaps shorter than silence.
func turnsFrom(segs []span, silence int64) (turns []span, optAft, optIn []bool) {
	amb := int64(ambiguousMs * rate / 1000)
	for _, sg := range segs {
		if n := len(turns); n > 0 && sg.s-turns[n-1].e < silence {
			if sg.s-turns[n-1].e >= silence-amb {
				optIn[n-1] = true
			}
			turns[n-1].e = sg.e
			continue
		}
		if n := len(turns); n > 0 {
			optAft = append(optAft, sg.s-turns[n-1].e < silence+amb)
		}
		turns = append(turns, sg)
		optIn = append(optIn, false)
	}
	return turns, append(optAft, false), optIn
}

// realClips loads every shared clip with segments.json.
func realClips(t testing.TB, silence int64) []clip {
	dir := fixtures.SharedAudioDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.segments.json"))
	if err != nil || len(files) == 0 {
		t.Skipf("no *.segments.json in %s", dir)
	}
	// Label quality per SOURCES.md: forced alignment or ASR word times are
	// good to ±30–100 ms; energy-derived labels are padded by 60 ms.
	precise := map[string]bool{"en_librivox_sense_sensibility_0870": true, "en_librivox_sense_sensibility_0880": true,
		"en_librivox_sense_sensibility_0890": true, "es_picovoice_test_es": true}
	var out []clip
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".segments.json")
		pcm, err := wavio.ReadWAVFile(filepath.Join(dir, name+".16k.wav"), rate)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var segs []struct {
			Start int64 `json:"start_ms"`
			End   int64 `json:"end_ms"`
		}
		if err := json.Unmarshal(raw, &segs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var sp []span
		for _, s := range segs {
			sp = append(sp, span{s.Start * rate / 1000, s.End * rate / 1000})
		}
		set := "real-energy"
		if precise[name] {
			set = "real-forced"
		}
		turns, optAft, optIn := turnsFrom(sp, silence)
		out = append(out, clip{name: name, set: set, pcm: pcm, turns: turns, optAft: optAft, optIn: optIn, speechP: speechPower(pcm, sp)})
	}
	return out
}

func speechPower(pcm []int16, segs []span) float64 {
	var e float64
	var n int
	for _, sg := range segs {
		for i := sg.s; i < sg.e && i < int64(len(pcm)); i++ {
			e += float64(pcm[i]) * float64(pcm[i])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return e / float64(n)
}

// espeakPhrase synthesises text at 16 kHz, scaled to peak at -6 dBFS and
// trimmed to its first and last sample within 40 dB of that peak: espeak's
// own leading and trailing silence go, and so does the breath tail some
// variants add (50–70 dB down), so the phrase ends where its speech does.
func espeakPhrase(t testing.TB, dir, voice string, speed int, text string) []int16 {
	t.Helper()
	raw := filepath.Join(dir, "p.wav")
	out := filepath.Join(dir, "p16.wav")
	if b, err := exec.Command("espeak-ng", "-v", voice, "-s", fmt.Sprint(speed), "-w", raw, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, b)
	}
	if b, err := exec.Command("sox", raw, "-r", "16000", "-c", "1", "-b", "16", out).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v: %s", err, b)
	}
	pcm, err := wavio.ReadWAVFile(out, rate)
	if err != nil {
		t.Fatal(err)
	}
	abs := func(s int16) int {
		if s < 0 {
			return -int(s)
		}
		return int(s)
	}
	var peak int
	for _, s := range pcm {
		peak = max(peak, abs(s))
	}
	if peak == 0 {
		t.Fatalf("espeak-ng %q: no audio", text)
	}
	first, last := -1, -1
	for i, s := range pcm {
		if abs(s)*100 > peak {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	pcm = pcm[first : last+1]
	g := 16422.0 / float64(peak)
	for i := range pcm {
		pcm[i] = int16(float64(pcm[i]) * g)
	}
	return pcm
}

// espeakUtterances are turns of one to three phrases; inside a turn the
// phrases are separated by pauses shorter than the silence (a breath, a
// hesitation), which must never end the turn.
var espeakUtterances = [][]string{
	{"I would like to go home"},
	{"please turn on the lights", "in the kitchen"},
	{"my phone number is", "five five five", "one two three four"},
	{"I feel a bit anxious", "today"},
	{"can you remind me", "to call my sister", "tomorrow"},
	{"stop"},
	{"what is the weather like this afternoon"},
	{"I went for a walk", "and then I sat down for a while"},
}

// espeakClips builds one clip for each of the first n of four voices: every
// utterance in order, pauses inside turns of 120–360 ms, 1.4 s between
// turns. True ends are exact.
func espeakClips(t testing.TB, silence int64, voices int) []clip {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed")
	}
	if _, err := exec.LookPath("sox"); err != nil {
		t.Skip("sox not installed")
	}
	dir := t.TempDir()
	vs := []struct {
		v     string
		speed int
	}{{"en-us", 150}, {"en-gb", 175}, {"en-us+f3", 165}, {"en-gb-scotland", 140}}
	vs = vs[:min(voices, len(vs))]
	var out []clip
	for vi, vo := range vs {
		rng := rand.New(rand.NewPCG(uint64(vi), 7))
		var pcm []int16
		var turns []span
		for _, u := range espeakUtterances {
			pcm = append(pcm, make([]int16, rate*14/10)...)
			s := int64(len(pcm))
			for k, ph := range u {
				if k > 0 {
					gap := (120 + rng.IntN(241)) * rate / 1000
					pcm = append(pcm, make([]int16, gap)...)
				}
				pcm = append(pcm, espeakPhrase(t, dir, vo.v, vo.speed, ph)...)
			}
			turns = append(turns, span{s, int64(len(pcm))})
		}
		out = append(out, clip{name: vo.v, set: "espeak", pcm: pcm, turns: turns, optAft: make([]bool, len(turns)),
			optIn: make([]bool, len(turns)), speechP: speechPower(pcm, turns)})
	}
	return out
}

// noiseSource gives a condition's background: a shared noise recording, or
// generated pink-ish noise when name is "pink".
func noiseSource(t testing.TB, name string) []int16 {
	t.Helper()
	if name == "pink" {
		rng := rand.New(rand.NewPCG(3, 9))
		n := make([]int16, 10*rate)
		var b [3]float64
		for i := range n {
			w := rng.NormFloat64()
			b[0] = 0.99765*b[0] + w*0.0990460
			b[1] = 0.96300*b[1] + w*0.2965164
			b[2] = 0.57000*b[2] + w*1.0526913
			n[i] = int16(max(min((b[0]+b[1]+b[2]+w*0.1848)*3000, 32767), -32768))
		}
		return n
	}
	pcm, err := wavio.ReadWAVFile(filepath.Join(fixtures.SharedAudioDir(t), name+".16k.wav"), rate)
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

// condition is a background and level; snr < 0 means no noise at all
// (digital silence around the speech).
type condition struct {
	noise string
	snr   float64
}

func (c condition) String() string {
	if c.snr < 0 {
		return "digital silence"
	}
	return fmt.Sprintf("%s@%gdB", c.noise, c.snr)
}

// canvas is lead + clip + tail with the background mixed in over all of it
// (so the detector has learnt the floor before the speech).
func (c clip) canvas(t testing.TB, cond condition, noise []int16) ([]int16, int64) {
	lead, tail := int64(rate), int64(2*rate)
	out := make([]int16, lead+int64(len(c.pcm))+tail)
	copy(out[lead:], c.pcm)
	if cond.snr >= 0 {
		var np float64
		for _, s := range noise {
			np += float64(s) * float64(s)
		}
		np /= float64(len(noise))
		g := math.Sqrt(c.speechP / np / math.Pow(10, cond.snr/10))
		off := len(c.name) * 997 % len(noise)
		for i := range out {
			v := float64(out[i]) + g*float64(noise[(off+i)%len(noise)])
			out[i] = int16(max(min(v, 32767), -32768))
		}
	}
	return out, lead
}

// detected is one detector turn (copied out of the event).
type detected struct {
	start, end, at int64 // SpeechStart, SpeechEnd (back-dated), decision time
}

// detectTurns runs pcm through the inbound pipeline's analysis (VAD and
// detector, no echo guard) in 10 ms frames, as the gateway's inbound path
// does after decoding.
func detectTurns(t testing.TB, pcm []int16, vc vad.Config, tc turn.Config) []detected {
	t.Helper()
	cfg := pipeline.DefaultConfig()
	cfg.VAD, cfg.Turn, cfg.EchoGuard = vc, tc, false
	in, err := pipeline.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []detected
	for k := 0; (k+1)*vad.FrameSamples <= len(pcm); k++ {
		in.Analyse(pcm[k*vad.FrameSamples:(k+1)*vad.FrameSamples], int64(k*vad.FrameSamples), false, func(e *turn.Event) {
			if e.Type == turn.SpeechStopped {
				out = append(out, detected{e.SpeechStart, e.SpeechEnd, e.At})
			}
		})
	}
	return out
}

// tally accumulates one variant's scores.
type tally struct {
	delays  []float64 // ms: decision − (true end + silence)
	endErr  []float64 // ms: back-dated SpeechEnd − true end
	expect  int
	splits  int // expected turns cut into more than one detected turn
	merges  int // unambiguous boundaries no detected turn ended at
	missed  int
	extra   int // detected turns overlapping no expected turn
	splitAt []string
	late    []string // turns ended more than 250 ms late or 100 ms early
}

// score matches detected turns to expected ones by overlap.
func (ty *tally) score(c clip, lead int64, det []detected, silence int64, cond string) {
	exp := make([]span, len(c.turns))
	for i, x := range c.turns {
		exp[i] = span{x.s + lead, x.e + lead}
	}
	ty.expect += len(exp)
	over := func(d detected, x span) bool { return d.start < x.e && d.end > x.s }
	hits := make([][]int, len(exp)) // detected indices overlapping each expected turn
	for j, d := range det {
		any := false
		for i, x := range exp {
			if over(d, x) {
				hits[i] = append(hits[i], j)
				any = true
			}
		}
		if !any {
			ty.extra++
		}
	}
	for i, x := range exp {
		h := hits[i]
		if len(h) == 0 {
			ty.missed++
			continue
		}
		if len(h) > 1 && !c.optIn[i] {
			ty.splits += len(h) - 1
			ty.splitAt = append(ty.splitAt, fmt.Sprintf("%s %s %s@%dms", c.set, c.name, cond, (x.s-lead)*1000/rate))
		}
		last := det[h[len(h)-1]]
		if i+1 < len(exp) && over(last, exp[i+1]) {
			if !c.optAft[i] {
				ty.merges++
			}
			continue // this end was not detected as an end
		}
		ty.delays = append(ty.delays, float64(last.at-x.e-silence)*1000/rate)
		if dl := float64(last.at-x.e-silence) * 1000 / rate; dl > 250 || dl < -100 {
			ty.late = append(ty.late, fmt.Sprintf("%s %s@%dms:%+.0f", c.name, cond, (x.e-lead)*1000/rate, dl))
		}
		ty.endErr = append(ty.endErr, float64(last.end-x.e)*1000/rate)
	}
}

func pct(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

func (ty *tally) String() string {
	return fmt.Sprintf("n=%3d  delay p50 %4.0f p95 %4.0f ms  end err p50 %4.0f p95 %4.0f ms  split %d merge %d missed %d extra %d",
		len(ty.delays), pct(ty.delays, 0.5), pct(ty.delays, 0.95), pct(ty.endErr, 0.5), pct(ty.endErr, 0.95),
		ty.splits, ty.merges, ty.missed, ty.extra)
}

// variant is one detector configuration under comparison.
type variant struct {
	name string
	vad  vad.Config
	turn turn.Config
}

var errNoClips = errors.New("no clips")

// evaluate runs every variant over every clip and condition.
func evaluate(t testing.TB, res map[string]*tally, clips []clip, conds []condition, vars []variant) error {
	if len(clips) == 0 {
		return errNoClips
	}
	for _, cond := range conds {
		var noise []int16
		if cond.snr >= 0 {
			noise = noiseSource(t, cond.noise)
		}
		for _, c := range clips {
			pcm, lead := c.canvas(t, cond, noise)
			for _, v := range vars {
				silence := int64(v.turn.SilenceDurationMs) * rate / 1000
				det := detectTurns(t, pcm, v.vad, v.turn)
				for _, key := range []string{v.name + "|" + c.set + "|" + cond.String(), v.name + "|" + c.set + "|all", v.name + "|all|all"} {
					if res[key] == nil {
						res[key] = &tally{}
					}
					res[key].score(c, lead, det, silence, cond.String())
				}
			}
		}
	}
	return nil
}
