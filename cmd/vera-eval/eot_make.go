package main

// "vera-eval eot-make DIR" writes the project's own end-of-turn set: turns
// spoken by espeak-ng with pauses put in where people pause mid-thought
// (after "and", "um", "because", "I think", an article, a complete
// sentence that goes on), each ending with a statement, a question or a
// closing formula, at several levels and in generated pink noise. Every
// silence of at least 100 ms is labelled (NAME.eot.json): the pauses put
// in and those espeak-ng makes at commas inside a phrase are holds, the
// silence after the last phrase is the end. Voices are split: the training
// voices make the clips the weights are fitted on (split "train"), the
// others (split "test") only score them.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"encoding/json"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

func init() {
	register("eot-make", command{
		summary: "write the project's espeak-ng end-of-turn set (NAME.16k.wav + NAME.eot.json): eot-make [-turns N] [-seed S] DIR",
		run:     runEOTMake,
	})
}

// eotTurns are the turns: phrases separated by " | ", where the speaker
// pauses and goes on. Punctuation shapes espeak-ng's intonation: a comma
// before a pause gives a continuing contour, a full stop a falling one (a
// complete sentence the speaker still goes on from).
var eotTurns = []string{
	"I went for a walk this morning and, | um, | it helped a little.",
	"I called my sister yesterday but, | she didn't pick up.",
	"I couldn't sleep last night because, | my mind kept racing and, | I kept thinking about work.",
	"We could talk about work or, | maybe about my family.",
	"I have been really busy so, | I haven't eaten much today because, | there was no time.",
	"I told him that I was fine and, | then I went to my room and, | I just cried.",
	"If I go to the, | the party, | I will not know anyone there.",
	"When I wake up, | I already feel tired.",
	"Um, | I am not sure how to say this.",
	"I was, uh, | thinking about moving out.",
	"So, um, | I had a rough day at work.",
	"I feel, um, | kind of, | lonely lately.",
	"Uh, | can you remind me to call the doctor?",
	"I think, | I need a break from, | from everything.",
	"I mean, | it is not a big deal but, | it bothers me.",
	"I guess, | I just want someone to, | to listen.",
	"You know, | sometimes it is hard to get up.",
	"I have been talking to the, | the counselor at school.",
	"It is about my, | my mother.",
	"I need to go to the, | pharmacy before it closes and, | I have no car.",
	"I was going to, | call you earlier.",
	"My friend and I, | had a fight about, | about money.",
	"I have been feeling, | really tired lately.",
	"I went home early. | Then I slept for a while.",
	"It was a long day. | My boss yelled at me again.",
	"I don't know. | Maybe I am overthinking it.",
	"I finished the project. | Now I have nothing to do.",
	"She said no. | So I left.",
	"Can you help me with something?",
	"What should I do about my sleep?",
	"Do you think I should call her?",
	"I was wondering, | is it normal to feel this way?",
	"How do I stop worrying so much?",
	"Could you tell me, | um, | what time it is?",
	"That is all for now, thank you.",
	"Okay, thanks.",
	"I think that's it.",
	"Thank you for listening.",
	"I would like to go home.",
	"Please turn on the lights in the kitchen.",
	"I am feeling a bit better today.",
	"My appointment is on Tuesday.",
	"I want to talk about my week.",
	"I don't know, | I just feel stuck,",
	"It has been, | a lot.",
	"So yeah.",
	"Yes.",
	"No, not really.",
	"Maybe.",
	"I was at the store and, | I saw my old teacher and, | um, | she didn't recognise me.",
}

// eotVoice is one synthesiser voice and its split. engine is "espeak"
// (espeak-ng: speed in words per minute, pitch 0–99), "flite" (Flite's
// built-in CMU voices: speed in percent of the voice's own rate, pitch
// unused) or "festival" (Festival's voice_NAME: speed in percent).
type eotVoice struct {
	name         string
	speed, pitch int
	split        string
	engine       string
}

