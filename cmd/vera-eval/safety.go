package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/veraneural/vera-gateway/safety"
)

func init() {
	register("safety", command{
		summary: "score the local crisis detector on labelled JSONL utterances: safety [-json] [-misses] [-model FILE] FILE.jsonl",
		run:     runSafety,
	})
	register("safety-train", command{
		summary: "train the detector's model tier: safety-train [-o safety/model.txt] TRAIN.jsonl…",
		run:     runSafetyTrain,
	})
}

// runSafety reads {"text","level"} lines, runs the detector on each and
// prints per-level recall and precision and the false-alarm rate on none.
func runSafety(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("safety", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, `print {"levels":{"crisis":{"recall","precision"},…},"false_alarm_rate"} as JSON`)
	misses := fs.Bool("misses", false, "also list every disagreement (text output only)")
	modelFile := fs.String("model", "", "score with this model.txt instead of the embedded one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("want exactly one FILE.jsonl, got %d arguments", fs.NArg())
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	samples, err := safety.ReadSamples(f)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("%s: no samples", fs.Arg(0))
	}
	d := safety.NewDetector()
	if *modelFile != "" {
		b, err := os.ReadFile(*modelFile)
		if err != nil {
			return err
		}
		if d, err = safety.NewDetectorModel(string(b)); err != nil {
			return err
		}
	}
	rep := safety.Evaluate(d, samples)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(stdout, "samples %d\n", rep.N)
	fmt.Fprintf(stdout, "%-9s %7s %7s %9s %9s\n", "level", "recall", "prec", "support", "predicted")
	for _, l := range []string{"crisis", "elevated", "none"} {
		s := rep.Levels[l]
		fmt.Fprintf(stdout, "%-9s %7.3f %7.3f %9d %9d\n", l, s.Recall, s.Precision, s.Support, s.Predicted)
	}
	fmt.Fprintf(stdout, "false_alarm_rate (none flagged)   %.3f\n", rep.FalseAlarmRate)
	fmt.Fprintf(stdout, "crisis_alert_recall (crisis shown) %.3f\n", rep.CrisisAlertRecall)
	fmt.Fprintf(stdout, "confusion gold\\got none elevated crisis\n")
	for g, name := range []string{"none", "elevated", "crisis"} {
		c := rep.Confusion[g]
		fmt.Fprintf(stdout, "  %-9s %5d %8d %6d\n", name, c[0], c[1], c[2])
	}
	printGroups(stdout, "lang", rep.ByLang)
	printGroups(stdout, "category", rep.ByCategory)
	if *misses {
		for _, m := range rep.Misses {
			fmt.Fprintf(stdout, "miss gold=%s got=%s reason=%s lang=%s category=%s text=%q\n",
				m.Gold, m.Got, m.Reason, m.Lang, m.Category, m.Text)
		}
	}
	return nil
}

// printGroups prints one row per language or category: crisis shown (a card
// at all) and crisis labelled crisis, elevated shown, and false alarms on
// none. A dash marks a rate over an empty gold level.
func printGroups(w io.Writer, by string, m map[string]safety.GroupScore) {
	if len(m) == 0 || len(m) == 1 && m[""].N > 0 {
		return // the set has no such field
	}
	rate := func(v float64, n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", v)
	}
	fmt.Fprintf(w, "\nby %s\n%-22s %5s %6s %7s %7s %5s %7s %5s %7s %6s\n", by, by, "n", "crisis", "shown", "crisis",
		"elev", "shown", "none", "f.alarm", "exact")
	for _, k := range safety.SortedKeys(m) {
		g := m[k]
		name := k
		if name == "" {
			name = "(none)"
		}
		fmt.Fprintf(w, "%-22s %5d %6d %7s %7s %5d %7s %5d %7s %6s\n", name, g.N, g.CrisisSupport,
			rate(g.CrisisShown, g.CrisisSupport), rate(g.CrisisRecall, g.CrisisSupport), g.ElevatedSupport,
			rate(g.ElevatedShown, g.ElevatedSupport), g.NoneSupport, rate(g.FalseAlarmRate, g.NoneSupport),
			rate(g.Accuracy, g.N))
	}
}

// runSafetyTrain fits the model tier on the given labelled files and writes
// model.txt. The same files and flags always give the same file.
func runSafetyTrain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("safety-train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := safety.DefaultTrainConfig()
	out := fs.String("o", filepath.Join("safety", "model.txt"), "output model file")
	fs.IntVar(&cfg.NMin, "nmin", cfg.NMin, "shortest character n-gram")
	fs.IntVar(&cfg.NMax, "nmax", cfg.NMax, "longest character n-gram")
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "passes over the training set")
	fs.IntVar(&cfg.MinDocs, "min-docs", cfg.MinDocs, "keep n-grams seen in at least this many utterances")
	fs.Float64Var(&cfg.Alpha, "alpha", cfg.Alpha, "FTRL learning rate")
	fs.Float64Var(&cfg.L1, "l1", cfg.L1, "L1 regularisation")
	fs.Float64Var(&cfg.L2, "l2", cfg.L2, "L2 regularisation")
	fs.Float64Var(&cfg.MaxFalseAlarm, "max-false-alarm", cfg.MaxFalseAlarm, "out-of-fold false-alarm budget for the shown threshold")
	fs.Float64Var(&cfg.MaxNoneCrisis, "max-none-crisis", cfg.MaxNoneCrisis, "out-of-fold share of none labelled crisis for the crisis threshold")
	fs.Float64Var(&cfg.NoneWeight, "none-weight", cfg.NoneWeight, "loss weight of gold none in the shown head")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "shuffling seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("want at least one TRAIN.jsonl")
	}
	var all []safety.Sample
	var sources []string
	for _, name := range fs.Args() {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		s, err := safety.ReadSamples(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all = append(all, s...)
		sources = append(sources, fmt.Sprintf("%s %d utterances sha256 %x", filepath.Base(name), len(s), sha256.Sum256(b)))
	}
	t, err := safety.TrainModel(all, cfg)
	if err != nil {
		return err
	}
	t.Sources = sources
	var buf bytes.Buffer
	if _, err := t.WriteTo(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	st := t.Stats()
	fmt.Fprintf(stdout, "wrote %s (%d bytes) from %d utterances\n", *out, buf.Len(), st.N)
	fmt.Fprintf(stdout, "out-of-fold: false alarms %.3f, crisis shown %.3f, crisis recall %.3f, elevated shown %.3f\n",
		st.FalseAlarm, st.CrisisShown, st.CrisisRecall, st.ElevatedSeen)
	return nil
}
