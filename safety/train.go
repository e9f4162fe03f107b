package safety

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// TrainConfig sets how `vera-eval safety-train` fits the model tier.
// DefaultTrainConfig is what produced the committed model.txt.
type TrainConfig struct {
	NMin, NMax     int     // character n-gram sizes
	Window, Stride int     // scoring window over a long utterance, in words
	MinDocs        int     // an n-gram must occur in this many training utterances
	Epochs         int     // passes over the training set
	Alpha, Beta    float64 // FTRL-Proximal learning rate parameters
	L1, L2         float64 // regularisation (L1 makes the weights sparse)
	Seed           uint64  // shuffling; training is deterministic for a seed
	Folds          int     // cross-validation folds for the thresholds
	// MaxFalseAlarm: the shown threshold is the lowest whose out-of-fold
	// false-alarm rate on gold none stays at or below this.
	MaxFalseAlarm float64
	// MaxNoneCrisis: the crisis threshold is the lowest whose out-of-fold
	// share of gold none labelled crisis stays at or below this.
	MaxNoneCrisis float64
	// NoneWeight scales the loss of gold-none utterances in the shown head.
	NoneWeight float64
}

// DefaultTrainConfig returns the configuration of the committed model.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{
		NMin: 3, NMax: 5, Window: 24, Stride: 12, MinDocs: 2, Epochs: 12,
		Alpha: 0.1, Beta: 1, L1: 3, L2: 1, Seed: 13, Folds: 5,
		MaxFalseAlarm: 0.034, MaxNoneCrisis: 0.01, NoneWeight: 1,
	}
}

// TrainedModel is the result of TrainModel, ready to be written as model.txt.
type TrainedModel struct {
	cfg     TrainConfig
	grams   [][]byte // feature index → n-gram
	vocab   map[string]int32
	w       [2][]float64
	bias    [2]float64
	thresh  [2]float64
	oof     TrainStats
	Sources []string // free text recorded in the header (files, digests)
}

// TrainStats are the out-of-fold figures on the training split at the
// chosen thresholds.
type TrainStats struct {
	N                          int
	FalseAlarm, CrisisShown    float64
	CrisisRecall, ElevatedSeen float64
}

// Stats returns the out-of-fold figures behind the thresholds.
func (t *TrainedModel) Stats() TrainStats { return t.oof }

type trainEx struct {
	feats []int32 // with repeats: counts
	y     [2]int8 // shown, crisis; -1 = not trained on this head
}

// TrainModel fits the model tier on samples. It is deterministic: the same
// samples in the same order and the same cfg give the same model.
func TrainModel(samples []Sample, cfg TrainConfig) (*TrainedModel, error) {
	if len(samples) < 2*cfg.Folds || cfg.Folds < 2 {
		return nil, fmt.Errorf("safety: train: %d samples, %d folds: too few", len(samples), cfg.Folds)
	}
	grams, exs := trainFeatures(samples, cfg)
	t := &TrainedModel{cfg: cfg, grams: grams, vocab: trainVocab(samples, cfg.MinDocs)}
	// Thresholds from out-of-fold scores, so they are not fitted to the
	// very utterances the weights memorised.
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5afe))
	fold := make([]int, len(exs))
	for i := range fold {
		fold[i] = i % cfg.Folds
	}
	rng.Shuffle(len(fold), func(i, j int) { fold[i], fold[j] = fold[j], fold[i] })
	oof := make([][2]float64, len(exs))
	for k := 0; k < cfg.Folds; k++ {
		var tr []int
		for i := range exs {
			if fold[i] != k {
				tr = append(tr, i)
			}
		}
		w, b := fitHeads(exs, tr, len(grams), cfg)
		for i := range exs {
			if fold[i] == k {
				oof[i] = [2]float64{dot(w[0], exs[i].feats) + b[0], dot(w[1], exs[i].feats) + b[1]}
			}
		}
	}
	// The model only has to add what the rules and frames miss, so the
	// thresholds spend the false-alarm budget that those tiers leave.
	bd, _ := newDetector(ruleDefs, 0)
	bd.model = &model{thresh: [2]float32{float32(math.Inf(1)), float32(math.Inf(1))}, vocab: t.vocab, lex: newVocab(t.vocab),
		nmin: 1, nmax: 1, window: 1 << 20, stride: 1} // rules and frames only, with the training vocabulary
	base := make([]Level, len(samples))
	every := make([]bool, len(samples))
	norisk := make([]bool, len(samples))
	for i, s := range samples {
		base[i] = bd.analyze(s.Text).level
		core, _ := laughTail(s.Text)
		ctx := bd.otherTiers(core, nil, true).ctx
		every[i] = ctx.everyday || ctx.context
		norisk[i] = !ctx.modelMayRaise()
	}
	t.thresh, t.oof = chooseThresholds(samples, oof, base, every, norisk, cfg)
	all := make([]int, len(exs))
	for i := range all {
		all[i] = i
	}
	t.w, t.bias = fitHeads(exs, all, len(grams), cfg)
	return t, nil
}

