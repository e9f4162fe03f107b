package glasses

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/devices"
	"golang.org/x/image/math/fixed"
)

// Line is one drawn line of a page.
type Line struct {
	Text  string `json:"text"`
	Style Style  `json:"style"`
	// Cont is true when this line continues a token broken at a character
	// boundary on the previous line (a long URL or word): JoinText joins it
	// to the previous line without a space.
	Cont    bool `json:"cont,omitempty"`
	WidthPx int  `json:"width_px"`
	// Section is the block section (safety: resource index) of the line.
	Section int `json:"section"`
}

// Control is a focusable button in a page's control row.
type Control struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Role  Role   `json:"role,omitempty"`
}

// Control ids used by the pager.
const (
	ControlNext = "next"
	ControlDone = "done"
)

// Page is one screen of a card.
type Page struct {
	N        int       `json:"n"`
	Of       int       `json:"of"`
	Title    []string  `json:"title"`
	Lines    []Line    `json:"lines"`
	Controls []Control `json:"controls,omitempty"`
	// Focus is the index into Controls focused when the page opens: Next,
	// or the non-committing choice of a prompt. -1 without controls.
	Focus int `json:"focus"`
	// Resources are the indexes of the safety resources on this page.
	Resources []int `json:"resources,omitempty"`
}

// Indicator is the page's "n/N" text.
func (p Page) Indicator() string { return fmt.Sprintf("%d/%d", p.N, p.Of) }

// Layout is a card laid out for one device surface.
type Layout struct {
	Device  string
	Surface devices.Surface
	Card    Card
	Pages   []Page
	// Title is the wrapped title drawn on every page (Page.Title holds
	// the same texts).
	Title []Line
	// TimeoutMS is the prompt timeout (action cards); timeout = decline.
	TimeoutMS int
	// Source is the normalised source text the pages reproduce.
	Source string
}

// JoinText joins the lines of pages in reading order: lines are separated by
// one space, except a Cont line which joins its predecessor directly. The
// invariant is NormalizeSpace(JoinText(l.Pages)) == l.Source.
func JoinText(pages []Page) string {
	var b strings.Builder
	first := true
	for _, p := range pages {
		for _, ln := range p.Lines {
			if !first && !ln.Cont {
				b.WriteByte(' ')
			}
			b.WriteString(ln.Text)
			first = false
		}
	}
	return b.String()
}

// faces resolves the metrics for each style on a surface.
type faces struct {
	title, body, heading, emph, meta *metrics
	lineH                            map[Style]int
}

func facesFor(s devices.Surface) (*faces, error) {
	f := s.Fonts
	fw := f.FirmwareFont
	get := func(bold bool, px int) (*metrics, error) {
		if fw {
			// One firmware font: every style measures as the body face.
			return metricsFor(false, f.BodyPx)
		}
		return metricsFor(bold, px)
	}
	var fs faces
	var err error
	if fs.title, err = get(true, f.TitlePx); err != nil {
		return nil, err
	}
	if fs.body, err = get(false, f.BodyPx); err != nil {
		return nil, err
	}
	if fs.heading, err = get(true, f.HeadingPx); err != nil {
		return nil, err
	}
	if fs.emph, err = get(true, f.EmphPx); err != nil {
		return nil, err
	}
	if fs.meta, err = get(false, f.MetaPx); err != nil {
		return nil, err
	}
	fs.lineH = map[Style]int{StyleTitle: f.TitleLinePx, StyleBody: f.BodyLinePx, StyleHeading: f.HeadingLine, StyleEmph: f.EmphLinePx, StyleMeta: f.BodyLinePx}
	if fw {
		for k := range fs.lineH {
			fs.lineH[k] = f.BodyLinePx
		}
	}
	return &fs, nil
}

func (fs *faces) face(st Style) *metrics {
	switch st {
	case StyleTitle:
		return fs.title
	case StyleHeading:
		return fs.heading
	case StyleEmph:
		return fs.emph
	case StyleMeta:
		return fs.meta
	default:
		return fs.body
	}
}

// wrapper fills lines of at most maxPx pixels and maxRunes runes.
type wrapper struct {
	m        *metrics
	maxPx    int
	maxRunes int
	device   string
}

type wline struct {
	text string
	cont bool
	px   int
}

