package glasses

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/veraneural/vera-gateway/devices"
)

// OpsVersion is the display-op format version (research glasses-anchors §7).
const OpsVersion = 1

// OpsDoc is the compact display-op form of a laid-out card. A client with
// native text rendering draws Pages[i].Lines (already broken for its
// profile) and ignores Ops; a client without our fonts may still draw Ops
// positions with its own. Hash lets a client prove the page set is complete.
type OpsDoc struct {
	V        int      `json:"v"`
	Device   string   `json:"device"`
	Surface  string   `json:"surface"`
	Width    int      `json:"w"`
	Height   int      `json:"h"`
	CardID   string   `json:"card_id,omitempty"`
	Rev      int      `json:"rev,omitempty"`
	CardKind Kind     `json:"card_kind"`
	Priority Priority `json:"prio"`
	// Sticky: safety cards are cleared only by an explicit user action.
	Sticky bool `json:"sticky"`
	// TimeoutMS is set on prompts only; timeout means decline.
	TimeoutMS int       `json:"timeout_ms,omitempty"`
	Hash      string    `json:"hash"`
	Pages     []OpsPage `json:"pages"`
}

// OpsPage is one page: its exact text lines in reading order plus drawing
// ops. It is also the page of the session events (safety.card,
// display.card, action.proposed), unchanged: a client with its own text
// rendering draws Title and Lines; a HUD draws Ops.
type OpsPage struct {
	N     int    `json:"n"`
	Of    int    `json:"of"`
	Title string `json:"title"`
	// TitleLines is the title as wrapped for the surface (absent from the
	// plain fallback's pages, which keep it on one line).
	TitleLines []string `json:"title_lines,omitempty"`
	Lines      []string `json:"lines"`
	// Styles is parallel to Lines: title, body, heading, emph or meta
	// (absent from the plain fallback's pages).
	Styles []Style `json:"styles,omitempty"`
	// Cont lists lines that continue the previous line's token (join
	// without a space).
	Cont []int `json:"cont,omitempty"`
	// Resources are the indexes (into the card's resources) on this page.
	Resources []int     `json:"resources,omitempty"`
	Controls  []Control `json:"controls,omitempty"`
	// Focus is the id of the control focused when the page opens.
	Focus string `json:"focus,omitempty"`
	Ops   []Op   `json:"ops"`
}

// Op is one drawing operation in surface pixels.
//
//	panel:  filled rounded rectangle (x, y, w, h, r, fill)
//	text:   a run of text; y is the BASELINE; px/bold/color give the style
//	button: filled rounded rectangle with a centred label; focus draws a ring
type Op struct {
	Op    string `json:"op"`
	X     int    `json:"x"`
	Y     int    `json:"y"`
	W     int    `json:"w,omitempty"`
	H     int    `json:"h,omitempty"`
	R     int    `json:"r,omitempty"`
	Px    int    `json:"px,omitempty"`
	Bold  bool   `json:"bold,omitempty"`
	Color string `json:"color,omitempty"`
	Fill  string `json:"fill,omitempty"`
	Text  string `json:"text,omitempty"`
	Style Style  `json:"style,omitempty"`
	ID    string `json:"id,omitempty"`
	Focus bool   `json:"focus,omitempty"`
}

// Palette (hex) for colour surfaces; green surfaces quantise luminance.
const (
	colorPanel     = "#1A1B1F"
	colorTitle     = "#FFFFFF"
	colorBody      = "#E8EAED"
	colorHeading   = "#FFD479"
	colorEmph      = "#FFFFFF"
	colorMeta      = "#CFD3D9"
	colorButton    = "#2B2F38"
	colorButtonTxt = "#F1F3F4"
	colorFocus     = "#8AB4F8"
)

// SourceHash is "sha256:" + hex of the normalised source text.
func SourceHash(source string) string {
	h := sha256.Sum256([]byte(source))
	return "sha256:" + hex.EncodeToString(h[:])
}