// trainFeatures maps every utterance to feature indices, keeping features
// seen in at least cfg.MinDocs utterances. Indices follow the features'
// byte order, so they do not depend on sample order.
func trainFeatures(samples []Sample, cfg TrainConfig) ([][]byte, []trainEx) {
	docs := map[string]int{}
	feats := make([][]string, len(samples))
	labels := make([][2]int8, len(samples))
	var x extractor
	x.known = newVocab(trainVocab(samples, cfg.MinDocs))
	for i, s := range samples {
		core, laugh := laughTail(s.Text)
		labels[i] = [2]int8{b2i(s.Level >= LevelElevated), b2i(s.Level == LevelCrisis)}
		if laugh && s.Level == LevelElevated {
			// "… lol" at elevated: the utterance without the laugh may be a
			// crisis the laugh capped, so the crisis head learns nothing here.
			labels[i][1] = -1
		}
		seen := map[string]bool{}
		x.run(core, nil, cfg.NMin, cfg.NMax, func(g []byte) {
			feats[i] = append(feats[i], string(g))
			if !seen[string(g)] {
				seen[string(g)] = true
				docs[string(g)]++
			}
		})
	}
	var keep []string
	for g, n := range docs {
		if n >= cfg.MinDocs {
			keep = append(keep, g)
		}
	}
	sort.Strings(keep)
	index := make(map[string]int32, len(keep))
	grams := make([][]byte, len(keep))
	for i, g := range keep {
		index[g] = int32(i)
		grams[i] = []byte(g)
	}
	exs := make([]trainEx, len(samples))
	for i := range samples {
		exs[i].y = labels[i]
		for _, g := range feats[i] {
			if j, ok := index[g]; ok {
				exs[i].feats = append(exs[i].feats, j)
			}
		}
	}
	return grams, exs
}

func b2i(b bool) int8 {
	if b {
		return 1
	}
	return 0
}

func dot(w []float64, feats []int32) float64 {
	s := 0.0
	for _, j := range feats {
		s += w[j]
	}
	return s
}

// fitHeads trains both heads with FTRL-Proximal on the examples idx.
func fitHeads(exs []trainEx, idx []int, nfeat int, cfg TrainConfig) ([2][]float64, [2]float64) {
	var out [2][]float64
	var bias [2]float64
	for head := 0; head < 2; head++ {
		f := newFTRL(nfeat+1, cfg) // the last weight is the bias
		order := slices.Clone(idx)
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(head)+1))
		for ep := 0; ep < cfg.Epochs; ep++ {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, i := range order {
				e := &exs[i]
				y := e.y[head]
				if y < 0 {
					continue
				}
				wt := 1.0
				if head == 0 && y == 0 {
					wt = cfg.NoneWeight
				}
				f.step(e.feats, int32(nfeat), float64(y), wt)
			}
		}
		out[head] = make([]float64, nfeat)
		for j := 0; j < nfeat; j++ {
			out[head][j] = f.weight(j)
		}
		bias[head] = f.weight(nfeat)
	}
	return out, bias
}

type ftrl struct {
	z, n                []float64
	alpha, beta, l1, l2 float64
	scratch             []float64
	scratchIdx          []int32
}

func newFTRL(n int, cfg TrainConfig) *ftrl {
	return &ftrl{z: make([]float64, n), n: make([]float64, n), alpha: cfg.Alpha, beta: cfg.Beta, l1: cfg.L1, l2: cfg.L2}
}

