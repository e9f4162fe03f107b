package main

// "vera-eval eot-train -out weights.json DIR" fits the adaptive policy's
// weights on DIR's decision points of one split (default "train"): each
// point is played through the inbound pipeline with a detector that never
// ends the turn before 3 s, and at every 100 ms of silence from 200 ms on
// (while the silence lasts) its evidence vector is one eotSample, labelled
// end or hold. A class-balanced logistic regression with a small L2
// penalty (each point weighs the same whatever its length) gives the
// weights; the threshold is then the one whose real decisions on the same
// points give the lowest mean latency at or under the target cutoff rate.
// Clips of the other split, if any, are scored with the result: the
// honest figure.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
)

func init() {
	register("eot-train", command{
		summary: "fit the adaptive end-of-turn weights on a labelled split: eot-train -out FILE [-split train] DIR",
		run:     runEOTTrain,
	})
}

// eotSample is one moment of one pause.
type eotSample struct {
	x     [turn.NumEvidence]float64
	y     float64
	point int
}

func runEOTTrain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eot-train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f eotFlags
	f.register(fs)
	out := fs.String("out", "", "write the weights file here")
	lambda := fs.Float64("lambda", 4, "L2 penalty on the weights' distance from the phonetic prior (not the bias)")
	target := fs.Float64("target-fcr", 0.05, "the threshold is the fastest whose cutoff rate on the training points is at most this")
	wordsPrior := fs.Bool("words-prior", true, "keep the word evidence at the lexicon's prior weights instead of fitting them (the training recogniser seldom hears the words: see the diagnostics)")
	minGap := fs.Float64("min-auc-gap", 0.05, "prosodic evidence whose AUC (first sample of each training pause, ends vs holds) is within this of 0.5 gets weight 0")
	agree := fs.Bool("engines-agree", true, "with clips from more than one synthesiser (eot-make's espeak_, flite_, festival_ names): prosodic evidence is used only if its AUC is beyond -min-auc-gap on the same side of 0.5 for each synthesiser's clips alone (a cue one engine's prosody shows and another's contradicts is that engine's, not speech's)")
	neutral := fs.Float64("neutral-ms", 0, "instead of -target-fcr: the threshold at which a pause with no evidence either way waits this long (e.g. 500, the fixed policy's silence)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *out == "" {
		return errors.New("want -out FILE and exactly one DIR argument")
	}
	if f.split == "" {
		f.split = "train"
	}
	dir := fs.Arg(0)
	train, err := preparePoints(dir, f, stderr)
	if err != nil {
		return err
	}
	samples, err := collectSamples(train.streams, f.workers)
	if err != nil {
		return err
	}
	printDiagnostics(stderr, samples, train.streams)
	if f.verbose {
		printFirstSamples(stderr, train.streams, samples)
	}
	off, chance := unusedEvidence(samples, train.streams, *minGap, *agree, stderr)
	w, dropped, err := fitSigned(samples, len(train.streams), *lambda, off)
	if err != nil {
		return err
	}
	if len(dropped) > 0 {
		fmt.Fprintf(stderr, "fit: against their expected sign, kept at the prior: %s\n", strings.Join(dropped, ", "))
	}
	var unused []string
	for j, o := range off {
		if o {
			w.W[j] = 0
		}
		if chance[j] {
			unused = append(unused, turn.EvidenceNames[j])
		}
	}
	if len(unused) > 0 {
		fmt.Fprintf(stderr, "fit: within %g of chance (AUC) on the training points, not used (weight 0): %s\n", *minGap, strings.Join(unused, ", "))
	}
	if *wordsPrior {
		for _, j := range []int{turn.EvWordsHold, turn.EvWordsEnd, turn.EvWordsHoldEarly, turn.EvWordsEndEarly} {
			w.W[j] = priorWeights[j]
		}
	}
	var op eotResult
	pick := fmt.Sprintf("-target-fcr %g", *target)
	if *neutral > 0 {
		w = tuned(w, *neutral, 1)
		pick = fmt.Sprintf("-neutral-ms %g", *neutral)
		rs, err := score(train.streams, []setting{{turn.PolicyAdaptive, pick, withWeights(w)}}, f.workers)
		if err != nil {
			return err
		}
		op = rs[0]
	} else if w, op, err = pickThreshold(train.streams, w, *target, f.workers); err != nil {
		return err
	}
	thr := w.Threshold
	holds, ends := countPoints(train.streams)
	if *wordsPrior {
		pick += " -words-prior"
	}
	if !*agree {
		pick += " -engines-agree=false"
	}
	w.About = fmt.Sprintf("vera-eval eot-train -split %s -lambda %g %s on %s (%d clips, %d holds, %d ends, %d samples; words %v; %s)",
		f.split, *lambda, pick, describeSet(dir), len(train.clips), holds, ends, len(samples), train.words, enginesOf(train.streams))
	b, err := w.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fitted on %d points (%d samples): neutral wait %.0f ms (threshold %.3g) gives cutoffs %.1f %%, latency mean %.0f ms (p50 %.0f) on them\n",
		len(train.streams), len(samples), neutralOf(w), thr, 100*op.FCR, op.LatencyMs, op.P50Ms)
	for i, n := range turn.EvidenceNames {
		fmt.Fprintf(stdout, "  %-17s %+.3f\n", n, w.W[i])
	}
	fmt.Fprintf(stdout, "  %-17s %+.3f\n", "bias", w.Bias)
	return nil
}

