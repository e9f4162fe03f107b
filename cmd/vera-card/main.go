// Package main is the vera-card command: it lays out a safety assessment, a card or the embedded
// safety catalog for one device profile and writes page-1.png … page-N.png
// and ops.json into a directory; it prints the page count.
//
//	vera-card -device meta-rayban-display -safety assessment.json -out /tmp/card
//	vera-card -device even-g2 -card card.json -out /tmp/card
//	vera-card -device phone -catalog -out /tmp/catalog
//	vera-card -list-devices
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks bad command-line use (exit status 2).
var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vera-card", flag.ContinueOnError)
	fs.SetOutput(stderr)
	device := fs.String("device", "", "device profile id (see -list-devices)")
	safetyFile := fs.String("safety", "", "safety assessment JSON {\"level\",\"display_required\",\"resources\":[…]}")
	cardFile := fs.String("card", "", "card JSON {\"kind\",\"title\",\"body\",\"resources\",\"actions\"}")
	catalog := fs.Bool("catalog", false, "render the embedded safety catalog as one card")
	out := fs.String("out", "", "output directory for page-N.png and ops.json")
	list := fs.Bool("list-devices", false, "list device profile ids and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		for _, id := range devices.IDs() {
			p, _ := devices.Lookup(id)
			desc := "voice only"
			if s, ok := p.Display(); ok {
				desc = fmt.Sprintf("%dx%d %s, %d lines x %d chars", s.Width, s.Height, s.Kind, s.TextBudget.LinesPerPage, s.TextBudget.CharsPerLine)
			}
			fmt.Fprintf(stdout, "%-20s %s\n", id, desc)
		}
		return 0
	}
	n, err := render(*device, *safetyFile, *cardFile, *catalog, *out)
	if err != nil {
		fmt.Fprintf(stderr, "vera-card: %v\n", err)
		if errors.Is(err, errUsage) {
			fs.Usage()
			return 2
		}
		return 1
	}
	fmt.Fprintln(stdout, n)
	return 0
}

func render(device, safetyFile, cardFile string, catalog bool, out string) (int, error) {
	inputs := 0
	for _, set := range []bool{safetyFile != "", cardFile != "", catalog} {
		if set {
			inputs++
		}
	}
	if device == "" || out == "" || inputs != 1 {
		return 0, fmt.Errorf("%w: need -device, -out and exactly one of -safety, -card, -catalog", errUsage)
	}
	p, err := devices.Lookup(device)
	if err != nil {
		return 0, err
	}
	var card glasses.Card
	switch {
	case safetyFile != "":
		card, err = readAssessment(safetyFile)
	case cardFile != "":
		card, err = readCard(cardFile)
	default:
		card, err = catalogCard()
	}
	if err != nil {
		return 0, err
	}
	l, err := glasses.LayoutCard(card, p)
	if err != nil {
		return 0, err
	}
	doc, err := l.Ops()
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	for i := range l.Pages {
		var buf bytes.Buffer
		if err := l.WritePNG(&buf, i); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("page-%d.png", i+1)), buf.Bytes(), 0o644); err != nil {
			return 0, err
		}
	}
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(out, "ops.json"), append(js, '\n'), 0o644); err != nil {
		return 0, err
	}
	return len(l.Pages), nil
}

// assessmentFile is the -safety input. The level is read as its wire
// string ("none", "elevated", "crisis"); resources keep their order.
type assessmentFile struct {
	Level           string            `json:"level"`
	DisplayRequired bool              `json:"display_required"`
	Resources       []safety.Resource `json:"resources"`
}

func readAssessment(path string) (glasses.Card, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return glasses.Card{}, err
	}
	var a assessmentFile
	if err := json.Unmarshal(b, &a); err != nil {
		return glasses.Card{}, fmt.Errorf("%s: %w", path, err)
	}
	switch a.Level {
	case "none", "elevated", "crisis", "":
	default:
		return glasses.Card{}, fmt.Errorf("%s: level %q is not none, elevated or crisis", path, a.Level)
	}
	if len(a.Resources) == 0 {
		return glasses.Card{}, fmt.Errorf("%s: resources: a safety card is never empty", path)
	}
	return glasses.NewSafetyCard("safety", safety.Assessment{DisplayRequired: a.DisplayRequired, Resources: a.Resources})
}

func readCard(path string) (glasses.Card, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return glasses.Card{}, err
	}
	var c glasses.Card
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return glasses.Card{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, c.Validate()
}

func catalogCard() (glasses.Card, error) {
	cat, err := safety.DefaultCatalog()
	if err != nil {
		return glasses.Card{}, err
	}
	return glasses.NewSafetyCard("safety-catalog", safety.Assessment{DisplayRequired: true, Resources: cat.All()})
}
