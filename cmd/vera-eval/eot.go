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
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/veraneural/vera-gateway/audio/turn"
)

func init() {
	register("eot", command{
		summary: "end-of-turn policies on labelled pauses (fixed silence vs adaptive): eot [-json] [-png FILE] [-words=false] DIR",
		run:     runEOT,
	})
}

type eotFlags struct {
	json       bool
	png        string
	words      bool
	lagMs      int
	contextMs  int
	tailMs     int
	workers    int
	weights    string
	split      string
	verbose    bool
	onlyPolicy string
	cache      string
	flush      bool
}

func (f *eotFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.json, "json", false, `print {"decision_points":N,"policies":[{"name","fcr_300","fcr_600","latency_ms_at_5","latency_ms_at_10"},…]} as JSON (rates as fractions, null: budget never reached)`)
	fs.StringVar(&f.png, "png", "eot-pareto.png", "write the false-cutoff / latency Pareto curves to this PNG (empty: none)")
	fs.BoolVar(&f.words, "words", true, "give the policies the embedded recogniser's partials (pocketsphinx); false: audio only")
	fs.IntVar(&f.lagMs, "asr-lag-ms", 50, "time from the audio a partial has heard to its arrival at the detector, beyond the 200 ms cadence")
	fs.BoolVar(&f.flush, "asr-flush", true, "also take a hypothesis once a pause has lasted 100 ms, as the voice session asks for one (false: the 200 ms cadence only)")
	fs.IntVar(&f.contextMs, "context-ms", 4000, "audio before each pause played to the policy")
	fs.IntVar(&f.tailMs, "tail-ms", 3500, "how long an end's silence is played (the latency of a policy that never ends the turn)")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "parallel pipelines")
	fs.StringVar(&f.weights, "weights", "", "adaptive policy weights file (default: the built-in weights.json)")
	fs.StringVar(&f.split, "split", "", "only clips whose eot.json split is this (train, test); other label kinds always count")
	fs.BoolVar(&f.verbose, "v", false, "also print every point's decisions at the default settings")
	fs.StringVar(&f.onlyPolicy, "policy", "", "sweep only this policy (fixed or adaptive)")
	cache := ""
	if d, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(d, "vera-eval", "eot-asr")
	}
	fs.StringVar(&f.cache, "asr-cache", cache, "keep the recogniser's partials per clip here, keyed by audio and settings (empty: none)")
}

func runEOT(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f eotFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want exactly one DIR argument")
	}
	if f.tailMs < 3100 || f.contextMs < 500 {
		return errors.New("-tail-ms must be at least 3100 (the longest swept wait) and -context-ms at least 500")
	}
	w := turn.DefaultWeights()
	if f.weights != "" {
		var err error
		if w, err = turn.LoadWeights(f.weights); err != nil {
			return fmt.Errorf("-weights: %w", err)
		}
	}
	ps, err := preparePoints(fs.Arg(0), f, stderr)
	if err != nil {
		return err
	}
	rep, err := evaluateEOT(ps, w, f)
	if err != nil {
		return err
	}
	if f.png != "" {
		if err := writeParetoPNG(f.png, rep); err != nil {
			return err
		}
	}
	if f.verbose {
		printPoints(stderr, ps, w, f)
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep.summary())
	}
	printEOT(stdout, rep)
	return nil
}

// eotSet is a directory's decision points, ready to play.
type eotSet struct {
	clips   []eotClip
	skipped []string
	streams []eotStream
	words   bool
}

// preparePoints loads DIR's clips and builds one stream per decision point
// with the recogniser's partials.
func preparePoints(dir string, f eotFlags, stderr io.Writer) (*eotSet, error) {
	clips, skipped, err := loadEOTDir(dir)
	if err != nil {
		return nil, err
	}
	if f.split != "" {
		kept := clips[:0]
		for _, c := range clips {
			if c.split == "" || c.split == f.split {
				kept = append(kept, c)
			}
		}
		clips = kept
		if len(clips) == 0 {
			return nil, fmt.Errorf("no clips of split %q in %s", f.split, dir)
		}
	}
	set := &eotSet{clips: clips, skipped: skipped}
	var rec *recogniser
	if f.words {
		rec, err = newRecogniser(f.lagMs, min(f.workers, 2), f.cache, f.flush)
		if err != nil {
			fmt.Fprintf(stderr, "vera-eval eot: no recogniser (%v): policies hear the audio only\n", err)
		} else {
			defer rec.close()
			set.words = true
		}
	}
	tones := make([][]int16, len(clips))
	timelines := make([][]partial, len(clips))
	if set.words {
		inputs := make([][]int16, len(clips))
		for i := range clips {
			tones[i] = roomTone(clips[i].pcm)
			inputs[i] = appendTone(append([]int16(nil), clips[i].pcm...), tones[i], f.tailMs*msSamples)
		}
		if timelines, err = rec.transcribeAll(inputs, min(f.workers, 2)); err != nil {
			return nil, err
		}
	} else {
		for i := range clips {
			tones[i] = roomTone(clips[i].pcm)
		}
	}
	var own []int // streams whose end another speaker follows: recognised on their own
	for i := range clips {
		c := &clips[i]
		for _, p := range c.points {
			parts := timelines[i]
			if p.End && p.Next {
				parts = nil
				own = append(own, len(set.streams))
			}
			set.streams = append(set.streams, buildStream(c, p, tones[i], parts, f.contextMs, f.tailMs))
		}
	}
	if set.words && len(own) > 0 {
		inputs := make([][]int16, len(own))
		for k, si := range own {
			inputs[k] = set.streams[si].pcm
		}
		parts, err := rec.transcribeAll(inputs, min(f.workers, 2))
		if err != nil {
			return nil, err
		}
		for k, si := range own {
			set.streams[si].partials = parts[k]
		}
	}
	return set, nil
}

