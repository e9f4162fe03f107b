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
	if *misses {
		for _, m := range rep.Misses {
			fmt.Fprintf(stdout, "miss gold=%s got=%s reason=%s text=%q\n", m.Gold, m.Got, m.Reason, m.Text)
		}
	}
	return nil
}