// unusedEvidence: the evidence the fit leaves at weight 0 (off): near
// chance on the training points (chance) and, with agree, the prosodic
// evidence the synthesisers disagree on (said on w).
func unusedEvidence(samples []eotSample, streams []eotStream, minGap float64, agree bool, w io.Writer) (off, chance [turn.NumEvidence]bool) {
	off = nearChance(samples, minGap)
	chance = off
	if agree {
		var split []string
		for j, o := range disagree(samples, streams, minGap) {
			if o && !off[j] {
				off[j] = true
				split = append(split, turn.EvidenceNames[j])
			}
		}
		if len(split) > 0 {
			fmt.Fprintf(w, "fit: the synthesisers disagree on (AUC per engine), not used: %s\n", strings.Join(split, ", "))
		}
	}
	return off, chance
}

func countPoints(ss []eotStream) (holds, ends int) {
	for _, s := range ss {
		if s.end {
			ends++
		} else {
			holds++
		}
	}
	return holds, ends
}

func describeSet(dir string) string {
	if strings.Contains(dir, "eot") || strings.Contains(dir, "turn") {
		return "the eot-make set"
	}
	return dir
}

func espeakVersion() string {
	b, err := exec.Command("espeak-ng", "--version").Output()
	if err != nil {
		return "espeak-ng unknown"
	}
	f := strings.Fields(string(b))
	for i, w := range f {
		if w == "text-to-speech:" && i+1 < len(f) {
			return "espeak-ng " + f[i+1]
		}
	}
	return strings.TrimSpace(string(b))
}

// observeConfig never ends a turn before 3 s: the pauses play out whole.
func observeConfig() turn.Config {
	c := turn.AdaptiveConfig()
	w := turn.Weights{Bias: -100, Threshold: 0.5}
	w.W[turn.EvSilence] = 0.01
	c.MaxSilenceMs, c.Weights = 3000, &w
	return c
}

// collectSamples plays every stream and samples the evidence every 100 ms
// of silence while the labelled silence lasts.
func collectSamples(streams []eotStream, workers int) ([]eotSample, error) {
	per := make([][]eotSample, len(streams))
	errs := make([]error, len(streams))
	sem := make(chan struct{}, max(workers, 1))
	done := make(chan struct{})
	for i := range streams {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; done <- struct{}{} }()
			per[i], errs[i] = streamSamples(&streams[i], i)
		}()
	}
	for range streams {
		<-done
	}
	var all []eotSample
	for i := range streams {
		if errs[i] != nil {
			return nil, errs[i]
		}
		all = append(all, per[i]...)
	}
	if len(all) == 0 {
		return nil, errors.New("no samples: no pause reached 200 ms of silence in a turn")
	}
	return all, nil
}