// eotReport is the command's eotResult.
type eotReport struct {
	DecisionPoints int         `json:"decision_points"`
	Holds          int         `json:"holds"`
	Ends           int         `json:"ends"`
	Clips          int         `json:"clips"`
	Skipped        []string    `json:"skipped,omitempty"`
	Words          bool        `json:"words"`
	Weights        string      `json:"weights"`
	Policies       []operating `json:"policies"`
	all            map[string][]eotResult
}

// eotJSON is -json's output, exactly the shape: the number of
// decision points and per policy the four figures (rates as fractions,
// null where no swept setting reaches the budget). The text table says
// the rest.
type eotJSON struct {
	DecisionPoints int          `json:"decision_points"`
	Policies       []policyJSON `json:"policies"`
}

type policyJSON struct {
	Name   string   `json:"name"`
	FCR300 *float64 `json:"fcr_300"`
	FCR600 *float64 `json:"fcr_600"`
	Lat5   *float64 `json:"latency_ms_at_5"`
	Lat10  *float64 `json:"latency_ms_at_10"`
}

func (rep eotReport) summary() eotJSON {
	out := eotJSON{DecisionPoints: rep.DecisionPoints, Policies: []policyJSON{}}
	for _, op := range rep.Policies {
		out.Policies = append(out.Policies, policyJSON{op.Name, op.FCR300, op.FCR600, op.Lat5, op.Lat10})
	}
	return out
}

// fixedGrid and the adaptive grid are the sweeps (ms; probabilities).
var (
	fixedGrid = []int{100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 600, 700, 800, 900, 1000, 1100, 1200,
		1400, 1600, 1800, 2000, 2250, 2500, 2750, 3000}
	// neutralGrid is the wait with no evidence either way (ms): the
	// adaptive sweep's main knob, like the fixed policy's silence.
	neutralGrid = []float64{150, 200, 250, 300, 400, 500, 600, 700, 800, 1000, 1200, 1400, 1700, 2000, 2500, 3000}
	minWaitGrid = []int{200, 300}
	maxWaitGrid = []int{2000, 3000}
	// gainGrid scales the evidence against the silence: how far the wait
	// moves for the same evidence.
	gainGrid = []float32{0.5, 1, 2}
)

// tuned returns w whose wait with no evidence is neutralMs and whose
// evidence weights are scaled by gain: the threshold becomes
// σ(bias + w_silence · ln(neutralMs / 200 ms)), so a pause with evidence
// z waits neutralMs · exp(−gain · z / w_silence).
func tuned(w turn.Weights, neutralMs float64, gain float32) turn.Weights {
	for i := range w.W {
		if i != turn.EvSilence {
			w.W[i] *= gain
		}
	}
	l := float64(w.Bias) + float64(w.W[turn.EvSilence])*math.Log(neutralMs/200)
	w.Threshold = float32(1 / (1 + math.Exp(-l)))
	w.Threshold = min(max(w.Threshold, 1e-6), 1-1e-6)
	return w
}

// neutralOf is the wait of w with no evidence, in ms.
func neutralOf(w turn.Weights) float64 {
	t := float64(w.Threshold)
	return 200 * math.Exp((math.Log(t/(1-t))-float64(w.Bias))/float64(w.W[turn.EvSilence]))
}

func sweepSettings(w turn.Weights, only string) (fixed, adaptive []setting) {
	if only == "" || only == turn.PolicyFixed {
		for _, ms := range fixedGrid {
			c := turn.AdaptiveConfig()
			c.Policy, c.SilenceDurationMs, c.MaxSilenceMs = turn.PolicyFixed, ms, max(ms, c.MaxSilenceMs)
			fixed = append(fixed, setting{turn.PolicyFixed, fmt.Sprintf("silence=%d", ms), c})
		}
	}
	if only == "" || only == turn.PolicyAdaptive {
		for _, lo := range minWaitGrid {
			for _, hi := range maxWaitGrid {
				for _, g := range gainGrid {
					for _, n := range neutralGrid {
						c := turn.AdaptiveConfig()
						ww := tuned(w, n, g)
						c.SilenceDurationMs, c.MaxSilenceMs, c.Weights = lo, hi, &ww
						adaptive = append(adaptive, setting{turn.PolicyAdaptive, fmt.Sprintf("neutral=%g gain=%g min=%d max=%d", n, g, lo, hi), c})
					}
				}
			}
		}
	}
	return fixed, adaptive
}

