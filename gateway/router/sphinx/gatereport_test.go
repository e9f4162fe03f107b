package sphinx

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/safety"
)

// spotRow is one line TestSpotLiveTurns wrote: a live-path turn of a clip,
// its transcript and each phrase's best score at the search floor.
type spotRow struct {
	voice, cond, clip string
	crisis            bool
	text              string
	scores            map[string]int32
}

func readSpotRows(t testing.TB, path string) []spotRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []spotRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 8 {
			t.Fatalf("%s: %d columns in %q", path, len(c), sc.Text())
		}
		r := spotRow{voice: c[0], cond: c[1], clip: c[2], crisis: c[5] == "true", text: c[6], scores: map[string]int32{}}
		for _, kv := range strings.Split(c[7], ",") {
			p, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				t.Fatalf("%s: score %q", path, kv)
			}
			r.scores[p] = int32(n)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// spotted is what the spotter reports for r: the phrases at or above their
// MinScore+offset.
func (r spotRow) spotted(ks []Keyphrase, offset int32) []string {
	var out []string
	for _, k := range ks {
		if v, ok := r.scores[k.Phrase]; ok && v >= k.MinScore+offset {
			out = append(out, k.Phrase)
		}
	}
	return out
}

// gateOutcome is what the session's local detector decides for one turn.
type gateOutcome struct{ card, crisis bool }

func assessTurn(d *safety.Detector, c *safety.Catalog, text string, spotted []string) gateOutcome {
	if len(spotted) > 0 {
		text += ". " + strings.Join(spotted, ". ")
	}
	a := d.Assess(nil, text, c, safety.RegionPrefs{Default: "US"})
	return gateOutcome{card: a.DisplayRequired, crisis: a.Level >= safety.LevelCrisis}
}

// tally counts turns (or clips) and their cards.
type tally struct{ n, card, crisis int }

func (t *tally) add(o gateOutcome) {
	t.n++
	if o.card {
		t.card++
	}
	if o.crisis {
		t.crisis++
	}
}

// TestSpotGateReport reads TestSpotLiveTurns' dumps ($VERA_SPOT_REPORT:
// comma-separated files) and prints, for the transcript alone, the
// spotter ungated and the spotter behind the Gate, the turns that reach a
// card and crisis: recall on the crisis rows, false alarms on the others,
// by voice and condition; then each phrase's closest approach to a benign
// transcript, the data MaxDistance is set on.
//
//	VERA_SPOT_REPORT=/tmp/spot/real.tsv,/tmp/spot/crisis.tsv go test -tags nolibopusfile -run TestSpotGateReport -v ./gateway/router/sphinx/
func TestSpotGateReport(t *testing.T) {
	files := os.Getenv("VERA_SPOT_REPORT")
	if files == "" {
		t.Skip("tuning report; set VERA_SPOT_REPORT to TestSpotLiveTurns dumps")
	}
	gate, err := LoadGate(DefaultConfig().Dict)
	if err != nil {
		t.Skipf("dictionary: %v", err)
	}
	var rows []spotRow
	for _, f := range strings.Split(files, ",") {
		rows = append(rows, readSpotRows(t, f)...)
	}
	d := safety.NewDetector()
	cat, err := safety.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	ks := CrisisKeyphrases()
	for _, off := range []int32{0, -200, -400, -800} {
		type key struct {
			crisis      bool
			group, mode string
		}
		tallies := map[key]*tally{}
		count := func(k key, o gateOutcome) {
			if tallies[k] == nil {
				tallies[k] = &tally{}
			}
			tallies[k].add(o)
		}
		for _, r := range rows {
			sp := r.spotted(ks, off)
			modes := map[string]gateOutcome{
				"text":    assessTurn(d, cat, r.text, nil),
				"ungated": assessTurn(d, cat, r.text, sp),
				"gated":   assessTurn(d, cat, r.text, gate.Filter(r.text, sp)),
			}
			for m, o := range modes {
				count(key{r.crisis, "all", m}, o)
				count(key{r.crisis, "voice " + r.voice, m}, o)
				count(key{r.crisis, "cond " + r.cond, m}, o)
				count(key{r.crisis, "vc " + r.voice + " " + r.cond, m}, o)
				if !r.crisis && o.card && m != "text" {
					t.Logf("offset %d %s FA %s/%s %q spotted %v", off, m, r.voice, r.clip, r.text, sp)
				}
			}
		}
		var lines []string
		for k, v := range tallies {
			if k.mode != "text" {
				continue
			}
			u, g := tallies[key{k.crisis, k.group, "ungated"}], tallies[key{k.crisis, k.group, "gated"}]
			lines = append(lines, fmt.Sprintf("offset %5d crisis=%-5v %-32s n=%4d  card text %4d ungated %4d gated %4d | crisis text %4d ungated %4d gated %4d",
				off, k.crisis, k.group, v.n, v.card, u.card, g.card, v.crisis, u.crisis, g.crisis))
		}
		sort.Strings(lines)
		for _, l := range lines {
			t.Log(l)
		}
	}
	phraseReport(t, gate, rows, ks)
	sweepReport(t, d, cat, gate.lex, rows, ks)
}

// target is the phrase of ks a crisis sentence names ("" none).
func target(sentence string, ks []Keyphrase) string {
	s := " " + strings.ToLower(sentence) + " "
	for _, k := range ks {
		if strings.Contains(s, " "+k.Phrase+" ") {
			return k.Phrase
		}
	}
	return ""
}

// phraseReport logs each phrase's closest benign transcript and how near
// the garbled transcripts of crisis sentences naming it came.
func phraseReport(t *testing.T, gate *Gate, rows []spotRow, ks []Keyphrase) {
	for _, k := range ks {
		nearBenign, nearCrisis := inf, []float64{}
		var which string
		for _, r := range rows {
			dist := gate.lex.Distance(k.Phrase, r.text)
			if !r.crisis && dist < nearBenign {
				nearBenign, which = dist, r.text
			}
			if r.crisis && target(r.clip, ks) == k.Phrase && !strings.Contains(r.text, k.Phrase) {
				nearCrisis = append(nearCrisis, dist)
			}
		}
		sort.Float64s(nearCrisis)
		t.Logf("%-20s max %.2f  nearest benign %.3f (%q)  garbled crisis: %v", k.Phrase, gate.MaxDistance(k.Phrase), nearBenign, which, fmtDists(nearCrisis))
	}
}

// sweepReport logs, for one MaxDistance for every phrase, the crisis turns
// reaching a card and crisis and the benign turns with a card.
func sweepReport(t *testing.T, d *safety.Detector, cat *safety.Catalog, lex *Lexicon, rows []spotRow, ks []Keyphrase) {
	for _, off := range []int32{0, -200, -400} {
		for _, m := range []float64{0.15, 0.2, 0.25, 0.3, 0.35, 0.4} {
			uk := append([]Keyphrase(nil), ks...)
			for i := range uk {
				uk[i].MaxDistance = m
			}
			g := NewGate(lex, uk)
			var pos, neg tally
			for _, r := range rows {
				o := assessTurn(d, cat, r.text, g.Filter(r.text, r.spotted(ks, off)))
				if r.crisis {
					pos.add(o)
				} else {
					neg.add(o)
				}
			}
			t.Logf("sweep offset %5d max %.2f: crisis turns %d card %d crisis %d | benign turns %d card %d", off, m, pos.n, pos.card, pos.crisis, neg.n, neg.card)
		}
	}
}

func fmtDists(v []float64) string {
	var b strings.Builder
	for _, x := range v {
		fmt.Fprintf(&b, "%.2f ", x)
	}
	return b.String()
}
