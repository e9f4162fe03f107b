package glasses

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
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

	block int // index of the source block (Card.Blocks) the line shows
	act   int // 1 + index of the resource action the line shows; 0 if none
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
	space    fixed.Int26_6 // advance of U+0020; measured on first use when zero
}

type wline struct {
	text string
	cont bool
	px   int
}

func newWrapper(fs *faces, st Style, maxPx, maxRunes int, device string) (wrapper, error) {
	if maxPx <= 0 || maxRunes <= 0 {
		return wrapper{}, fmt.Errorf("glasses: %s: no room for %s text: %w", device, st, ErrLayout)
	}
	m := fs.face(st)
	sp, err := m.glyph(' ')
	if err != nil {
		return wrapper{}, err
	}
	return wrapper{m: m, maxPx: maxPx, maxRunes: maxRunes, device: device, space: sp.advance}, nil
}

// spaceAdv is the advance of a space (engine.go builds wrappers for titles
// without newWrapper).
func (w *wrapper) spaceAdv() fixed.Int26_6 {
	if w.space == 0 {
		if g, err := w.m.glyph(' '); err == nil {
			w.space = g.advance
		}
	}
	return w.space
}

func (w *wrapper) fitsW(adv fixed.Int26_6, runes int) bool {
	return runes <= w.maxRunes && adv.Ceil() <= w.maxPx
}

// fits measures s against the line budget.
func (w *wrapper) fits(s string) (bool, error) {
	adv, n, err := w.m.measure(s)
	return err == nil && w.fitsW(adv, n), err
}

// wrap wraps normalised text. It never drops or alters a rune: every
// returned line's text joined per JoinText is the input.
func (w *wrapper) wrap(text string) ([]wline, error) { return w.wrapAtoms(atoms(text)) }

// piece is a measured run of text.
type piece struct {
	text  string
	adv   fixed.Int26_6
	runes int
	glued bool // on the line as a value glued to the part before it
}

// lineBuf is the line being filled: its atoms' texts joined by spaces,
// measured as they are added (advances add up exactly: no kerning).
type lineBuf struct {
	parts []piece
	adv   fixed.Int26_6
	runes int
	cont  bool // the line continues a token broken on the line before
}

// with returns the advance and runes of the line with p appended.
func (b *lineBuf) with(w *wrapper, p piece) (fixed.Int26_6, int) {
	if len(b.parts) == 0 {
		return p.adv, p.runes
	}
	return b.adv + w.spaceAdv() + p.adv, b.runes + 1 + p.runes
}

func (b *lineBuf) add(w *wrapper, p piece) {
	b.adv, b.runes = b.with(w, p)
	b.parts = append(b.parts, p)
}

// text joins the parts with spaces.
func (b *lineBuf) text() string {
	if len(b.parts) == 1 {
		return b.parts[0].text
	}
	n := len(b.parts) - 1
	for _, p := range b.parts {
		n += len(p.text)
	}
	var sb strings.Builder
	sb.Grow(n)
	for i, p := range b.parts {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(p.text)
	}
	return sb.String()
}

// dropLast removes the last part (a label word that moves down).
func (b *lineBuf) dropLast(w *wrapper) piece {
	last := b.parts[len(b.parts)-1]
	rest := b.parts[:len(b.parts)-1]
	*b = lineBuf{parts: rest[:0], cont: b.cont}
	for _, p := range rest {
		b.add(w, p)
	}
	return last
}

// wrapAtoms fills lines greedily. A value glued to its label starts on the
// label's line (the label's last word moves down with it if need be); a
// token wider than a line starts on the current line when a piece of it
// fits there, broken at a URL boundary.
func (w *wrapper) wrapAtoms(queue []atom) ([]wline, error) {
	r := wrapRun{w: w, queue: queue}
	for len(r.queue) > 0 {
		a := r.queue[0]
		r.queue = r.queue[1:]
		at := a.text()
		adv, n, err := w.m.measure(at)
		if err != nil {
			return nil, err
		}
		p := piece{text: at, adv: adv, runes: n, glued: a.glue}
		if len(r.cur.parts) > 0 {
			placed, err := r.after(a, p)
			if err != nil {
				return nil, err
			}
			if placed {
				continue
			}
		}
		if err := r.start(a, p); err != nil {
			return nil, err
		}
	}
	r.flush()
	return r.out, nil
}