// defaultSetting is the shipped configuration of a policy.
func defaultSetting(policy string, w turn.Weights) setting {
	if policy == turn.PolicyFixed {
		return setting{policy, "silence=500 (fixed default)", turn.FixedConfig()}
	}
	c := turn.AdaptiveConfig()
	ww := w
	c.Weights = &ww
	return setting{policy, fmt.Sprintf("neutral=%.0f threshold=%.3g min=%d max=%d (default)", neutralOf(w), w.Threshold, c.SilenceDurationMs, c.MaxSilenceMs), c}
}

func evaluateEOT(ps *eotSet, w turn.Weights, f eotFlags) (eotReport, error) {
	rep := eotReport{Clips: len(ps.clips), Skipped: ps.skipped, Words: ps.words, Weights: w.About, all: map[string][]eotResult{}}
	for _, s := range ps.streams {
		rep.DecisionPoints++
		if s.end {
			rep.Ends++
		} else {
			rep.Holds++
		}
	}
	if rep.Holds == 0 || rep.Ends == 0 {
		return rep, fmt.Errorf("%d holds and %d ends: both are needed for the metric", rep.Holds, rep.Ends)
	}
	fixed, adaptive := sweepSettings(w, f.onlyPolicy)
	// The fixed-silence baseline first.
	for _, group := range []struct {
		name     string
		settings []setting
	}{{turn.PolicyFixed, fixed}, {turn.PolicyAdaptive, adaptive}} {
		if len(group.settings) == 0 {
			continue
		}
		all := append(append([]setting(nil), group.settings...), defaultSetting(group.name, w))
		rs, err := score(ps.streams, all, f.workers)
		if err != nil {
			return rep, err
		}
		op := operatingPoints(group.name, rs[:len(rs)-1])
		def := rs[len(rs)-1]
		op.Default = &def
		rep.Policies = append(rep.Policies, op)
		rep.all[group.name] = rs[:len(rs)-1]
	}
	return rep, nil
}

func pct(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100**v)
}

func msOf(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f ms", *v)
}

func printEOT(w io.Writer, rep eotReport) {
	words := "audio and the recogniser's partials"
	if !rep.Words {
		words = "audio only"
	}
	fmt.Fprintf(w, "decision points: %d (%d holds, %d ends) in %d clips; policies hear %s\n", rep.DecisionPoints, rep.Holds, rep.Ends, rep.Clips, words)
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "skipped (no labels): %s\n", strings.Join(rep.Skipped, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tcutoffs @ 300 ms\tcutoffs @ 600 ms\tlatency @ 5 %\tlatency @ 10 %\tsettings\t")
	for _, op := range rep.Policies {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t\n", op.Name, pct(op.FCR300), pct(op.FCR600), msOf(op.Lat5), msOf(op.Lat10), op.Swept)
	}
	tw.Flush()
	for _, op := range rep.Policies {
		if d := op.Default; d != nil {
			fmt.Fprintf(w, "%s at %s: cutoffs %.1f %% (%d), latency mean %.0f ms, p50 %.0f ms, missed ends %d, not in a turn %d\n",
				op.Name, d.Params, 100*d.FCR, d.Cut, d.LatencyMs, d.P50Ms, d.Missed, d.NotInTurn)
		}
	}
	fmt.Fprintf(w, "adaptive weights: %s\n", rep.Weights)
}

// printPoints lists each point's outcome under both default policies.
func printPoints(w io.Writer, ps *eotSet, wt turn.Weights, f eotFlags) {
	sets := []setting{defaultSetting(turn.PolicyFixed, wt), defaultSetting(turn.PolicyAdaptive, wt)}
	for i := range ps.streams {
		st := &ps.streams[i]
		label := "hold"
		if st.end {
			label = "end"
		}
		fmt.Fprintf(w, "%-28s %5d ms %-4s %-12s %5d ms", st.clip, st.at/msSamples, label, st.kind, (st.e-st.s)/msSamples)
		for _, s := range sets {
			o, err := runStream(st, s.cfg)
			if err != nil {
				fmt.Fprintf(w, "  %s: %v", s.policy, err)
				continue
			}
			if st.end {
				fmt.Fprintf(w, "  %s %5d ms", s.policy, o.latency/msSamples)
			} else {
				fmt.Fprintf(w, "  %s %-4v", s.policy, map[bool]string{true: "CUT", false: "ok"}[o.cut])
			}
		}
		last := ""
		for _, p := range st.partials {
			if p.at <= st.s+400*msSamples {
				last = p.text
			}
		}
		if n := len(last); n > 50 {
			last = "…" + last[n-50:]
		}
		fmt.Fprintf(w, "  %q\n", last)
	}
}