func (w *wrapper) fits(s string) (int, bool, error) {
	if utf8.RuneCountInString(s) > w.maxRunes {
		return 0, false, nil
	}
	px, err := w.m.widthPx(s)
	if err != nil {
		return 0, false, err
	}
	return px, px <= w.maxPx, nil
}

// wrap wraps normalised text. It never drops or alters a rune: every
// returned line's text joined per JoinText is the input.
func (w *wrapper) wrap(text string) ([]wline, error) {
	var out []wline
	cur, curPx, curCont := "", 0, false
	flush := func() {
		if cur != "" {
			out = append(out, wline{text: cur, cont: curCont, px: curPx})
		}
		cur, curPx, curCont = "", 0, false
	}
	queue := atoms(text)
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		at := a.text()
		if cur != "" {
			cand := cur + " " + at
			px, ok, err := w.fits(cand)
			if err != nil {
				return nil, err
			}
			if ok {
				cur, curPx = cand, px
				continue
			}
			flush()
		}
		px, ok, err := w.fits(at)
		if err != nil {
			return nil, err
		}
		if ok {
			cur, curPx = at, px
			continue
		}
		if len(a.words) > 1 {
			// A no-break span wider than a line: fall back to its words,
			// each number still whole.
			split := make([]atom, 0, len(a.words)+len(queue))
			for _, wd := range a.words {
				split = append(split, atom{words: []string{wd}})
			}
			queue = append(split, queue...)
			continue
		}
		if IsNumber(at) {
			return nil, w.unbreakable(at)
		}
		pieces, err := w.breakWord(at)
		if err != nil {
			return nil, err
		}
		for i, p := range pieces {
			if i < len(pieces)-1 {
				out = append(out, wline{text: p.text, cont: i > 0, px: p.px})
				continue
			}
			cur, curPx, curCont = p.text, p.px, true
		}
	}
	flush()
	return out, nil
}

func (w *wrapper) unbreakable(tok string) error {
	px, _ := w.m.widthPx(tok)
	return &UnbreakableError{Token: tok, WidthPx: px, LimitPx: w.maxPx, Runes: utf8.RuneCountInString(tok), LimitRunes: w.maxRunes, SurfaceDevice: w.device}
}

// breakWord splits a non-number token wider than a line at character
// boundaries. It never breaks between two digits (a number inside a URL
// stays whole) nor before a mark; a digit run wider than a line is an error.
func (w *wrapper) breakWord(tok string) ([]wline, error) {
	var out []wline
	rest := tok
	for rest != "" {
		if px, ok, err := w.fits(rest); err != nil {
			return nil, err
		} else if ok {
			out = append(out, wline{text: rest, px: px})
			break
		}
		// Longest allowed prefix that fits.
		cut, cutPx := -1, 0
		nice, nicePx := -1, 0 // last break after a URL/word separator
		var acc fixed.Int26_6
		runes := 0
		var prev rune = -1
		for i, r := range rest {
			if i > 0 && canBreak(prev, r) {
				cut, cutPx = i, acc.Ceil()
				if strings.ContainsRune("/-.?&=_", prev) {
					nice, nicePx = i, acc.Ceil()
				}
			}
			g, err := w.m.glyph(r)
			if err != nil {
				return nil, err
			}
			runes++
			acc += g.advance
			if runes > w.maxRunes || acc.Ceil() > w.maxPx {
				break
			}
			prev = r
		}
		if nice > 0 && 2*nicePx >= w.maxPx {
			cut, cutPx = nice, nicePx // prefer "…/how-we-can-" over "…/how-we-can-he"
		}
		if cut <= 0 {
			return nil, w.unbreakable(digitRunAt(rest))
		}
		out = append(out, wline{text: rest[:cut], px: cutPx})
		rest = rest[cut:]
	}
	return out, nil
}

// canBreak reports whether a line may break between a and b inside a token.
func canBreak(a, b rune) bool {
	if unicode.IsDigit(a) && unicode.IsDigit(b) {
		return false
	}
	return !unicode.Is(unicode.Mn, b) && !unicode.Is(unicode.Me, b)
}

// digitRunAt returns the leading digit run of s (the reason it cannot
// break), or s itself.
func digitRunAt(s string) string {
	end := 0
	for i, r := range s {
		if !unicode.IsDigit(r) {
			break
		}
		end = i + utf8.RuneLen(r)
	}
	if end == 0 {
		return s
	}
	return s[:end]
}
