package glasses

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
)

// The plain layout is the engine's own fallback (SafetyPages, PromptPages)
// for a card its layout refuses: a rune the embedded fonts cannot draw, a
// number wider than a line, a title too long for its lines. It needs no
// font: it counts runes against the surface's text budget, puts one
// resource per page (more pages when a resource is longer than a page),
// never splits a word, keeps an action's value (a phone number, a short
// code) whole on one line even when that line is wider, and never
// ellipsises. Its pages carry the title and n/N like every page, without
// title_lines and styles.

// ErrFallback is wrapped by the error SafetyPages and PromptPages return
// together with the plain layout's pages: the engine's own layout failed
// (the wrapped cause says why) and the plain layout drew the card.
var ErrFallback = errors.New("glasses: plain fallback")

// plainSafetyTitle is the title of every plain safety page.
const plainSafetyTitle = "Support is available"

// plainSafety lays resources out with the plain layout.
func plainSafety(res []safety.Resource, sf devices.Surface) ([]OpsPage, error) {
	budget := sf.TextBudget
	if budget.LinesPerPage < 1 || budget.CharsPerLine < 8 {
		return nil, fmt.Errorf("glasses: plain layout %s: text budget %+v too small: %w", sf.ID, budget, ErrLayout)
	}
	var pages [][]string
	for _, r := range res {
		var lines []string
		lines = plainWrap(lines, r.Name, budget.CharsPerLine)
		for _, act := range r.Actions {
			label := act.Label
			if label == "" {
				label = strings.ToUpper(string(act.Type[:1])) + string(act.Type[1:])
			}
			if utf8.RuneCountInString(label+" "+act.Value) <= budget.CharsPerLine {
				lines = append(lines, label+" "+act.Value)
			} else {
				lines = plainWrap(lines, label, budget.CharsPerLine)
				lines = append(lines, act.Value) // whole, even if wider
			}
		}
		if r.Hours != "" {
			lines = plainWrap(lines, r.Hours, budget.CharsPerLine)
		}
		lines = plainWrap(lines, r.Description, budget.CharsPerLine)
		for len(lines) > 0 {
			n := min(len(lines), budget.LinesPerPage)
			pages = append(pages, lines[:n])
			lines = lines[n:]
		}
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("glasses: plain layout %s: no resources: %w", sf.ID, ErrInvalidCard)
	}
	out := make([]OpsPage, len(pages))
	for i, lines := range pages {
		ctl := Control{ID: ControlNext, Label: "Next", Role: "next"}
		if i == len(pages)-1 {
			ctl = Control{ID: ControlDone, Label: "Done", Role: "back"}
		}
		out[i] = OpsPage{N: i + 1, Of: len(pages), Title: plainSafetyTitle, Lines: lines, Controls: []Control{ctl}, Focus: ctl.ID,
			Ops: plainOps(sf, plainSafetyTitle, lines, i+1, len(pages))}
	}
	return out, nil
}

// plainPrompt lays an approve/decline prompt out with the plain layout:
// the title on every page, the body wrapped to the surface's budget, and
// on the last page the Approve and Decline controls with focus on Decline.
func plainPrompt(title, body string, sf devices.Surface) ([]OpsPage, error) {
	budget := sf.TextBudget
	if budget.LinesPerPage < 2 || budget.CharsPerLine < 8 {
		return nil, fmt.Errorf("glasses: plain layout prompt %s: text budget %+v too small: %w", sf.ID, budget, ErrLayout)
	}
	lines := plainWrap(nil, body, budget.CharsPerLine)
	if !sf.Buttons {
		// No buttons: the card says what to say (keys still work).
		lines = append(lines, plainWrap(nil, `Say "yes" or "no".`, budget.CharsPerLine)...)
	}
	var pages [][]string
	for len(lines) > 0 {
		n := min(len(lines), budget.LinesPerPage)
		pages = append(pages, lines[:n])
		lines = lines[n:]
	}
	if len(pages) == 0 {
		pages = [][]string{{}}
	}
	out := make([]OpsPage, len(pages))
	for i, pl := range pages {
		p := OpsPage{N: i + 1, Of: len(pages), Title: title, Lines: append([]string{}, pl...),
			Ops: plainOps(sf, title, pl, i+1, len(pages))}
		if sf.Buttons {
			p.Ops = p.Ops[:len(p.Ops)-1] // plainOps' Next/Done button
		}
		if i == len(pages)-1 {
			plainPromptControls(&p, sf)
		} else {
			p.Controls = []Control{{ID: ControlNext, Label: "Next", Role: "next"}}
			p.Focus = ControlNext
			if sf.Buttons {
				m := sf.MarginPx
				p.Ops = append(p.Ops, Op{Op: "button", X: m, Y: sf.Height - m - sf.ButtonRowPx, W: sf.Width - 2*m,
					H: sf.ButtonRowPx, R: sf.ButtonRowPx / 3, Text: "Next", Px: sf.Fonts.BodyPx, Color: "#F1F3F4",
					Fill: "#2B2F38", ID: ControlNext, Focus: true})
			}
		}
		out[i] = p
	}
	return out, nil
}

