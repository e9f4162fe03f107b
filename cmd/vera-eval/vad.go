package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
	"github.com/veraneural/vera-gateway/audio/wavio"
)

func init() {
	register("vad", command{
		summary: "score the VAD and turn detector against labelled audio: vad [-json] [-noise DIR] [-snr 10,0] [-collar-ms 100] DIR",
		run:     runVAD,
	})
}

// The scoring grid is the VAD's: 10 ms frames at the internal rate.
const (
	frameSamples = audio.Frame10
	sampleRate   = audio.SampleRate
	frameMs      = 1000 * frameSamples / sampleRate
)

// segment is one reference speech region in milliseconds.
type segment struct {
	StartMs int `json:"start_ms"`
	EndMs   int `json:"end_ms"`
}

type clip struct {
	name string
	pcm  []int16
	segs []segment
}

// counts is a confusion matrix over scored frames.
type counts struct{ tp, fp, fn, tn int }

func (c *counts) add(o counts) { c.tp += o.tp; c.fp += o.fp; c.fn += o.fn; c.tn += o.tn }

type conditionResult struct {
	Name      string  `json:"name"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	FAR       float64 `json:"far"`
	Frames    int     `json:"frames"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	TN        int     `json:"tn"`
}

func result(name string, c counts) conditionResult {
	r := conditionResult{Name: name, Frames: c.tp + c.fp + c.fn + c.tn, TP: c.tp, FP: c.fp, FN: c.fn, TN: c.tn}
	r.Precision = ratio(c.tp, c.tp+c.fp)
	r.Recall = ratio(c.tp, c.tp+c.fn)
	if r.Precision+r.Recall > 0 {
		r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
	}
	r.FAR = ratio(c.fp, c.fp+c.tn)
	return r
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

type eosStats struct {
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	N       int     `json:"n"`
	Missed  int     `json:"missed"`
	MeanErr float64 `json:"mean_signed"`
}

type vadReport struct {
	Dir          string            `json:"dir"`
	CollarMs     int               `json:"collar_ms"`
	Threshold    float64           `json:"threshold"`
	Clips        []string          `json:"clips"`
	Conditions   []conditionResult `json:"conditions"`
	Overall      conditionResult   `json:"overall"`
	AlwaysSpeech []conditionResult `json:"always_speech"`
	EOS          eosStats          `json:"end_of_speech_error_ms"`
	// StartDelay is SpeechStarted's decision time minus the reference start
	// (how late a turn, and so a barge-in, is noticed); mean_signed is its mean.
	StartDelay   eosStats `json:"speech_started_delay_ms"`
	AudioSeconds float64  `json:"audio_seconds"`
	CostPerSecMs float64  `json:"cost_ms_per_audio_second"`
}

type vadFlags struct {
	json      bool
	noiseDir  string
	snrs      []float64
	collarMs  int
	threshold float64
	dump      string
	fit       bool
}

// vadConfig is the VAD configuration the eval uses; -weights and -release
// override the defaults for tuning experiments.
var vadConfig = vad.DefaultConfig()

func runVAD(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vad", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f vadFlags
	snr := fs.String("snr", "10,0", "comma-separated SNRs in dB for the noise mixes (empty: clean only)")
	fs.BoolVar(&f.json, "json", false, "print one JSON object instead of a table")
	fs.StringVar(&f.noiseDir, "noise", "", "directory holding noise_*.16k.wav (default: DIR)")
	fs.IntVar(&f.collarMs, "collar-ms", 100, "frames whose centre is within this many ms of a reference boundary are not scored")
	fs.Float64Var(&f.threshold, "threshold", 0.5, "speech probability at or above which a frame is speech")
	fs.StringVar(&f.dump, "dump", "", "also write every condition's mixed WAVs and the frame grid (manifest.json) to this directory, for the anchor scorers")
	fs.BoolVar(&f.fit, "fit", false, "fit the VAD's logistic weights on DIR (leave-one-clip-out report) instead of scoring")
	weights := fs.String("weights", "", "tuning: override the VAD clean weights as bias,w0,...")
	noisyWeights := fs.String("noisy-weights", "", "tuning: override the VAD noisy weights as bias,w0,...")
	fs.Float64Var(&fitNegWeight, "fit-neg-weight", fitNegWeight, "tuning: weight of non-speech frames of clean streams in -fit")
	fs.Float64Var(&fitNegWeightNoisy, "fit-neg-weight-noisy", fitNegWeightNoisy, "tuning: weight of non-speech frames of noisy streams in -fit")
	release := fs.Int("release", -1, "tuning: override the VAD release in frames")
	smooth := fs.Int("smooth", 0, "tuning: override the VAD logit smoothing in frames")
	if err := fs.Parse(args); err != nil {
		return err
	}
	vadConfig = vad.DefaultConfig()
	for _, o := range []struct {
		flag string
		dst  *vad.Weights
	}{{*weights, &vadConfig.Weights}, {*noisyWeights, &vadConfig.NoisyWeights}} {
		if o.flag == "" {
			continue
		}
		ws, err := parseSNRs(o.flag)
		if err != nil || len(ws) != vad.NumFeatures+1 {
			return fmt.Errorf("-weights/-noisy-weights: want %d numbers", vad.NumFeatures+1)
		}
		o.dst.Bias = float32(ws[0])
		for i := range vad.NumFeatures {
			o.dst.W[i] = float32(ws[i+1])
		}
	}
	if *smooth > 0 {
		vadConfig.SmoothFrames = *smooth
	}
	if *release >= 0 {
		vadConfig.ReleaseFrames = *release
	}
	if err := vadConfig.Validate(); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want exactly one DIR argument")
	}
	dir := fs.Arg(0)
	if f.noiseDir == "" {
		f.noiseDir = dir
	}
	if f.collarMs < 0 {
		return fmt.Errorf("-collar-ms %d: must be >= 0", f.collarMs)
	}
	if !(f.threshold > 0 && f.threshold < 1) {
		return fmt.Errorf("-threshold %v: must be in (0,1)", f.threshold)
	}
	var err error
	if f.snrs, err = parseSNRs(*snr); err != nil {
		return err
	}
	clips, err := loadClips(dir)
	if err != nil {
		return err
	}
	conds, err := buildConditions(clips, f.noiseDir, f.snrs)
	if err != nil {
		return err
	}
	if f.dump != "" {
		if err := dumpConditions(f.dump, conds, f.collarMs); err != nil {
			return err
		}
	}
	if f.fit {
		return fitWeights(stdout, conds, f.collarMs)
	}
	rep, err := evaluate(dir, clips, conds, f)
	if err != nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printTable(stdout, rep)
	return nil
}