func streamSamples(st *eotStream, point int) ([]eotSample, error) {
	pc := pipeline.DefaultConfig()
	pc.Turn, pc.EchoGuard = observeConfig(), false
	in, err := pipeline.New(pc)
	if err != nil {
		return nil, err
	}
	det := in.Turn()
	var out []eotSample
	y := 0.0
	if st.end {
		y = 1
	}
	nextMark := int64(200 * msSamples)
	pi := 0
	emit := func(*turn.Event) {}
	for k := int64(0); k+audio.Frame10 <= int64(len(st.pcm)); k += audio.Frame10 {
		for pi < len(st.partials) && st.partials[pi].at <= k {
			in.SetTranscriptHeard(st.partials[pi].text, st.partials[pi].heard)
			pi++
		}
		in.Analyse(st.pcm[k:k+audio.Frame10], k, false, emit)
		now := k + audio.Frame10
		if now <= st.s {
			continue
		}
		if !st.end && now >= st.e {
			break
		}
		x, sil, ok := det.Evidence()
		if !ok {
			nextMark = 200 * msSamples
			continue
		}
		if sil >= nextMark && sil <= 3000*msSamples {
			var s eotSample
			for i, v := range x {
				s.x[i] = float64(v)
			}
			s.y, s.point = y, point
			out = append(out, s)
			nextMark = (sil/(100*msSamples) + 1) * 100 * msSamples
		}
	}
	return out, nil
}

// expectedSign is what each evidence may say: +1 only end, −1 only hold,
// 0 either. Prior knowledge, not fitted: a rising contour, a high or
// louder ending and a trailing "and" never argue for the end, a question's
// rise and a closing formula never against it. Evidence the fit gives the
// wrong sign is left out (a quirk of the training voices, not of speech).
var expectedSign = [turn.NumEvidence]int{
	turn.EvPitchFall: +1, turn.EvPitchMove: -1, turn.EvPitchEnd: -1, turn.EvEnergySlope: -1, turn.EvEnergyEnd: -1,
	turn.EvPitchSlope: -1, turn.EvFinalEnergy: -1, turn.EvPitchFloor: -1, turn.EvFinalFlat: -1,
	turn.EvTurnLength: +1, turn.EvWordsHold: -1, turn.EvWordsHoldEarly: -1, turn.EvWordsEnd: +1, turn.EvWordsEndEarly: +1, turn.EvSilence: +1,
}

// priorWeights are what phonetics says before any data (per unit of each
// evidence, see turn.EvidenceNames): a fall from the last accent, a
// falling last movement, a low final pitch and a fading final level say
// end; a trailing "and" or "um" says hold, strongly once the recogniser
// has heard the last word; a closing formula or a question says end. The
// fit's L2 penalty pulls toward these, not toward zero, so evidence the
// training voices do not show (espeak-ng's level barely moves at a full
// stop) keeps its prior weight instead of vanishing. Not tuned on any
// evaluation set.
var priorWeights = [turn.NumEvidence]float32{
	turn.EvPitchFall: 0.5, turn.EvPitchMove: -0.5, turn.EvPitchEnd: -0.5, turn.EvEnergySlope: -0.3, turn.EvEnergyEnd: -0.5,
	turn.EvPitchSlope: -0.5, turn.EvPitchFloor: -0.3,
	turn.EvTurnLength: 0.3, turn.EvWordsHold: -3, turn.EvWordsEnd: 2, turn.EvWordsHoldEarly: -1, turn.EvWordsEndEarly: 1, turn.EvSilence: 2,
}