// wrapRun is the state of one wrap: lines done, the line being filled and
// the atoms left.
type wrapRun struct {
	w     *wrapper
	out   []wline
	cur   lineBuf
	queue []atom
}

func (r *wrapRun) flush() {
	if len(r.cur.parts) > 0 {
		r.out = append(r.out, wline{text: r.cur.text(), cont: r.cur.cont, px: r.cur.adv.Ceil()})
	}
	r.cur = lineBuf{parts: r.cur.parts[:0]} // reuse the parts' array
}

// emit puts broken pieces on lines of their own; the last one stays the
// current line. The first continues the line before when cont.
func (r *wrapRun) emit(pieces []piece, cont bool) {
	for i, p := range pieces[:len(pieces)-1] {
		r.out = append(r.out, wline{text: p.text, cont: cont || i > 0, px: p.adv.Ceil()})
	}
	r.cur = lineBuf{parts: r.cur.parts[:0], cont: cont || len(pieces) > 1}
	r.cur.add(r.w, pieces[len(pieces)-1])
}

// after puts atom a (measured as p) after the current line's text when it
// (or its first piece) fits there, moving a label's last word down with
// its glued value if that makes it fit; otherwise it ends the line and
// reports false.
func (r *wrapRun) after(a atom, p piece) (bool, error) {
	placed, rest, err := r.w.extend(&r.cur, a, p)
	if err != nil {
		return false, err
	}
	// A word already glued to the one before it stays: of a chain of glued
	// words too long for a line, the first link holds.
	if !placed && a.glue && len(r.cur.parts) > 1 && !r.cur.parts[len(r.cur.parts)-1].glued {
		var carried lineBuf
		carried.add(r.w, r.cur.parts[len(r.cur.parts)-1])
		if placed, rest, err = r.w.extend(&carried, a, p); err != nil {
			return false, err
		}
		if placed {
			r.cur.dropLast(r.w)
			r.flush()
			r.cur = carried
		}
	}
	if placed && len(rest) == 0 {
		return true, nil
	}
	r.flush()
	if placed {
		r.emit(rest, true) // the rest of a broken token
	}
	return placed, nil
}

// start begins a line with a: whole when it fits, else a span falls back
// to its parts and a token breaks (a number wider than a line is an error).
func (r *wrapRun) start(a atom, p piece) error {
	w := r.w
	if w.fitsW(p.adv, p.runes) {
		r.cur.add(w, p)
		return nil
	}
	if len(a.words) > 1 {
		// A no-break span wider than a line: fall back to its parts, each
		// number still whole and still on the line of the word before it
		// ("Call" + "988", "to" + "741741").
		split := a.split
		if split == nil {
			split = make([]atom, 0, len(a.words))
			for j, wd := range a.words {
				split = append(split, atom{words: a.words[j : j+1 : j+1], glue: j > 0 && IsNumber(wd) && !IsNumber(a.words[j-1])})
			}
		}
		r.queue = append(slices.Clone(split), r.queue...)
		return nil
	}
	if IsNumber(p.text) {
		return w.unbreakable(p.text)
	}
	pieces, err := w.breakWord(p, 0, 0)
	if err != nil {
		return err
	}
	r.emit(pieces, r.cur.cont)
	return nil
}

// extend tries to put atom a (measured as p) on the current, non-empty
// line: whole, or, for a single token wider than a line, its first piece
// broken at a boundary. rest are the pieces left for the next lines.
func (w *wrapper) extend(cur *lineBuf, a atom, p piece) (placed bool, rest []piece, err error) {
	if w.fitsW(cur.with(w, p)) {
		cur.add(w, p)
		return true, nil, nil
	}
	if len(a.words) > 1 || IsNumber(p.text) || w.fitsW(p.adv, p.runes) {
		return false, nil, nil // a span, a number, or a token that fits a line of its own
	}
	pieces, err := w.breakWord(p, cur.adv+w.spaceAdv(), cur.runes+1)
	if err != nil || pieces == nil {
		return false, nil, err
	}
	pieces[0].glued = a.glue
	cur.add(w, pieces[0])
	return true, pieces[1:], nil
}