func parseSNRs(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("-snr: %q is not a number", p)
		}
		out = append(out, v)
	}
	return out, nil
}

// loadClips reads every NAME.16k.wav that has a NAME.segments.json in dir.
func loadClips(dir string) ([]clip, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.segments.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(matches)
	var clips []clip
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".segments.json")
		wavPath := filepath.Join(dir, name+".16k.wav")
		if _, err := os.Stat(wavPath); err != nil {
			continue // labels without audio: not a clip
		}
		raw, err := os.ReadFile(m)
		if err != nil {
			return nil, err
		}
		var segs []segment
		if err := json.Unmarshal(raw, &segs); err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		for i, s := range segs {
			if s.EndMs <= s.StartMs || (i > 0 && s.StartMs < segs[i-1].EndMs) {
				return nil, fmt.Errorf("%s: segment %d [%d,%d) is empty, unsorted or overlapping", m, i, s.StartMs, s.EndMs)
			}
		}
		pcm, err := wavio.ReadWAVFile(wavPath, sampleRate)
		if err != nil {
			return nil, err
		}
		clips = append(clips, clip{name: name, pcm: pcm, segs: segs})
	}
	if len(clips) == 0 {
		return nil, fmt.Errorf("%s: no NAME.16k.wav with NAME.segments.json", dir)
	}
	return clips, nil
}

// condition is one clip set under one noise mix.
type condition struct {
	name  string
	clips []clip
}