// fitSigned fits, then refits without the evidence whose weight came out
// against its expected sign, one at a time, worst first.
func fitSigned(ss []eotSample, points int, lambda float64, off [turn.NumEvidence]bool) (turn.Weights, []string, error) {
	var dropped []string
	for {
		masked := ss
		if len(dropped) > 0 || off != ([turn.NumEvidence]bool{}) {
			masked = make([]eotSample, len(ss))
			for i, s := range ss {
				masked[i] = s
				for j := range s.x {
					if off[j] {
						masked[i].x[j] = 0
					}
				}
			}
		}
		w, err := fitLogistic(masked, points, lambda)
		if err != nil {
			return w, dropped, err
		}
		worst, by := -1, float32(0)
		for j, sg := range expectedSign {
			if v := w.W[j] * float32(sg); sg != 0 && !off[j] && v < by {
				worst, by = j, v
			}
		}
		if worst < 0 {
			return w, dropped, nil
		}
		off[worst] = true
		dropped = append(dropped, turn.EvidenceNames[worst])
	}
}

// fitLogistic fits bias and weights by Newton's method (IRLS) on samples
// weighted so every point counts once and both classes equally, with an
// L2 penalty lambda on the weights' distance from priorWeights.
func fitLogistic(ss []eotSample, points int, lambda float64) (turn.Weights, error) {
	const n = turn.NumEvidence + 1 // bias first
	perPoint := make([]int, points)
	var classN [2]float64
	for _, s := range ss {
		perPoint[s.point]++
	}
	seen := make([]bool, points)
	for _, s := range ss {
		if !seen[s.point] {
			seen[s.point] = true
			classN[int(s.y)]++
		}
	}
	if classN[0] == 0 || classN[1] == 0 {
		return turn.Weights{}, errors.New("training needs holds and ends")
	}
	vs := make([]float64, len(ss))
	for i, s := range ss {
		vs[i] = 1 / float64(perPoint[s.point]) / classN[int(s.y)] * float64(points) / 2
	}
	var beta [n]float64
	for iter := 0; iter < 50; iter++ {
		var g [n]float64
		var h [n][n]float64
		for i, s := range ss {
			xa := augment(s.x)
			z := 0.0
			for j := range n {
				z += beta[j] * xa[j]
			}
			p := 1 / (1 + math.Exp(-z))
			for j := range n {
				g[j] += vs[i] * (p - s.y) * xa[j]
				for k := range n {
					h[j][k] += vs[i] * p * (1 - p) * xa[j] * xa[k]
				}
			}
		}
		for j := 1; j < n; j++ {
			g[j] += lambda * (beta[j] - float64(priorWeights[j-1]))
			h[j][j] += lambda
		}
		h[0][0] += 1e-9
		step, err := solve(h, g)
		if err != nil {
			return turn.Weights{}, err
		}
		var norm float64
		for j := range n {
			beta[j] -= step[j]
			norm += step[j] * step[j]
		}
		if norm < 1e-12 {
			break
		}
	}
	w := turn.Weights{Bias: float32(beta[0]), Threshold: 0.5}
	for j := range turn.NumEvidence {
		w.W[j] = float32(beta[j+1])
	}
	if err := w.Validate(); err != nil {
		return w, fmt.Errorf("the fit is unusable: %w", err)
	}
	return w, nil
}

func augment(x [turn.NumEvidence]float64) [turn.NumEvidence + 1]float64 {
	var a [turn.NumEvidence + 1]float64
	a[0] = 1
	copy(a[1:], x[:])
	return a
}

// solve solves h·x = g by Gaussian elimination with partial pivoting.
func solve(h [turn.NumEvidence + 1][turn.NumEvidence + 1]float64, g [turn.NumEvidence + 1]float64) ([turn.NumEvidence + 1]float64, error) {
	const n = turn.NumEvidence + 1
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(h[r][c]) > math.Abs(h[p][c]) {
				p = r
			}
		}
		if math.Abs(h[p][c]) < 1e-14 {
			return g, errors.New("singular system in the fit")
		}
		h[c], h[p] = h[p], h[c]
		g[c], g[p] = g[p], g[c]
		for r := c + 1; r < n; r++ {
			f := h[r][c] / h[c][c]
			for k := c; k < n; k++ {
				h[r][k] -= f * h[c][k]
			}
			g[r] -= f * g[c]
		}
	}
	var x [n]float64
	for r := n - 1; r >= 0; r-- {
		s := g[r]
		for k := r + 1; k < n; k++ {
			s -= h[r][k] * x[k]
		}
		x[r] = s / h[r][r]
	}
	return x, nil
}