func (w *wrapper) unbreakable(tok string) error {
	px, _ := w.m.widthPx(tok)
	return &UnbreakableError{Token: tok, WidthPx: px, LimitPx: w.maxPx, Runes: utf8.RuneCountInString(tok), LimitRunes: w.maxRunes, SurfaceDevice: w.device}
}

// URL boundaries: a token wider than a line breaks after one of these; the
// major ones are preferred when they fill at least half the line.
const (
	boundaryRunes = "/.-?&=_#"
	majorRunes    = "/?&#"
)

// breakWord splits a token wider than a line into pieces. With a lead (the
// advance and runes of the current line plus a space) the first piece goes
// after it; breakWord returns nil pieces if no piece may go there. Breaks
// fall after a URL boundary (/ . - ? & = _ #) unless the segment between two
// boundaries is itself wider than a line, which then breaks at character
// boundaries. It never breaks inside a number ("800-273-8255", "2026/11")
// nor before a mark; a number wider than a line is an *UnbreakableError.
func (w *wrapper) breakWord(tok piece, leadAdv fixed.Int26_6, leadRunes int) ([]piece, error) {
	var out []piece
	rest := tok
	for rest.text != "" {
		if w.fitsW(leadAdv+rest.adv, leadRunes+rest.runes) {
			out = append(out, rest)
			break
		}
		cut, err := w.cutPoint(rest.text, leadAdv, leadRunes)
		if err != nil {
			return nil, err
		}
		if cut.text == "" {
			if leadRunes > 0 {
				return nil, nil
			}
			return nil, w.unbreakable(rest.text[:unbreakableRun(rest.text)])
		}
		out = append(out, cut)
		rest = piece{text: rest.text[len(cut.text):], adv: rest.adv - cut.adv, runes: rest.runes - cut.runes}
		leadAdv, leadRunes = 0, 0
	}
	return out, nil
}

// cutPoint returns the piece of rest the line holding the lead and rest
// should end with; empty when no allowed break fits.
func (w *wrapper) cutPoint(rest string, leadAdv fixed.Int26_6, leadRunes int) (piece, error) {
	avail := fixed.I(w.maxPx) - leadAdv
	var anyCut, bnd, major piece
	var acc fixed.Int26_6
	runes := 0
	var prev rune = -1
	for i, r := range rest {
		if i > 0 && breakAllowed(rest, i) {
			anyCut = piece{text: rest[:i], adv: acc, runes: runes}
			if strings.ContainsRune(boundaryRunes, prev) && r != prev {
				bnd = anyCut
				if strings.ContainsRune(majorRunes, prev) {
					major = anyCut
				}
			}
		}
		g, err := w.m.glyph(r)
		if err != nil {
			return piece{}, err
		}
		runes++
		acc += g.advance
		if leadRunes+runes > w.maxRunes || (leadAdv+acc).Ceil() > w.maxPx {
			break
		}
		prev = r
	}
	// Half the line, in pixels or in runes (whichever budget binds).
	half := 2*major.adv >= avail || 2*major.runes >= w.maxRunes-leadRunes
	if major.text != "" && half && w.segmentFits(rest[len(major.text):]) {
		return major, nil // "…samaritans.org/" + "how-we-can-help/…"
	}
	if bnd.text != "" && w.segmentFits(rest[len(bnd.text):]) {
		return bnd, nil
	}
	if leadRunes > 0 && bnd.text == "" && w.segmentFits(rest) {
		// The first segment fits a line of its own: do not cut into it
		// after the lead; it starts the next line.
		return piece{}, nil
	}
	return anyCut, nil
}