func buildConditions(clips []clip, noiseDir string, snrs []float64) ([]condition, error) {
	conds := []condition{{name: "clean", clips: clips}}
	if len(snrs) == 0 {
		return conds, nil
	}
	noises, err := filepath.Glob(filepath.Join(noiseDir, "noise_*.16k.wav"))
	if err != nil {
		return nil, err
	}
	sort.Strings(noises)
	for _, np := range noises {
		noise, err := wavio.ReadWAVFile(np, sampleRate)
		if err != nil {
			return nil, err
		}
		if len(noise) == 0 {
			return nil, fmt.Errorf("%s: empty noise file", np)
		}
		base := strings.TrimSuffix(filepath.Base(np), ".16k.wav")
		for _, snr := range snrs {
			c := condition{name: fmt.Sprintf("%s@%sdB", base, strconv.FormatFloat(snr, 'f', -1, 64))}
			for _, cl := range clips {
				c.clips = append(c.clips, clip{name: cl.name, segs: cl.segs, pcm: mixAt(cl.pcm, cl.segs, noise, snr)})
			}
			conds = append(conds, c)
		}
	}
	return conds, nil
}

// frameLabels returns per 10 ms frame: 1 speech, 0 non-speech, -1 not scored
// (centre within collarMs of a reference boundary). A frame is speech when
// its centre lies inside a segment [start, end).
func frameLabels(nSamples int, segs []segment, collarMs int) []int8 {
	n := nSamples / frameSamples
	out := make([]int8, n)
	for i := range n {
		c := float64(i*frameMs) + frameMs/2.0
		var lab int8
		for _, s := range segs {
			if c >= float64(s.StartMs) && c < float64(s.EndMs) {
				lab = 1
			}
			if math.Abs(c-float64(s.StartMs)) < float64(collarMs) || math.Abs(c-float64(s.EndMs)) < float64(collarMs) {
				lab = -1
				break
			}
		}
		out[i] = lab
	}
	return out
}

// mixAt adds noise (looped from its start to the clip's length) scaled so
// that the clean clip's mean power over its reference speech frames divided
// by the noise's mean power equals snrDb.
func mixAt(clean []int16, segs []segment, noise []int16, snrDb float64) []int16 {
	labels := frameLabels(len(clean), segs, 0)
	var ps float64
	var ns int
	for i, l := range labels {
		if l != 1 {
			continue
		}
		for _, s := range clean[i*frameSamples : (i+1)*frameSamples] {
			ps += float64(s) * float64(s)
		}
		ns += frameSamples
	}
	var pn float64
	for i := range clean {
		v := float64(noise[i%len(noise)])
		pn += v * v
	}
	out := make([]int16, len(clean))
	if ns == 0 || pn == 0 {
		copy(out, clean)
		return out
	}
	ps /= float64(ns)
	pn /= float64(len(clean))
	g := math.Sqrt(ps / (pn * math.Pow(10, snrDb/10)))
	for i, s := range clean {
		v := math.Round(float64(s) + g*float64(noise[i%len(noise)]))
		out[i] = int16(max(-32768, min(32767, v)))
	}
	return out
}

// vadProbs runs a fresh VAD over pcm and returns one probability per frame.
func vadProbs(pcm []int16, feats *[]vad.Features) ([]float32, error) {
	v, err := vad.New(vadConfig)
	if err != nil {
		return nil, err
	}
	n := len(pcm) / frameSamples
	out := make([]float32, n)
	for i := range n {
		p, ft, err := v.ProcessFeatures(pcm[i*frameSamples : (i+1)*frameSamples])
		if err != nil {
			return nil, err
		}
		out[i] = p
		if feats != nil {
			*feats = append(*feats, ft)
		}
	}
	return out, nil
}

func scoreFrames(probs []float32, labels []int8, thr float64) (got, always counts) {
	for i, l := range labels {
		if l < 0 || i >= len(probs) {
			continue
		}
		speech := float64(probs[i]) >= thr
		switch {
		case l == 1 && speech:
			got.tp++
		case l == 1:
			got.fn++
		case speech:
			got.fp++
		default:
			got.tn++
		}
		if l == 1 {
			always.tp++
		} else {
			always.fp++
		}
	}
	return got, always
}