// pickThreshold runs the real detector with w at every neutral wait and
// gain of the grids (default min and max waits) and returns the weights of
// the fastest within the target.
func pickThreshold(streams []eotStream, w turn.Weights, target float64, workers int) (turn.Weights, eotResult, error) {
	var sets []setting
	var ws []turn.Weights
	for _, g := range gainGrid {
		for _, n := range neutralGrid {
			c := turn.AdaptiveConfig()
			ww := tuned(w, n, g)
			c.Weights = &ww
			sets = append(sets, setting{turn.PolicyAdaptive, fmt.Sprint(n, g), c})
			ws = append(ws, ww)
		}
	}
	rs, err := score(streams, sets, workers)
	if err != nil {
		return w, eotResult{}, err
	}
	best := -1
	for i, r := range rs {
		if r.FCR <= target && (best < 0 || r.LatencyMs < rs[best].LatencyMs) {
			best = i
		}
	}
	if best < 0 { // nothing within the target: the most careful
		best = len(rs) - 1
		for i, r := range rs {
			if r.FCR < rs[best].FCR {
				best = i
			}
		}
	}
	return ws[best], rs[best], nil
}

// printDiagnostics shows, per evidence, its mean for holds and ends at the
// first sample of each pause and how well it alone ranks ends above holds
// (AUC), over all holds and per kind of hold.
func printDiagnostics(w io.Writer, ss []eotSample, streams []eotStream) {
	first := map[int]eotSample{}
	for _, s := range ss {
		if _, ok := first[s.point]; !ok {
			first[s.point] = s
		}
	}
	kinds := []string{"", "continuation", "sentence", "comma"}
	fmt.Fprintf(w, "%-17s %8s %8s %6s %6s %6s %6s  (AUC: ends vs all holds, continuation, sentence, comma)\n", "evidence", "hold", "end", "AUC", "cont", "sent", "comma")
	for j, name := range turn.EvidenceNames {
		fmt.Fprintf(w, "%-17s", name)
		for ki, kind := range kinds {
			var h, e []float64
			for p, s := range first {
				if s.y == 1 {
					e = append(e, s.x[j])
				} else if kind == "" || streams[p].kind == kind {
					h = append(h, s.x[j])
				}
			}
			if ki == 0 {
				fmt.Fprintf(w, " %8.3f %8.3f", mean(h), mean(e))
			}
			fmt.Fprintf(w, " %6.3f", auc(e, h))
		}
		fmt.Fprintln(w)
	}
	engines, aucs := firstAUCByEngine(ss, streams)
	if len(engines) > 1 {
		fmt.Fprintf(w, "%-17s", "AUC by engine")
		for _, e := range engines {
			fmt.Fprintf(w, " %8s", e)
		}
		fmt.Fprintln(w)
		for j, name := range turn.EvidenceNames {
			fmt.Fprintf(w, "%-17s", name)
			for _, e := range engines {
				fmt.Fprintf(w, " %8.3f", aucs[e][j])
			}
			fmt.Fprintln(w)
		}
	}
}

// engineOf is the synthesiser of an eot-make clip, from its name
// ("espeak_en_us_03" → "espeak"); other clips are "other".
func engineOf(clip string) string {
	for _, e := range []string{"espeak", "flite", "festival"} {
		if strings.HasPrefix(clip, e+"_") {
			return e
		}
	}
	return "other"
}