// eotVoices: espeak-ng's formant voices (rule prosody), then voices built
// from human recordings, whose pitch and timing come from people: Flite's
// CMU ARCTIC voices (awb, rms, slt: statistical parametric, trained on one
// speaker each; kal16: diphones) and Festival's (kal and ked diphones with
// Festival's intonation model trained on read speech; slt as an HTS
// voice). The first eight keep their order and seeds, so the espeak-ng
// clips and their held-out split are the same as before the others came.
// Of the recorded voices, two speakers (rms, ked) are held out
// ("test-natural"); slt and kal train in both engines.
var eotVoices = []eotVoice{
	{"en-us", 130, 40, "train", "espeak"}, {"en-gb", 150, 50, "train", "espeak"}, {"en-us+f3", 140, 60, "train", "espeak"},
	{"en-gb-x-rp", 160, 45, "train", "espeak"}, {"en-us+m3", 120, 35, "train", "espeak"},
	{"en-gb-scotland", 140, 50, "test", "espeak"}, {"en-us+f4", 150, 55, "test", "espeak"}, {"en-029", 125, 40, "test", "espeak"},
	{"awb", 100, 0, "train", "flite"}, {"slt", 105, 0, "train", "flite"}, {"kal16", 95, 0, "train", "flite"},
	{"kal_diphone", 100, 0, "train", "festival"}, {"cmu_us_slt_arctic_hts", 100, 0, "train", "festival"},
	{"rms", 100, 0, "test-natural", "flite"}, {"ked_diphone", 100, 0, "test-natural", "festival"},
}

// engineTool is the program an engine runs.
var engineTool = map[string]string{"espeak": "espeak-ng", "flite": "flite", "festival": "text2wave"}

// clipName names a voice's k-th clip; espeak-ng's keep their old names.
func clipName(v eotVoice, k int) string {
	return fmt.Sprintf("%s_%s_%02d", v.engine, strings.NewReplacer("+", "_", "-", "_").Replace(v.name), k)
}

func runEOTMake(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eot-make", flag.ContinueOnError)
	fs.SetOutput(stderr)
	perVoice := fs.Int("turns", 12, "turns per voice")
	only := fs.String("voices", "", "only these voices (comma-separated names as in eotVoices, e.g. slt,en-us); default all")
	engines := fs.String("engines", "espeak", "synthesisers to use (comma-separated: espeak, flite, festival; the committed weights are fitted on espeak's training voices, the recorded voices make a second held-out split, test-natural, and more training clips); a missing flite or festival is skipped with a note")
	seed := fs.Uint64("seed", 1, "random seed (pauses, levels, noise, the turns each voice says)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want exactly one DIR argument")
	}
	for _, tool := range []string{"espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is needed: %w", tool, err)
		}
	}
	use := map[string]bool{}
	for _, e := range strings.Split(*engines, ",") {
		e = strings.TrimSpace(e)
		if _, ok := engineTool[e]; !ok {
			return fmt.Errorf("-engines: unknown engine %q (espeak, flite, festival)", e)
		}
		if _, err := exec.LookPath(engineTool[e]); err != nil {
			if e == "espeak" {
				return fmt.Errorf("espeak-ng is needed: %w", err)
			}
			fmt.Fprintf(stderr, "eot-make: %s not installed (%s): its voices are left out\n", engineTool[e], err)
			continue
		}
		use[e] = true
	}
	dir := fs.Arg(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "vera-eot-make-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	n := 0
	for vi, v := range eotVoices {
		if !use[v.engine] || (*only != "" && !slices.Contains(strings.Split(*only, ","), v.name)) {
			continue
		}
		rng := rand.New(rand.NewPCG(*seed, uint64(vi)))
		order := rng.Perm(len(eotTurns))
		next := 0
		for k := range *perVoice {
			// A turn is one to three of the sentences above: the person
			// says a complete sentence, pauses, and goes on.
			// (80 % one sentence, 20 % two: most pauses people hold through
			// are inside a sentence; some come after one).
			m := 1
			if rng.Float64() > 0.8 {
				m = 2
			}
			parts := make([]string, m)
			for j := range parts {
				parts[j] = eotTurns[order[next%len(order)]]
				next++
			}
			name := clipName(v, k)
			if err := makeTurn(filepath.Join(dir, name), tmp, v, strings.Join(parts, " || "), rng); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			n++
		}
	}
	fmt.Fprintf(stdout, "wrote %d clips to %s\n", n, dir)
	return nil
}