func evaluate(dir string, clips []clip, conds []condition, f vadFlags) (vadReport, error) {
	rep := vadReport{Dir: dir, CollarMs: f.collarMs, Threshold: f.threshold}
	for _, c := range clips {
		rep.Clips = append(rep.Clips, c.name)
	}
	var all, allAlways counts
	var cost time.Duration
	var samples int
	for _, cond := range conds {
		var got, always counts
		for _, cl := range cond.clips {
			t0 := time.Now()
			probs, err := vadProbs(cl.pcm, nil)
			if err != nil {
				return rep, fmt.Errorf("%s/%s: %w", cond.name, cl.name, err)
			}
			cost += time.Since(t0)
			samples += len(cl.pcm)
			g, a := scoreFrames(probs, frameLabels(len(cl.pcm), cl.segs, f.collarMs), f.threshold)
			got.add(g)
			always.add(a)
		}
		all.add(got)
		allAlways.add(always)
		rep.Conditions = append(rep.Conditions, result(cond.name, got))
		rep.AlwaysSpeech = append(rep.AlwaysSpeech, result(cond.name, always))
	}
	rep.Overall = result("overall", all)
	rep.AlwaysSpeech = append(rep.AlwaysSpeech, result("overall", allAlways))
	rep.AudioSeconds = float64(samples) / sampleRate
	rep.CostPerSecMs = float64(cost.Microseconds()) / 1000 / rep.AudioSeconds
	eos, sos, err := endOfSpeech(clips)
	if err != nil {
		return rep, err
	}
	rep.EOS, rep.StartDelay = eos, sos
	return rep, nil
}

// endOfSpeech runs the inbound pipeline's analysis (VAD and turn
// detector, BRIEF §7 defaults, no echo guard) over the clean clips and
// measures |detected true end of speech − reference segment end| for every
// reference end followed by at least silence_duration_ms of non-speech (or
// the end of the clip): those are the ends a turn detector should find. A
// reference end with no SpeechStopped within 1 s is counted as missed. It
// also measures, for every reference start preceded by at least
// silence_duration_ms of non-speech, how long after it SpeechStarted fired.
func endOfSpeech(clips []clip) (eosStats, eosStats, error) {
	cfg := turn.DefaultConfig()
	var errs, delays []float64
	var st, sos eosStats
	var signed, signedDelay float64
	for _, cl := range clips {
		ends, starts, err := detectClip(cl.pcm, cfg)
		if err != nil {
			return st, sos, err
		}
		for i, s := range cl.segs {
			if i > 0 && s.StartMs-cl.segs[i-1].EndMs < cfg.SilenceDurationMs {
				continue
			}
			found := false
			for _, a := range starts {
				if d := a - float64(s.StartMs); d >= -300 && d <= 1000 {
					delays = append(delays, math.Abs(d))
					signedDelay += d
					found = true
					break
				}
			}
			if !found {
				sos.Missed++
			}
		}
		clipMs := len(cl.pcm) * 1000 / sampleRate
		for i, s := range cl.segs {
			next := clipMs
			if i+1 < len(cl.segs) {
				next = cl.segs[i+1].StartMs
			}
			if next-s.EndMs < cfg.SilenceDurationMs && i+1 < len(cl.segs) {
				continue
			}
			best := math.Inf(1)
			var bestSigned float64
			for _, e := range ends {
				if d := math.Abs(e - float64(s.EndMs)); d < best {
					best, bestSigned = d, e-float64(s.EndMs)
				}
			}
			if best > 1000 {
				st.Missed++
				continue
			}
			errs = append(errs, best)
			signed += bestSigned
		}
	}
	st.N = len(errs)
	if len(errs) > 0 {
		sort.Float64s(errs)
		st.P50 = percentile(errs, 50)
		st.P90 = percentile(errs, 90)
		st.MeanErr = signed / float64(len(errs))
	}
	sos.N = len(delays)
	if len(delays) > 0 {
		sort.Float64s(delays)
		sos.P50 = percentile(delays, 50)
		sos.P90 = percentile(delays, 90)
		sos.MeanErr = signedDelay / float64(len(delays))
	}
	return st, sos, nil
}