// segmentFits reports whether the URL segment that s starts with (up to and
// including its next boundary rune) fits on a line.
func (w *wrapper) segmentFits(s string) bool {
	end := len(s)
	var prev rune = -1
	for i, r := range s {
		if i > 0 && strings.ContainsRune(boundaryRunes, prev) && r != prev {
			end = i
			break
		}
		prev = r
	}
	ok, err := w.fits(s[:end])
	return err == nil && ok
}

// breakAllowed reports whether a line may break before byte offset i of
// tok: never before a combining mark, never inside a number (digits joined
// only by number punctuation: "988", "800-273-8255", "13.11", "2026/11").
func breakAllowed(tok string, i int) bool {
	b, _ := utf8.DecodeRuneInString(tok[i:])
	if unicode.Is(unicode.Mn, b) || unicode.Is(unicode.Me, b) {
		return false
	}
	return !(digitBefore(tok[:i]) && digitAfter(tok[i:]))
}

// digitBefore reports whether s ends in a digit, possibly followed by
// number punctuation.
func digitBefore(s string) bool {
	for s != "" {
		r, n := utf8.DecodeLastRuneInString(s)
		switch {
		case unicode.IsDigit(r):
			return true
		case strings.ContainsRune(numberPunct, r):
			s = s[:len(s)-n]
		default:
			return false
		}
	}
	return false
}

// digitAfter reports whether s starts with a digit, possibly after number
// punctuation.
func digitAfter(s string) bool {
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			return true
		case strings.ContainsRune(numberPunct, r):
		default:
			return false
		}
	}
	return false
}

// unbreakableRun is the length of the leading part of s that has no allowed
// break (the number that cannot be split).
func unbreakableRun(s string) int {
	for i := range s {
		if i > 0 && breakAllowed(s, i) {
			return i
		}
	}
	return len(s)
}

// minResourcePageLines is the page height, in body lines, from which a
// surface shows one safety resource per page (a name, a description, hours
// and two numbers). Below it (G1, Mentra: 4 lines) resources flow from page
// to page, and Card.Blocks puts each resource's numbers right after its name.
const minResourcePageLines = 6

// OnePerPage reports whether s starts every safety resource on a fresh page
// (the Meta mock: one resource per page). On smaller surfaces a resource
// that fits a page still never splits, and one that cannot fit a page starts
// on the page the previous one ends on, so no page holds only a tail.
func OnePerPage(s devices.Surface) bool { return s.TextBudget.LinesPerPage >= minResourcePageLines }

// budget bounds one page's body.
type budget struct {
	lines, px int
	lineH     map[Style]int
}

func (b budget) fits(n, h int) bool { return n <= b.lines && h <= b.px }

func (b budget) height(ls []Line) int {
	h := 0
	for _, l := range ls {
		h += b.lineH[l.Style]
	}
	return h
}

// wblock is one source block, wrapped.
type wblock struct {
	lines   []Line
	style   Style // the block's own style (a line may be drawn smaller)
	section int
	act     int // 1 + index of the resource action the block shows; 0 if none
}

// unit is a run of lines that goes onto one page.
type unit struct {
	lines   []Line
	h       int
	section int
}

// packBody wraps the card's blocks and packs their lines into pages, in
// source order:
//   - an action's lines (label and value) stay on one page, and a
//     resource's name stays with the line after it;
//   - a safety resource starts a fresh page on surfaces where resources fit
//     a page (OnePerPage); elsewhere a resource that fits a page is never
//     split, and one that cannot fit starts where the previous one ends;
//   - otherwise pages fill greedily, so a page that holds only the tail of
//     a resource holds what could not fit on the page before.
func packBody(fs *faces, c Card, device string, s devices.Surface) ([]Page, error) {
	blocks, err := wrapBlocks(fs, c, device, s)
	if err != nil {
		return nil, err
	}
	b := budget{lines: s.TextBudget.LinesPerPage, px: s.BodyAreaPx(), lineH: fs.lineH}
	return packUnits(keepUnits(blocks, b), c.Kind == KindSafety, OnePerPage(s), b), nil
}