func (f *ftrl) weight(j int) float64 {
	z := f.z[j]
	if math.Abs(z) <= f.l1 {
		return 0
	}
	sgn := 1.0
	if z < 0 {
		sgn = -1
	}
	return -(z - sgn*f.l1) / ((f.beta+math.Sqrt(f.n[j]))/f.alpha + f.l2)
}

// step is one FTRL-Proximal update on a binary-count example whose last
// feature, bias, is always on.
func (f *ftrl) step(feats []int32, bias int32, y, wt float64) {
	f.scratchIdx = append(append(f.scratchIdx[:0], feats...), bias)
	f.scratch = f.scratch[:0]
	z := 0.0
	for _, j := range f.scratchIdx {
		w := f.weight(int(j))
		f.scratch = append(f.scratch, w)
		z += w
	}
	p := 1 / (1 + math.Exp(-z))
	g := float64(wt * (p - y))
	for k, j := range f.scratchIdx {
		n := f.n[j]
		sigma := (math.Sqrt(n+float64(g*g)) - math.Sqrt(n)) / f.alpha
		f.z[j] += g - float64(sigma*f.scratch[k])
		f.n[j] = n + float64(g*g)
	}
}

// chooseThresholds picks the logit thresholds from out-of-fold scores,
// given the level the other tiers already reach (base) and whether the
// utterance has everyday words (every: the model then counts one level
// less, see Detector.analyze): the crisis threshold is the lowest that keeps
// the share of gold none labelled crisis by any tier at or below
// MaxNoneCrisis; the shown threshold then the lowest that keeps the
// false-alarm rate on gold none (a card from any tier) at or below
// MaxFalseAlarm.
func chooseThresholds(samples []Sample, oof [][2]float64, base []Level, every, norisk []bool, cfg TrainConfig) ([2]float64, TrainStats) {
	level := func(i int, th [2]float64) Level {
		if norisk[i] {
			return base[i] // the model alone cannot raise (Detector.analyze)
		}
		m := LevelNone
		switch {
		case oof[i][1] >= th[1]:
			m = LevelCrisis
		case oof[i][0] >= th[0]:
			m = LevelElevated
		}
		if every[i] && m > LevelNone {
			m--
		}
		return MaxLevel(m, base[i])
	}
	var none []int
	for i, s := range samples {
		if s.Level == LevelNone {
			none = append(none, i)
		}
	}
	n := float64(len(none))
	inf := math.Inf(1)
	var cand []float64
	used := 0
	for _, i := range none {
		switch {
		case base[i] == LevelCrisis:
			used++
		case !every[i] && !norisk[i]:
			cand = append(cand, oof[i][1])
		}
	}
	var th [2]float64
	th[1] = lowestWithin(cand, max(cfg.MaxNoneCrisis*n-float64(used), 0)/float64(max(len(cand), 1)))
	cand, used = cand[:0], 0
	for _, i := range none {
		switch {
		case level(i, [2]float64{inf, th[1]}) >= LevelElevated:
			used++
		case !every[i] && !norisk[i]:
			cand = append(cand, oof[i][0])
		}
	}
	th[0] = lowestWithin(cand, max(cfg.MaxFalseAlarm*n-float64(used), 0)/float64(max(len(cand), 1)))
	st := TrainStats{N: len(samples)}
	var fa, cs, cr, el, nn, nc, ne int
	for i, s := range samples {
		l := level(i, th)
		switch s.Level {
		case LevelNone:
			nn++
			if l > LevelNone {
				fa++
			}
		case LevelCrisis:
			nc++
			if l > LevelNone {
				cs++
			}
			if l == LevelCrisis {
				cr++
			}
		case LevelElevated:
			ne++
			if l > LevelNone {
				el++
			}
		}
	}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	st.FalseAlarm, st.CrisisShown, st.CrisisRecall, st.ElevatedSeen = ratio(fa, nn), ratio(cs, nc), ratio(cr, nc), ratio(el, ne)
	return th, st
}