// detectClip runs pcm through the pipeline in 10 ms frames and returns the
// detected ends of speech (SpeechStopped's SpeechEnd) and the decision
// times of SpeechStarted, in ms. A clip that ends mid-turn is closed as if
// silence followed.
func detectClip(pcm []int16, tc turn.Config) (ends, starts []float64, err error) {
	pc := pipeline.DefaultConfig()
	pc.VAD, pc.Turn, pc.EchoGuard = vadConfig, tc, false
	in, err := pipeline.New(pc)
	if err != nil {
		return nil, nil, err
	}
	collect := func(e *turn.Event) {
		switch e.Type {
		case turn.SpeechStopped:
			ends = append(ends, float64(e.SpeechEnd)*1000/sampleRate)
		case turn.SpeechStarted:
			starts = append(starts, float64(e.At)*1000/sampleRate)
		}
	}
	for i := 0; (i+1)*frameSamples <= len(pcm); i++ {
		in.Analyse(pcm[i*frameSamples:(i+1)*frameSamples], int64(i*frameSamples), false, collect)
	}
	in.EndOfStream(collect)
	return ends, starts, nil
}

// percentile uses linear interpolation between closest ranks.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	r := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(r))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(r-float64(lo))
}

func printTable(w io.Writer, rep vadReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "condition\tprecision\trecall\tF1\tFAR\tframes\talways-speech F1\talways FAR\t\n")
	for i, c := range append(rep.Conditions, rep.Overall) {
		a := rep.AlwaysSpeech[i]
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%.3f\t%.3f\t\n", c.Name, c.Precision, c.Recall, c.F1, c.FAR, c.Frames, a.F1, a.FAR)
	}
	tw.Flush()
	fmt.Fprintf(w, "end of speech error (ms): p50 %.0f  p90 %.0f  (n=%d, missed=%d, mean signed %+.0f)\n",
		rep.EOS.P50, rep.EOS.P90, rep.EOS.N, rep.EOS.Missed, rep.EOS.MeanErr)
	fmt.Fprintf(w, "speech-started delay (ms): p50 %.0f  p90 %.0f  (n=%d, missed=%d, mean signed %+.0f)\n",
		rep.StartDelay.P50, rep.StartDelay.P90, rep.StartDelay.N, rep.StartDelay.Missed, rep.StartDelay.MeanErr)
	fmt.Fprintf(w, "clips: %d, audio scored: %.1f s, VAD cost: %.3f ms per second of audio\n", len(rep.Clips), rep.AudioSeconds, rep.CostPerSecMs)
}

// ---- anchor dump and weight fitting (tuning tools behind -dump and -fit) ----

// manifest is the frame grid the anchor scorers read (written by -dump): the
// same mixed audio, frames and labels vera-eval scores.
type manifest struct {
	FrameMs    int                 `json:"frame_ms"`
	CollarMs   int                 `json:"collar_ms"`
	SampleRate int                 `json:"sample_rate"`
	Conditions []manifestCondition `json:"conditions"`
}

type manifestCondition struct {
	Name  string         `json:"name"`
	Clips []manifestClip `json:"clips"`
}

type manifestClip struct {
	Name string `json:"name"`
	WAV  string `json:"wav"` // relative to the manifest
	// Labels per 10 ms frame: 1 speech, 0 non-speech, -1 not scored.
	Labels   []int8    `json:"labels"`
	Segments []segment `json:"segments"`
}

func dumpConditions(dir string, conds []condition, collarMs int) error {
	m := manifest{FrameMs: frameMs, CollarMs: collarMs, SampleRate: sampleRate}
	for ci, c := range conds {
		sub := fmt.Sprintf("c%02d", ci)
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
		mc := manifestCondition{Name: c.name}
		for _, cl := range c.clips {
			rel := filepath.Join(sub, cl.name+".16k.wav")
			if err := wavio.WriteWAVFile(filepath.Join(dir, rel), sampleRate, cl.pcm); err != nil {
				return err
			}
			mc.Clips = append(mc.Clips, manifestClip{Name: cl.name, WAV: rel,
				Labels: frameLabels(len(cl.pcm), cl.segs, collarMs), Segments: cl.segs})
		}
		m.Conditions = append(m.Conditions, mc)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), raw, 0o644)
}

// nFeat is the fitted design: the features times (1-m) plus a (1-m) bias
// term, then the features times m (m = vad.Blend(long_snr)); the model's own
// intercept stays at 0 so the two weight sets carry their own biases.
const nFeat = 2 * (vad.NumFeatures + 1)