func wrapBlocks(fs *faces, c Card, device string, s devices.Surface) ([]wblock, error) {
	width, runes, bodyH := s.ContentWidth(), s.TextBudget.CharsPerLine, s.BodyAreaPx()
	blocks := c.Blocks(s)
	out := make([]wblock, 0, len(blocks))
	var acts actionTexts
	for bi, b := range blocks {
		act, valueAt := acts.of(c, b)
		st := b.Style
		if fs.lineH[st] > bodyH {
			st = StyleBody
		}
		wl, err := wrapBlock(fs, st, b.Text, act, valueAt, width, runes, device)
		if err != nil {
			return nil, err
		}
		if st == StyleEmph && len(wl) > 1 {
			// A call line too long to stand large on one line is drawn as
			// body text instead of being split large.
			st = StyleBody
			if wl, err = wrapBlock(fs, st, b.Text, act, valueAt, width, runes, device); err != nil {
				return nil, err
			}
		}
		wb := wblock{style: b.Style, section: b.Section, act: act, lines: make([]Line, 0, len(wl))}
		for _, w := range wl {
			wb.lines = append(wb.lines, Line{Text: w.text, Style: st, Cont: w.cont, WidthPx: w.px, Section: b.Section, block: bi, act: act})
		}
		out = append(out, wb)
	}
	return out, nil
}

func wrapBlock(fs *faces, st Style, text string, act, valueAt, width, runes int, device string) ([]wline, error) {
	w, err := newWrapper(fs, st, width, runes, device)
	if err != nil {
		return nil, err
	}
	if act == 0 {
		return w.wrap(text)
	}
	return w.wrapAtoms(actionAtoms(text, valueAt))
}

// actionTexts caches the action texts of the resource being wrapped.
type actionTexts struct {
	section int
	texts   []string
}

// of finds the resource action a safety block shows: 1 + its index (0 when
// the block is not an action) and the word where its value starts.
func (at *actionTexts) of(c Card, b Block) (act, valueAt int) {
	if c.Kind != KindSafety || b.Style == StyleHeading || b.Section < 0 || b.Section >= len(c.Resources) {
		return 0, -1
	}
	acts := c.Resources[b.Section].Actions
	if at.texts == nil || at.section != b.Section {
		at.section, at.texts = b.Section, make([]string, len(acts))
		for j, a := range acts {
			at.texts[j] = NormalizeSpace(ActionText(a))
		}
	}
	for j, t := range at.texts {
		if t == b.Text {
			return j + 1, valueWord(b.Text, acts[j])
		}
	}
	return 0, -1
}

// valueWord is the index of the word of text where the action's value (or,
// for an address, its bare form) starts; -1 if it is not there whole.
func valueWord(text string, a safety.Action) int {
	v := NormalizeSpace(a.Value)
	for _, v := range []string{v, bareURL(v)} {
		if v == "" {
			continue
		}
		for o := strings.LastIndex(text, v); o >= 0; o = strings.LastIndex(text[:o], v) {
			if o == 0 || text[o-1] == ' ' {
				return strings.Count(text[:o], " ")
			}
		}
	}
	return -1
}

// keepUnits groups lines that must share a page when they fit one: all
// lines of an action (its label and value), a resource's consecutive actions
// (its numbers), and a resource's name with the unit after it (on small
// surfaces: with its numbers).
func keepUnits(blocks []wblock, b budget) []unit {
	out := make([]unit, 0, 2*len(blocks))
	for k := 0; k < len(blocks); {
		bl := blocks[k]
		if bl.style != StyleHeading {
			us, next := blockUnits(blocks, k, b)
			out = append(out, us...)
			k = next
			continue
		}
		if k+1 < len(blocks) && blocks[k+1].section == bl.section {
			us, next := blockUnits(blocks, k+1, b)
			// The name with as much of what follows as fits a page: all its
			// numbers, else its first action (or the line after it).
			for len(us) > 0 {
				lead := append(slices.Clone(bl.lines), us[0].lines...)
				if u, ok := b.unit(lead); ok {
					us[0] = u
					break
				}
				f := b.finer(us[0])
				if f == nil {
					us = append(b.units(bl.lines), us...)
					break
				}
				us = append(f, us[1:]...)
			}
			out = append(out, us...)
			k = next
			continue
		}
		out = append(out, b.units(bl.lines)...)
		k++
	}
	return out
}