// enginesOf names the synthesisers (and their versions) of the streams.
func enginesOf(streams []eotStream) string {
	seen := map[string]bool{}
	var out []string
	for _, st := range streams {
		e := engineOf(st.clip)
		if seen[e] {
			continue
		}
		seen[e] = true
		switch e {
		case "espeak":
			out = append(out, espeakVersion())
		case "flite", "festival":
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return "no synthesiser"
	}
	return strings.Join(out, ", ")
}

// firstAUCByEngine is, per engine, each evidence's AUC (ends vs holds) on
// the first sample of each pause of that engine's clips.
func firstAUCByEngine(ss []eotSample, streams []eotStream) (engines []string, aucs map[string][turn.NumEvidence]float64) {
	first := map[int]eotSample{}
	for _, s := range ss {
		if _, ok := first[s.point]; !ok {
			first[s.point] = s
		}
	}
	by := map[string][]eotSample{}
	for p, s := range first {
		e := engineOf(streams[p].clip)
		if _, ok := by[e]; !ok {
			engines = append(engines, e)
		}
		by[e] = append(by[e], s)
	}
	sort.Strings(engines)
	aucs = map[string][turn.NumEvidence]float64{}
	for e, list := range by {
		var a [turn.NumEvidence]float64
		for j := range turn.NumEvidence {
			var h, en []float64
			for _, s := range list {
				if s.y == 1 {
					en = append(en, s.x[j])
				} else {
					h = append(h, s.x[j])
				}
			}
			a[j] = auc(en, h)
		}
		aucs[e] = a
	}
	return engines, aucs
}

// disagree marks the prosodic evidence that, with more than one
// synthesiser in the training points, is not beyond gap from chance on the
// same side for every one of them.
func disagree(ss []eotSample, streams []eotStream, gap float64) [turn.NumEvidence]bool {
	var off [turn.NumEvidence]bool
	engines, aucs := firstAUCByEngine(ss, streams)
	if len(engines) < 2 {
		return off
	}
	for j := turn.EvPitchFall; j < turn.EvTurnLength; j++ {
		hi, lo := true, true
		for _, e := range engines {
			a := aucs[e][j]
			hi = hi && a >= 0.5+gap
			lo = lo && a <= 0.5-gap
		}
		off[j] = !hi && !lo
	}
	return off
}

// nearChance marks the prosodic evidence (not the words, the turn's
// length or the silence) whose AUC on the first sample of each training
// pause is within gap of 0.5: too weak on these voices to weigh.
func nearChance(ss []eotSample, gap float64) [turn.NumEvidence]bool {
	var off [turn.NumEvidence]bool
	first := map[int]eotSample{}
	for _, s := range ss {
		if _, ok := first[s.point]; !ok {
			first[s.point] = s
		}
	}
	for j := turn.EvPitchFall; j < turn.EvTurnLength; j++ {
		var h, e []float64
		for _, s := range first {
			if s.y == 1 {
				e = append(e, s.x[j])
			} else {
				h = append(h, s.x[j])
			}
		}
		a := auc(e, h)
		off[j] = a > 0.5-gap && a < 0.5+gap
	}
	return off
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}

// auc is the chance that a random a outranks a random b (ties half).
func auc(a, b []float64) float64 {
	var wins float64
	for _, x := range a {
		for _, y := range b {
			switch {
			case x > y:
				wins++
			case x == y:
				wins += 0.5
			}
		}
	}
	return wins / float64(max(len(a)*len(b), 1))
}

// printFirstSamples lists each point's evidence at its first sample.
func printFirstSamples(w io.Writer, streams []eotStream, ss []eotSample) {
	seen := map[int]bool{}
	for _, s := range ss {
		if seen[s.point] {
			continue
		}
		seen[s.point] = true
		st := streams[s.point]
		fmt.Fprintf(w, "%-28s %6d %-4s %-12s", st.clip, st.at/msSamples, map[bool]string{true: "end", false: "hold"}[st.end], st.kind)
		for j := range turn.NumEvidence - 1 {
			fmt.Fprintf(w, " %6.2f", s.x[j])
		}
		fmt.Fprintln(w)
	}
}

// withWeights is the default turn config with weights w.
func withWeights(w turn.Weights) turn.Config {
	c := turn.AdaptiveConfig()
	c.Weights = &w
	return c
}
