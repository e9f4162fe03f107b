package session

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// PlainLayout is a dependency-free CardLayout: one resource per page (more
// pages when a resource's text is longer than a page), the surface's text
// budget, words never split, action values (phone numbers, short codes)
// kept whole on one line, no ellipsis. The glasses package's layout, with
// real font metrics, replaces it when wired.
type PlainLayout struct{}

// Title is the title of every safety page.
const safetyTitle = "Support is available"

// LayoutSafety implements CardLayout.
func (PlainLayout) LayoutSafety(cardID string, a safety.Assessment, _ devices.Profile, sf devices.Surface) ([]glasses.OpsPage, error) {
	budget := sf.TextBudget
	if budget.LinesPerPage < 1 || budget.CharsPerLine < 8 {
		return nil, fmt.Errorf("session: layout %s: text budget %+v too small", sf.ID, budget)
	}
	var pages [][]string
	for _, r := range a.Resources {
		var lines []string
		lines = wrap(lines, r.Name, budget.CharsPerLine)
		for _, act := range r.Actions {
			label := act.Label
			if label == "" {
				label = strings.ToUpper(string(act.Type[:1])) + string(act.Type[1:])
			}
			if utf8.RuneCountInString(label+" "+act.Value) <= budget.CharsPerLine {
				lines = append(lines, label+" "+act.Value)
			} else {
				lines = wrap(lines, label, budget.CharsPerLine)
				lines = append(lines, act.Value) // whole, even if wider
			}
		}
		if r.Hours != "" {
			lines = wrap(lines, r.Hours, budget.CharsPerLine)
		}
		lines = wrap(lines, r.Description, budget.CharsPerLine)
		for len(lines) > 0 {
			n := min(len(lines), budget.LinesPerPage)
			pages = append(pages, lines[:n])
			lines = lines[n:]
		}
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("session: layout %s: assessment has no resources", sf.ID)
	}
	out := make([]glasses.OpsPage, len(pages))
	for i, lines := range pages {
		ctl := glasses.Control{ID: "next", Label: "Next", Role: "next"}
		if i == len(pages)-1 {
			ctl = glasses.Control{ID: "done", Label: "Done", Role: "back"}
		}
		out[i] = glasses.OpsPage{N: i + 1, Of: len(pages), Title: safetyTitle, Lines: lines, Controls: []glasses.Control{ctl}, Focus: ctl.ID,
			Ops: plainOps(sf, safetyTitle, lines, i+1, len(pages))}
	}
	return out, nil
}

func wrap(lines []string, text string, width int) []string {
	var cur strings.Builder
	for _, w := range strings.Fields(text) {
		if cur.Len() > 0 && utf8.RuneCountInString(cur.String())+1+utf8.RuneCountInString(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// plainOps draws a page: a dark panel (black is transparent on additive
// displays), the title, n/N, the body lines and a focused Next/Done control.
// Text y is the baseline.
func plainOps(sf devices.Surface, title string, lines []string, n, of int) []glasses.Op {
	f := sf.Fonts
	fg, dim, panel, btn := "#FFFFFF", "#CFD3D9", "#1A1B1F", "#2B2F38"
	if sf.Colors.Model == devices.ColorGreen {
		fg, dim, panel, btn = "#7DFF8A", "#4FBF5A", "#000000", "#0A3010"
	}
	m := sf.MarginPx
	base := func(top, lineH, px int) int { return top + (lineH+px)/2 - px/5 }
	ops := []glasses.Op{{Op: "panel", X: 0, Y: 0, W: sf.Width, H: sf.Height, R: max(m, 8), Fill: panel}}
	ops = append(ops,
		glasses.Op{Op: "text", X: m, Y: base(m, f.TitleLinePx, f.TitlePx), Text: title, Px: f.TitlePx, Bold: true, Color: fg, Style: "title"},
		glasses.Op{Op: "text", X: sf.Width - m - 3*f.MetaPx, Y: base(m, f.TitleLinePx, f.MetaPx), Text: fmt.Sprintf("%d/%d", n, of), Px: f.MetaPx, Color: dim, Style: "meta"})
	y := m + f.TitleLinePx + sf.GapPx
	for _, l := range lines {
		ops = append(ops, glasses.Op{Op: "text", X: m, Y: base(y, f.BodyLinePx, f.BodyPx), Text: l, Px: f.BodyPx, Color: fg, Style: "body"})
		y += f.BodyLinePx
	}
	if sf.Buttons {
		label, id := "Next", "next"
		if n == of {
			label, id = "Done", "done"
		}
		ops = append(ops, glasses.Op{Op: "button", X: m, Y: sf.Height - m - sf.ButtonRowPx, W: sf.Width - 2*m, H: sf.ButtonRowPx, R: sf.ButtonRowPx / 3,
			Text: label, Px: f.BodyPx, Color: "#F1F3F4", Fill: btn, ID: id, Focus: true})
	}
	return ops
}
