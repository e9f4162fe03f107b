package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/veraneural/vera-gateway/safety"
)

func init() {
	register("safety-words", command{
		summary: "false alarms from single words: safety-words [-carrier 'we talked about X at work today'] [-json] [-list] WORDS",
		run:     runSafetyWords,
	})
}

// wordsReport is safety-words' -json output.
type wordsReport struct {
	Carrier string         `json:"carrier"`
	Words   int            `json:"words"`
	Cards   int            `json:"cards"`
	Rate    float64        `json:"card_rate"`
	Reasons map[string]int `json:"reasons"`
}

// runSafetyWords puts every word of a word list (the first field of each
// line, letters only: a pronouncing dictionary such as the recogniser's
// cmudict-en-us.dict, or a plain list) into an ordinary carrier sentence
// and counts the sentences the detector gives a card. A recogniser can only
// say words of its dictionary, so this is the floor of what it can make the
// detector raise from one mis-heard word.
func runSafetyWords(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("safety-words", flag.ContinueOnError)
	fs.SetOutput(stderr)
	carrier := fs.String("carrier", "we talked about X at work today", "the sentence; X is replaced by each word")
	asJSON := fs.Bool("json", false, "print the counts as JSON")
	list := fs.Bool("list", false, "list each carded word with its level and reason (text output only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("want exactly one WORDS file, got %d arguments", fs.NArg())
	}
	if strings.Count(*carrier, "X") != 1 {
		return fmt.Errorf("-carrier %q: want exactly one X", *carrier)
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	d := safety.NewDetector()
	rep := wordsReport{Carrier: *carrier, Reasons: map[string]int{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		w := strings.ToLower(fields[0])
		if !lettersOnly(w) || seen[w] {
			continue
		}
		seen[w] = true
		rep.Words++
		r := d.Detect(strings.Replace(*carrier, "X", w, 1))
		if r.Level == safety.LevelNone {
			continue
		}
		rep.Cards++
		rep.Reasons[r.Reason]++
		if *list && !*asJSON {
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", w, r.Level, r.Reason)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if rep.Words == 0 {
		return fmt.Errorf("%s: no words", fs.Arg(0))
	}
	rep.Rate = float64(rep.Cards) / float64(rep.Words)
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintf(stdout, "carrier %q\nwords %d\ncards %d (%.4f)\n", rep.Carrier, rep.Words, rep.Cards, rep.Rate)
	return nil
}

func lettersOnly(w string) bool {
	if len(w) < 2 {
		return false
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