// fitNegWeight and fitNegWeightNoisy weight non-speech frames in the fit
// for clean and noisy streams (blended like the weights; 1 = natural prior):
// a higher weight buys a lower false-alarm rate with recall.
var fitNegWeight, fitNegWeightNoisy = 1.5, 1.0

type sample struct {
	x    [nFeat]float64
	y    float64
	clip int
}

func featVec(f vad.Features) [nFeat]float64 {
	var x [nFeat]float64
	m := float64(vad.Blend(f.X[9]))
	const k = vad.NumFeatures + 1
	x[0] = 1 - m
	x[k] = m
	_ = x // m is recoverable as x[k]
	for i, v := range f.X {
		x[1+i] = float64(v) * (1 - m)
		x[k+1+i] = float64(v) * m
	}
	return x
}

// toWeights splits a fitted vector (intercept first) into clean and noisy sets.
func toWeights(wt [nFeat + 1]float64) (clean, noisy vad.Weights) {
	const k = vad.NumFeatures + 1
	noisy.Bias = float32(wt[0] + wt[1])
	clean.Bias = float32(wt[0] + wt[1+k])
	for i := range vad.NumFeatures {
		noisy.W[i] = float32(wt[2+i])
		clean.W[i] = float32(wt[2+k+i])
	}
	return clean, noisy
}

func fromWeights(clean, noisy vad.Weights) [nFeat + 1]float64 {
	const k = vad.NumFeatures + 1
	var wt [nFeat + 1]float64
	wt[1] = float64(noisy.Bias)
	wt[1+k] = float64(clean.Bias)
	for i := range vad.NumFeatures {
		wt[2+i] = float64(noisy.W[i])
		wt[2+k+i] = float64(clean.W[i])
	}
	return wt
}

// fitWeights fits the VAD's logistic weights on every scored frame of every
// condition and reports leave-one-clip-out F1/FAR so overfitting shows.
func fitWeights(w io.Writer, conds []condition, collarMs int) error {
	var data []sample
	clipIdx := map[string]int{}
	for _, c := range conds {
		for _, cl := range c.clips {
			if _, ok := clipIdx[cl.name]; !ok {
				clipIdx[cl.name] = len(clipIdx)
			}
			var feats []vad.Features
			if _, err := vadProbs(cl.pcm, &feats); err != nil {
				return err
			}
			// The VAD averages its logit over SmoothFrames; the logit is linear
			// in the design, so fit on the same average of the design.
			var xs [nFeat]float64
			a := 1 / float64(vadConfig.SmoothFrames)
			labels := frameLabels(len(cl.pcm), cl.segs, collarMs)
			for i, l := range labels {
				x := featVec(feats[i])
				for j := range xs {
					if i == 0 {
						xs[j] = x[j]
					} else {
						xs[j] += (x[j] - xs[j]) * a
					}
				}
				if l < 0 || feats[i].Silent {
					continue
				}
				data = append(data, sample{x: xs, y: float64(l), clip: clipIdx[cl.name]})
			}
		}
	}
	// Per-condition feature means by class, to see which features separate.
	for _, c := range conds {
		var m [2][nFeat]float64
		var n [2]float64
		for _, cl := range c.clips {
			var feats []vad.Features
			if _, err := vadProbs(cl.pcm, &feats); err != nil {
				return err
			}
			for i, l := range frameLabels(len(cl.pcm), cl.segs, collarMs) {
				if l < 0 {
					continue
				}
				x := featVec(feats[i])
				for j := range nFeat {
					m[l][j] += x[j]
				}
				n[l]++
			}
		}
		fmt.Fprintf(w, "%-30s", c.name)
		for j := range nFeat {
			fmt.Fprintf(w, " %5.1f/%5.1f", m[1][j]/n[1], m[0][j]/n[0])
		}
		fmt.Fprintln(w, "  (speech/non-speech)")
	}
	wAll := logistic(data, -1)
	c, n := toWeights(wAll)
	fmt.Fprintf(w, "fitted on %d frames (features %v):\n  clean = %#v\n  noisy = %#v\n", len(data), vad.FeatureNames, c, n)
	fmt.Fprintf(w, "  -weights=%s -noisy-weights=%s\n", weightsFlag(c), weightsFlag(n))
	fmt.Fprintf(w, "leave-one-clip-out (raw p >= 0.5, no release):\n")
	var tot, totDef counts
	defW := fromWeights(vadConfig.Weights, vadConfig.NoisyWeights)
	for name, ci := range clipIdx {
		wt := logistic(data, ci)
		var c, cd counts
		for _, s := range data {
			if s.clip != ci {
				continue
			}
			c.add(classify(wt, s))
			cd.add(classify(defW, s))
		}
		tot.add(c)
		totDef.add(cd)
		r, rd := result(name, c), result(name, cd)
		fmt.Fprintf(w, "  %-40s held-out F1 %.3f FAR %.3f | defaults F1 %.3f FAR %.3f\n", name, r.F1, r.FAR, rd.F1, rd.FAR)
	}
	var in counts
	for _, s := range data {
		in.add(classify(wAll, s))
	}
	ri := result("in-sample", in)
	fmt.Fprintf(w, "  %-40s in-sample F1 %.3f FAR %.3f (fit on every clip)\n", "pooled", ri.F1, ri.FAR)
	r, rd := result("all", tot), result("all", totDef)
	fmt.Fprintf(w, "  %-40s held-out F1 %.3f FAR %.3f | defaults F1 %.3f FAR %.3f\n", "pooled", r.F1, r.FAR, rd.F1, rd.FAR)
	return nil
}

