package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/veraneural/vera-gateway/safety"
)

func init() {
	register("safety-explain", command{
		summary: "how the local detector reads each line of a file (tokens, concepts, frames, flags, verdict): safety-explain FILE",
		run:     runSafetyExplain,
	})
}

// runSafetyExplain prints safety.Detector.Explain for every non-empty line
// of FILE ("-" for standard input): a tool for tuning the detector.
func runSafetyExplain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("safety-explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("want exactly one FILE (one utterance a line, - for stdin), got %d arguments", fs.NArg())
	}
	in := io.Reader(os.Stdin)
	if fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	d := safety.NewDetector()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		fmt.Fprintf(stdout, "== %s\n%s", text, d.Explain(text))
	}
	return sc.Err()
}