// Ops returns the display-op document of the layout.
func (l *Layout) Ops() (OpsDoc, error) {
	doc := OpsDoc{
		V: OpsVersion, Device: l.Device, Surface: l.Surface.ID, Width: l.Surface.Width, Height: l.Surface.Height,
		CardID: l.Card.ID, Rev: l.Card.Rev, CardKind: l.Card.Kind, Priority: l.Card.Rank(),
		Sticky: l.Card.Kind == KindSafety, Hash: SourceHash(l.Source),
	}
	if l.Card.Kind == KindAction {
		doc.TimeoutMS = l.TimeoutMS
	}
	fs, err := facesFor(l.Surface)
	if err != nil {
		return OpsDoc{}, err
	}
	for i := range l.Pages {
		p := l.Pages[i]
		op := OpsPage{N: p.N, Of: p.Of, Title: NormalizeSpace(l.Card.Title), TitleLines: p.Title,
			Lines: make([]string, len(p.Lines)), Styles: make([]Style, len(p.Lines)), Resources: p.Resources, Controls: p.Controls}
		for j, ln := range p.Lines {
			op.Lines[j], op.Styles[j] = ln.Text, ln.Style
			if ln.Cont {
				op.Cont = append(op.Cont, j)
			}
		}
		if p.Focus >= 0 && p.Focus < len(p.Controls) {
			op.Focus = p.Controls[p.Focus].ID
		}
		if op.Ops, err = l.pageOps(fs, p); err != nil {
			return OpsDoc{}, err
		}
		doc.Pages = append(doc.Pages, op)
	}
	return doc, nil
}

func styleColor(st Style) string {
	switch st {
	case StyleTitle:
		return colorTitle
	case StyleHeading:
		return colorHeading
	case StyleEmph:
		return colorEmph
	case StyleMeta:
		return colorMeta
	default:
		return colorBody
	}
}

// pageOps computes the geometry of one page.
func (l *Layout) pageOps(fs *faces, p Page) ([]Op, error) {
	s := l.Surface
	m := s.MarginPx
	var ops []Op
	if s.Colors.Model == devices.ColorRGB {
		// Black is transparent on additive displays: text sits on a dark
		// panel. Corners outside the radius stay black.
		ops = append(ops, Op{Op: "panel", X: 0, Y: 0, W: s.Width, H: s.Height, R: max(m, 8), Fill: colorPanel})
	}
	text := func(x, top, lineH int, st Style, t string) Op {
		f := fs.face(st)
		return Op{Op: "text", X: x, Y: top + f.baseline(lineH), Px: f.key.px, Bold: f.key.bold, Color: styleColor(st), Text: t, Style: st}
	}
	y := m
	titleH := fs.lineH[StyleTitle]
	for _, t := range p.Title {
		ops = append(ops, text(m, y, titleH, StyleTitle, t))
		y += titleH
	}
	ind := p.Indicator()
	indPx, err := fs.meta.widthPx(ind)
	if err != nil {
		return nil, err
	}
	ops = append(ops, text(s.Width-m-indPx, m, titleH, StyleMeta, ind))
	y += s.GapPx
	for _, ln := range p.Lines {
		h := fs.lineH[ln.Style]
		ops = append(ops, text(m, y, h, ln.Style, ln.Text))
		y += h
	}
	if len(p.Controls) > 0 {
		bw := buttonWidth(s, len(p.Controls))
		top := s.Height - m - s.ButtonRowPx
		for i, c := range p.Controls {
			ops = append(ops, Op{Op: "button", X: m + i*(bw+s.GapPx), Y: top, W: bw, H: s.ButtonRowPx, R: s.ButtonRowPx / 3,
				Px: fs.body.key.px, Color: colorButtonTxt, Fill: colorButton, Text: c.Label, ID: c.ID, Focus: i == p.Focus})
		}
	}
	return ops, nil
}