func classify(wt [nFeat + 1]float64, s sample) counts {
	z := wt[0]
	for j := range nFeat {
		z += wt[j+1] * s.x[j]
	}
	speech := z >= 0
	switch {
	case s.y == 1 && speech:
		return counts{tp: 1}
	case s.y == 1:
		return counts{fn: 1}
	case speech:
		return counts{fp: 1}
	}
	return counts{tn: 1}
}

// logistic fits weights (bias first) by gradient descent on standardised
// features with a small L2 penalty, skipping samples of clip `skip`.
// Non-speech frames are weighted so both classes count equally: false alarms
// matter as much as misses.
func logistic(data []sample, skip int) [nFeat + 1]float64 {
	var mean, sd [nFeat]float64
	var n, pos float64
	for _, s := range data {
		if s.clip == skip {
			continue
		}
		n++
		pos += s.y
		for j := range nFeat {
			mean[j] += s.x[j]
		}
	}
	for j := range nFeat {
		mean[j] /= n
	}
	for _, s := range data {
		if s.clip == skip {
			continue
		}
		for j := range nFeat {
			d := s.x[j] - mean[j]
			sd[j] += d * d
		}
	}
	for j := range nFeat {
		sd[j] = math.Sqrt(sd[j]/n) + 1e-9
	}
	wPos, wNeg := 1.0, fitNegWeight
	var wt [nFeat + 1]float64
	const lr, l2 = 0.5, 1e-3
	for range 400 {
		var g [nFeat + 1]float64
		for _, s := range data {
			if s.clip == skip {
				continue
			}
			z := wt[0]
			for j := range nFeat {
				z += wt[j+1] * (s.x[j] - mean[j]) / sd[j]
			}
			p := 1 / (1 + math.Exp(-z))
			m := s.x[vad.NumFeatures+1]
			cw := wNeg*m + fitNegWeightNoisy*(1-m)
			if s.y == 1 {
				cw = wPos
			}
			e := (p - s.y) * cw
			g[0] += e
			for j := range nFeat {
				g[j+1] += e * (s.x[j] - mean[j]) / sd[j]
			}
		}
		for j := range g {
			reg := 0.0
			if j > 0 {
				reg = l2 * wt[j]
			}
			wt[j] -= lr * (g[j]/n + reg)
		}
	}
	// Back to raw feature units.
	out := wt
	for j := range nFeat {
		out[j+1] = wt[j+1] / sd[j]
		out[0] -= wt[j+1] * mean[j] / sd[j]
	}
	return out
}

func weightsFlag(w vad.Weights) string {
	s := strconv.FormatFloat(float64(w.Bias), 'f', 4, 32)
	for _, x := range w.W {
		s += "," + strconv.FormatFloat(float64(x), 'f', 4, 32)
	}
	return s
}