// makeTurn speaks one turn and writes its clip and labels.
func makeTurn(base, tmp string, v eotVoice, text string, rng *rand.Rand) error {
	const lead, trail = 600 * msSamples, 1500 * msSamples
	phrases, kinds := turnPhrases(text)
	pcm := make([]int16, lead)
	voice := v.name
	if v.engine != "espeak" {
		voice = v.engine + ":" + v.name
	}
	lab := eotLabels{Language: "en", Split: v.split, Text: strings.NewReplacer(" || ", " … ", " | ", " … ").Replace(text), Voice: voice}
	add := func(s, e int64, label, after, kind string) {
		lab.Points = append(lab.Points, eotLabelPoint{s / msSamples, e / msSamples, label, after, kind})
	}
	// Units are synthesised whole: Festival says each sentence at once
	// (its intonation at a comma inside an utterance is a continuation,
	// which a fragment said alone does not get) and the pauses are put in
	// at its word boundaries; espeak-ng and Flite say each phrase alone.
	var units [][]int // phrase indices
	for i := range phrases {
		if v.engine == "festival" && i > 0 && kinds[i-1] == "continuation" {
			units[len(units)-1] = append(units[len(units)-1], i)
			continue
		}
		units = append(units, []int{i})
	}
	pause := func() int64 {
		// Hold pauses: log-uniform 150 ms – 1.8 s.
		return int64(math.Exp(math.Log(150)+rng.Float64()*(math.Log(1800)-math.Log(150)))) * msSamples
	}
	for ui, u := range units {
		speed := v.speed + rng.IntN(21) - 10
		pitch := v.pitch + rng.IntN(17) - 8
		var sp []int16
		var cuts []eotPoint // the unit's own pauses at its inner boundaries
		var err error
		if len(u) == 1 {
			sp, err = speakVoice(tmp, v, speed, pitch, phrases[u[0]])
		} else {
			sp, cuts, err = festivalSentence(tmp, v, speed, phrases[u[0]:u[len(u)-1]+1])
		}
		if err != nil {
			return err
		}
		base := int64(len(pcm))
		extras := make([]int64, len(cuts))
		for k, c := range cuts {
			extras[k] = max(pause()-(c.E-c.S), 0)
		}
		shiftAt := func(x int64) int64 {
			var d int64
			for k, c := range cuts {
				if (c.S+c.E)/2 <= x {
					d += extras[k]
				}
			}
			return d
		}
		for _, q := range innerSilences(sp) {
			inCut := false
			for _, c := range cuts {
				inCut = inCut || (q.S < c.E && q.E > c.S)
			}
			if !inCut {
				add(base+q.S+shiftAt(q.S), base+q.E+shiftAt(q.S), "hold", "", "comma")
			}
		}
		var prev, shift int64
		for k, c := range cuts {
			mid := (c.S + c.E) / 2
			pcm = append(pcm, sp[prev:mid]...)
			pcm = append(pcm, make([]int16, extras[k])...)
			add(base+c.S+shift, base+c.E+shift+extras[k], "hold", lastWord(phrases[u[k]]), kinds[u[k]])
			shift += extras[k]
			prev = mid
		}
		pcm = append(pcm, sp[prev:]...)
		if ui < len(units)-1 {
			s := int64(len(pcm))
			pcm = append(pcm, make([]int16, pause())...)
			last := u[len(u)-1]
			add(s, int64(len(pcm)), "hold", lastWord(phrases[last]), kinds[last])
		}
	}
	s := int64(len(pcm))
	pcm = append(pcm, make([]int16, trail)...)
	add(s, int64(len(pcm)), "end", lastWord(phrases[len(phrases)-1]), endKind(phrases[len(phrases)-1]))
	sort.SliceStable(lab.Points, func(i, j int) bool { return lab.Points[i].StartMs < lab.Points[j].StartMs })
	return writeTurn(base, pcm, lab, rng)
}

// turnPhrases splits a turn's text at its pauses: " | " is a pause inside a
// sentence (kind "continuation"), " || " one between sentences ("sentence").
func turnPhrases(text string) (phrases, kinds []string) {
	for j, sent := range strings.Split(text, " || ") {
		for i, ph := range strings.Split(sent, " | ") {
			phrases = append(phrases, ph)
			if i == 0 && j > 0 {
				kinds[len(kinds)-1] = "sentence"
			}
			kinds = append(kinds, "continuation")
		}
	}
	return phrases, kinds
}