// WriteTo writes the model in the model.txt format: a commented header, the
// @ lines parseModel needs, then one "n-gram TAB shown TAB crisis" line per
// non-zero feature in byte order of the n-gram. Weights are rounded to 4
// significant digits, so retraining gives a readable diff.
func (t *TrainedModel) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	cw := &countWriter{w: bw}
	c := t.cfg
	fmt.Fprintf(cw, "# VERA local crisis detector, model tier (safety/model.go). Generated by\n")
	fmt.Fprintf(cw, "# `vera-eval safety-train`; do not edit by hand, retrain (see testdata/safety/README.md).\n")
	fmt.Fprintf(cw, "# Columns: feature (see safety/features.go: g: character n-gram, '<' '>' the ends; w: word;\n")
	fmt.Fprintf(cw, "# b: word pair; c: concept; p: t: concept pair, triple; f: frame), weight of the shown head\n")
	fmt.Fprintf(cw, "# (elevated or crisis vs none), weight of the crisis head. @vocab: training words and counts.\n")
	fmt.Fprintf(cw, "# config: ngram %d-%d window %d/%d min_docs %d epochs %d alpha %g beta %g l1 %g l2 %g seed %d folds %d\n",
		c.NMin, c.NMax, c.Window, c.Stride, c.MinDocs, c.Epochs, c.Alpha, c.Beta, c.L1, c.L2, c.Seed, c.Folds)
	fmt.Fprintf(cw, "# targets: max_false_alarm %g max_none_crisis %g none_weight %g\n", c.MaxFalseAlarm, c.MaxNoneCrisis, c.NoneWeight)
	for _, s := range t.Sources {
		fmt.Fprintf(cw, "# source: %s\n", s)
	}
	o := t.oof
	fmt.Fprintf(cw, "# out-of-fold on %d training utterances: false alarms %.3f, crisis shown %.3f, crisis recall %.3f, elevated shown %.3f\n",
		o.N, o.FalseAlarm, o.CrisisShown, o.CrisisRecall, o.ElevatedSeen)
	fmt.Fprintf(cw, "@ngram\t%d\t%d\n@window\t%d\t%d\n", c.NMin, c.NMax, c.Window, c.Stride)
	fmt.Fprintf(cw, "@bias\t%s\t%s\n@threshold\t%s\t%s\n", fmtW(t.bias[0]), fmtW(t.bias[1]), fmtW(t.thresh[0]), fmtW(t.thresh[1]))
	words := make([]string, 0, len(t.vocab))
	for w := range t.vocab {
		words = append(words, w)
	}
	sort.Strings(words)
	for len(words) > 0 {
		k := min(len(words), 16)
		var b strings.Builder
		for i, w := range words[:k] {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s:%d", w, t.vocab[w])
		}
		fmt.Fprintf(cw, "@vocab\t%s\t0\n", b.String())
		words = words[k:]
	}
	for j, g := range t.grams {
		a, b := round4(t.w[0][j]), round4(t.w[1][j])
		if a == 0 && b == 0 {
			continue
		}
		fmt.Fprintf(cw, "%s\t%s\t%s\n", quoteGram(g), fmtW(a), fmtW(b))
	}
	if err := bw.Flush(); err != nil {
		return cw.n, err
	}
	return cw.n, cw.err
}

func round4(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 4, 64), 64)
	return v
}

func fmtW(f float64) string { return strconv.FormatFloat(round4(f), 'g', -1, 64) }

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// lowestWithin returns the lowest threshold t such that at most share of
// xs are ≥ t.
func lowestWithin(xs []float64, share float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	sort.Float64s(xs)
	allowed := int(share * float64(len(xs)))
	k := len(xs) - 1 - allowed // the highest score that must stay below
	if k < 0 {
		return xs[0]
	}
	return math.Nextafter(xs[k], math.Inf(1))
}

// trainVocab is every normalised word in at least minDocs utterances, with
// the number of utterances it is in: the words the repair step (repair.go)
// must not "correct", and how likely each is as a piece of a split word.
func trainVocab(samples []Sample, minDocs int) map[string]int32 {
	df := map[string]int{}
	for _, s := range samples {
		seen := map[string]bool{}
		for _, t := range normalizeAs(s.Text, nil, false) { // as typed: German particles ("ja") count
			if t != clauseMark && !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	v := map[string]int32{}
	for w, n := range df {
		if n >= minDocs {
			v[w] = int32(n)
		}
	}
	return v
}