// blockUnits returns the units of block k, or of the run of actions of one
// resource that starts at k, and the index of the block after them.
func blockUnits(blocks []wblock, k int, b budget) ([]unit, int) {
	if blocks[k].act == 0 {
		return b.lineUnits(blocks[k].lines), k + 1
	}
	m := k
	var all []Line
	for m < len(blocks) && blocks[m].act > 0 && blocks[m].section == blocks[k].section {
		all = append(all, blocks[m].lines...)
		m++
	}
	if u, ok := b.unit(all); ok {
		return []unit{u}, m
	}
	var us []unit
	for j := k; j < m; j++ {
		us = append(us, b.units(blocks[j].lines)...)
	}
	return us, m
}

// finer splits a run of actions into its actions; nil for one block (an
// action that fits a page is never split to keep a name company).
func (b budget) finer(u unit) []unit {
	if u.lines[len(u.lines)-1].block == u.lines[0].block {
		return nil
	}
	var out []unit
	for i := 0; i < len(u.lines); {
		j := i
		for j < len(u.lines) && u.lines[j].block == u.lines[i].block {
			j++
		}
		out = append(out, b.units(u.lines[i:j:j])...)
		i = j
	}
	return out
}

// unit makes one unit of ls if they fit a page.
func (b budget) unit(ls []Line) (unit, bool) {
	h := b.height(ls)
	return unit{lines: ls, h: h, section: ls[0].Section}, b.fits(len(ls), h)
}

// units is ls as one unit when it fits a page, else one unit per line.
func (b budget) units(ls []Line) []unit {
	if u, ok := b.unit(ls); ok {
		return []unit{u}
	}
	return b.lineUnits(ls)
}

func (b budget) lineUnits(ls []Line) []unit {
	us := make([]unit, len(ls))
	for i := range ls {
		us[i], _ = b.unit(ls[i : i+1 : i+1])
	}
	return us
}

// packUnits fills pages with units in order (see packBody).
func packUnits(units []unit, safetyCard, onePerPage bool, b budget) []Page {
	var pages []Page
	var cur []Line
	curH := 0
	flush := func() {
		if len(cur) > 0 {
			pages = append(pages, Page{Lines: cur})
		}
		cur, curH = make([]Line, 0, b.lines), 0
	}
	flush()
	room := func(n, h int) bool { return b.fits(len(cur)+n, curH+h) }
	for i, u := range units {
		if safetyCard && i > 0 && u.section != units[i-1].section && len(cur) > 0 {
			n, h := sectionSize(units[i:])
			switch {
			case onePerPage:
				flush()
			case b.fits(n, h) && !room(n, h):
				flush() // it fits a page: never split it
			case !b.fits(n, h) && !room(len(u.lines), u.h):
				flush()
			}
		}
		if !room(len(u.lines), u.h) {
			flush()
		}
		cur = append(cur, u.lines...)
		curH += u.h
	}
	flush()
	return pages
}

// sectionSize is the line count and height of the section us starts with.
func sectionSize(us []unit) (n, h int) {
	for _, u := range us {
		if u.section != us[0].section {
			break
		}
		n += len(u.lines)
		h += u.h
	}
	return n, h
}

// linkControl is a safety page's Call/Text control: the first call or text
// action whose line is on the page, so the button's number is on screen.
func linkControl(c Card, p *Page) (Control, bool) {
	if c.Kind != KindSafety {
		return Control{}, false
	}
	for _, ln := range p.Lines {
		if ln.act == 0 || ln.Section < 0 || ln.Section >= len(c.Resources) {
			continue
		}
		r := c.Resources[ln.Section]
		switch a := r.Actions[ln.act-1]; a.Type {
		case safety.ActionCall:
			return Control{ID: string(a.Type) + ":" + r.ID, Label: "Call", Role: RoleLink}, true
		case safety.ActionText:
			return Control{ID: string(a.Type) + ":" + r.ID, Label: "Text", Role: RoleLink}, true
		}
	}
	return Control{}, false
}