// writeTurn levels the turn, mixes its noise and writes base.16k.wav and
// base.eot.json.
func writeTurn(base string, pcm []int16, lab eotLabels, rng *rand.Rand) error {
	// Level (peak −4 … −14 dBFS) and noise (none, or pink at 35, 25, 15 dB SNR).
	gain := math.Pow(10, (-4-10*rng.Float64())/20) * 32767 / float64(peakAbs(pcm))
	snrs := []float64{-1, 35, 25, 15}
	mixNoise(pcm, gain, snrs[rng.IntN(len(snrs))], rng)
	if err := wavio.WriteWAVFile(base+".16k.wav", audio.SampleRate, pcm); err != nil {
		return err
	}
	b, err := json.MarshalIndent(lab, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(base+".eot.json", append(b, '\n'), 0o644)
}

// festivalSentence says phrases as one utterance with Festival and
// returns it (16 kHz, trimmed as speakVoice trims) and, for each boundary
// between two phrases, the pause Festival made there ([S, E): the frames
// 45 dB under the peak from the boundary word's end on; S = E at the
// word's end when it made none).
func festivalSentence(tmp string, v eotVoice, speed int, phrases []string) ([]int16, []eotPoint, error) {
	text := strings.Join(phrases, " ")
	raw, out, scm := filepath.Join(tmp, "s.wav"), filepath.Join(tmp, "s16.wav"), filepath.Join(tmp, "s.scm")
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(text)
	script := fmt.Sprintf("(voice_%s)\n(Parameter.set 'Duration_Stretch %.3f)\n(set! u (utt.synth (Utterance Text \"%s\")))\n(utt.save.wave u \"%s\" 'riff)\n"+
		"(mapcar (lambda (w) (format t \"W %%s %%f\\n\" (item.name w) (item.feat w \"word_end\"))) (utt.relation.items u 'Word))\n",
		v.name, 100/float64(max(speed, 50)), q, raw)
	if err := os.WriteFile(scm, []byte(script), 0o644); err != nil {
		return nil, nil, err
	}
	b, err := exec.Command("festival", "--batch", scm).CombinedOutput()
	if err != nil {
		return nil, nil, fmt.Errorf("festival: %w: %s", err, b)
	}
	var ends []float64
	for _, line := range strings.Split(string(b), "\n") {
		var w string
		var t float64
		if n, _ := fmt.Sscanf(line, "W %s %f", &w, &t); n == 2 {
			ends = append(ends, t)
		}
	}
	var bounds []int // index of each boundary's last word
	n := 0
	for _, ph := range phrases[:len(phrases)-1] {
		n += len(strings.Fields(strings.Map(func(r rune) rune {
			if strings.ContainsRune(",.?!", r) {
				return ' '
			}
			return r
		}, ph)))
		bounds = append(bounds, n-1)
	}
	if total := n + len(strings.Fields(strings.NewReplacer(",", " ", ".", " ", "?", " ", "!", " ").Replace(phrases[len(phrases)-1]))); total != len(ends) {
		return nil, nil, fmt.Errorf("festival %q: %d words, want %d", text, len(ends), total)
	}
	if b, err := exec.Command("sox", "-D", raw, "-r", "16000", "-c", "1", "-b", "16", out).CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("sox: %w: %s", err, b)
	}
	pcm, err := wavio.ReadWAVFile(out, audio.SampleRate)
	if err != nil {
		return nil, nil, err
	}
	peak := peakAbs(pcm)
	if peak == 0 {
		return nil, nil, fmt.Errorf("festival %s %q: no audio", v.name, text)
	}
	first, last := -1, -1
	for i, s := range pcm {
		if absI(int(s))*100 > peak {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	pcm = pcm[first : last+1]
	const f = audio.Frame10
	nf := len(pcm) / f
	db := make([]float32, nf)
	var top float32 = -200
	for k := range nf {
		db[k] = audio.PowerDBFS(pcm[k*f : (k+1)*f])
		top = max(top, db[k])
	}
	cuts := make([]eotPoint, len(bounds))
	for i, wi := range bounds {
		at := min(max(int64(ends[wi]*audio.SampleRate)-int64(first), 0), int64(len(pcm)))
		cuts[i] = eotPoint{S: at, E: at}
		k0 := int(at) / f
		for k := max(k0-3, 0); k < min(k0+15, nf); k++ {
			if db[k] < top-45 {
				j := k
				for j < nf && db[j] < top-45 {
					j++
				}
				cuts[i] = eotPoint{S: int64(k * f), E: int64(j * f)}
				break
			}
		}
	}
	return pcm, cuts, nil
}

// endKind names how a turn ends: a question, a closing formula, a
// trailing comma or a statement.
func endKind(ph string) string {
	l := strings.ToLower(ph)
	switch {
	case strings.HasSuffix(l, "?"):
		return "question"
	case strings.Contains(l, "thank") || strings.Contains(l, "that's it") || strings.Contains(l, "that is all"):
		return "closing"
	case strings.HasSuffix(l, ","):
		return "trailing"
	}
	return "statement"
}

func lastWord(ph string) string {
	f := strings.Fields(strings.Map(func(r rune) rune {
		if strings.ContainsRune(",.?!", r) {
			return ' '
		}
		return r
	}, ph))
	if len(f) == 0 {
		return ""
	}
	return strings.ToLower(f[len(f)-1])
}

// synthCommand is the command that speaks text with voice v into raw.
// espeak-ng takes speed (words per minute) and pitch; Flite and Festival
// take speed as a percentage of the voice's rate (a duration stretch).
func synthCommand(tmp string, v eotVoice, speed, pitch int, text, raw string) (*exec.Cmd, error) {
	stretch := fmt.Sprintf("%.3f", 100/float64(max(speed, 50)))
	switch v.engine {
	case "flite":
		return exec.Command("flite", "-voice", v.name, "--setf", "duration_stretch="+stretch, "-t", text, "-o", raw), nil
	case "festival":
		txt := filepath.Join(tmp, "p.txt")
		if err := os.WriteFile(txt, []byte(text+"\n"), 0o644); err != nil {
			return nil, err
		}
		return exec.Command("text2wave", "-eval", "(voice_"+v.name+")", "-eval", "(Parameter.set 'Duration_Stretch "+stretch+")", txt, "-o", raw), nil
	}
	return exec.Command("espeak-ng", "-v", v.name, "-s", fmt.Sprint(speed), "-p", fmt.Sprint(pitch), "-w", raw, text), nil
}

// speakPhrase synthesises text at 16 kHz and trims it to its first and last
// sample within 40 dB of its peak (the synthesiser's own silence and breath
// tail go, so the phrase ends where its speech does).
func speakPhrase(tmp, voice string, speed, pitch int, text string) ([]int16, error) {
	return speakVoice(tmp, eotVoice{name: voice, engine: "espeak"}, speed, pitch, text)
}

// speakVoice is speakPhrase with any engine's voice.
func speakVoice(tmp string, v eotVoice, speed, pitch int, text string) ([]int16, error) {
	raw, out := filepath.Join(tmp, "p.wav"), filepath.Join(tmp, "p16.wav")
	cmd, err := synthCommand(tmp, v, speed, pitch, text, raw)
	if err != nil {
		return nil, err
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", v.engine, err, b)
	}
	if b, err := exec.Command("sox", "-D", raw, "-r", "16000", "-c", "1", "-b", "16", out).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sox: %w: %s", err, b)
	}
	pcm, err := wavio.ReadWAVFile(out, audio.SampleRate)
	if err != nil {
		return nil, err
	}
	peak := peakAbs(pcm)
	if peak == 0 {
		return nil, fmt.Errorf("%s %s %q: no audio", v.engine, v.name, text)
	}
	first, last := -1, -1
	for i, s := range pcm {
		if absI(int(s))*100 > peak {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return pcm[first : last+1], nil
}

// innerSilences are the runs of at least 100 ms inside a clean phrase where
// 10 ms frames stay 45 dB below its peak frame (espeak-ng's comma pauses).
func innerSilences(pcm []int16) []eotPoint {
	const f = audio.Frame10
	nf := len(pcm) / f
	db := make([]float32, nf)
	var top float32 = -200
	for k := range nf {
		db[k] = audio.PowerDBFS(pcm[k*f : (k+1)*f])
		top = max(top, db[k])
	}
	var out []eotPoint
	for k := 0; k < nf; {
		if db[k] >= top-45 {
			k++
			continue
		}
		j := k
		for j < nf && db[j] < top-45 {
			j++
		}
		if k > 0 && j < nf && j-k >= minSilenceMs/10 {
			out = append(out, eotPoint{S: int64(k * f), E: int64(j * f)})
		}
		k = j
	}
	return out
}

func peakAbs(pcm []int16) int {
	p := 0
	for _, s := range pcm {
		p = max(p, absI(int(s)))
	}
	return p
}

func absI(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// mixNoise scales pcm by gain and adds pink noise (a sum of three leaky
// integrators of white noise) at snr dB below the speech's mean power
// (snr < 0: none).
func mixNoise(pcm []int16, gain, snr float64, rng *rand.Rand) {
	var sp float64
	var n int
	for _, s := range pcm {
		if v := float64(s) * gain; math.Abs(v) > 30 {
			sp += v * v
			n++
		}
	}
	noise := make([]float64, len(pcm))
	var np float64
	if snr >= 0 {
		var b [3]float64
		for i := range noise {
			w := rng.NormFloat64()
			b[0] = 0.99765*b[0] + w*0.0990460
			b[1] = 0.96300*b[1] + w*0.2965164
			b[2] = 0.57000*b[2] + w*1.0526913
			noise[i] = b[0] + b[1] + b[2] + w*0.1848
			np += noise[i] * noise[i]
		}
		np /= float64(len(noise))
	}
	g := 0.0
	if snr >= 0 && np > 0 && n > 0 {
		g = math.Sqrt(sp / float64(n) / np / math.Pow(10, snr/10))
	}
	for i, s := range pcm {
		v := float64(s)*gain + g*noise[i]
		pcm[i] = int16(max(min(math.Round(v), 32767), -32768))
	}
}