// plainPromptControls puts Approve and Decline on a prompt's last page,
// focus on Decline.
func plainPromptControls(p *OpsPage, sf devices.Surface) {
	p.Controls = []Control{{ID: ControlApprove, Label: "Approve", Role: RoleCommit},
		{ID: ControlDecline, Label: "Decline", Role: RoleDecline}}
	p.Focus = ControlDecline
	if !sf.Buttons {
		return
	}
	m, w := sf.MarginPx, (sf.Width-3*sf.MarginPx)/2
	y := sf.Height - m - sf.ButtonRowPx
	p.Ops = append(p.Ops,
		Op{Op: "button", X: m, Y: y, W: w, H: sf.ButtonRowPx, R: sf.ButtonRowPx / 3, Text: "Approve",
			Px: sf.Fonts.BodyPx, Color: "#F1F3F4", Fill: "#2B2F38", ID: ControlApprove},
		Op{Op: "button", X: 2*m + w, Y: y, W: w, H: sf.ButtonRowPx, R: sf.ButtonRowPx / 3, Text: "Decline",
			Px: sf.Fonts.BodyPx, Color: "#F1F3F4", Fill: "#2B2F38", ID: ControlDecline, Focus: true})
}

// plainWrap appends text's words to lines, at most width runes a line; a
// longer word stands alone, whole.
func plainWrap(lines []string, text string, width int) []string {
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
func plainOps(sf devices.Surface, title string, lines []string, n, of int) []Op {
	f := sf.Fonts
	fg, dim, panel, btn := "#FFFFFF", "#CFD3D9", "#1A1B1F", "#2B2F38"
	if sf.Colors.Model == devices.ColorGreen {
		fg, dim, panel, btn = "#7DFF8A", "#4FBF5A", "#000000", "#0A3010"
	}
	m := sf.MarginPx
	base := func(top, lineH, px int) int { return top + (lineH+px)/2 - px/5 }
	ops := []Op{{Op: "panel", X: 0, Y: 0, W: sf.Width, H: sf.Height, R: max(m, 8), Fill: panel}}
	ops = append(ops,
		Op{Op: "text", X: m, Y: base(m, f.TitleLinePx, f.TitlePx), Text: title, Px: f.TitlePx, Bold: true, Color: fg, Style: StyleTitle},
		Op{Op: "text", X: sf.Width - m - 3*f.MetaPx, Y: base(m, f.TitleLinePx, f.MetaPx), Text: fmt.Sprintf("%d/%d", n, of), Px: f.MetaPx, Color: dim, Style: StyleMeta})
	y := m + f.TitleLinePx + sf.GapPx
	for _, l := range lines {
		ops = append(ops, Op{Op: "text", X: m, Y: base(y, f.BodyLinePx, f.BodyPx), Text: l, Px: f.BodyPx, Color: fg, Style: StyleBody})
		y += f.BodyLinePx
	}
	if sf.Buttons {
		label, id := "Next", ControlNext
		if n == of {
			label, id = "Done", ControlDone
		}
		ops = append(ops, Op{Op: "button", X: m, Y: sf.Height - m - sf.ButtonRowPx, W: sf.Width - 2*m, H: sf.ButtonRowPx, R: sf.ButtonRowPx / 3,
			Text: label, Px: f.BodyPx, Color: "#F1F3F4", Fill: btn, ID: id, Focus: true})
	}
	return ops
}
