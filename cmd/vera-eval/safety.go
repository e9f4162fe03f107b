package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/veraneural/vera-gateway/safety"
)

func init() {
	register("safety", command{
		summary: "score the local crisis detector on labelled JSONL utterances: safety [-json] [-misses] FILE.jsonl",
		run:     runSafety,
	})
}

// runSafety reads {"text","level"} lines, runs the detector on each and
// prints per-level recall and precision and the false-alarm rate on none.
func runSafety(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("safety", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, `print {"levels":{"crisis":{"recall","precision"},…},"false_alarm_rate"} as JSON`)
	misses := fs.Bool("misses", false, "also list every disagreement (text output only)")
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
	rep := safety.Evaluate(safety.NewDetector(), samples)
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
