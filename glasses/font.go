package glasses

import (
	"fmt"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// parsed holds the embedded fonts, parsed once for the process.
var parsed struct {
	once          sync.Once
	regular, bold *opentype.Font
	err           error
}

func loadFonts() error {
	parsed.once.Do(func() {
		if parsed.regular, parsed.err = opentype.Parse(goregular.TTF); parsed.err != nil {
			return
		}
		parsed.bold, parsed.err = opentype.Parse(gobold.TTF)
	})
	if parsed.err != nil {
		return fmt.Errorf("glasses: parse embedded font: %w", parsed.err)
	}
	return nil
}

// faceKey identifies one font at one pixel size.
type faceKey struct {
	bold bool
	px   int
}

// metrics measures text for one font at one size. Advances are cached per
// rune; measuring and drawing both use these advances (no kerning: the Go
// fonts carry no pairs that change their Latin layout), so a measured width
// is exactly the drawn width.
type metrics struct {
	key     faceKey
	font    *opentype.Font
	ppem    fixed.Int26_6
	ascent  fixed.Int26_6
	descent fixed.Int26_6

	// latin holds U+0000–U+00FF, filled when the face is made and only
	// read after, so the common case takes no lock.
	latin [256]glyphInfo

	mu  sync.RWMutex // mu guards adv
	adv map[rune]glyphInfo
}

type glyphInfo struct {
	index   sfnt.GlyphIndex
	advance fixed.Int26_6
	ok      bool // the font draws the rune (latin table only)
}

var faceCache sync.Map // faceKey → *metrics

func metricsFor(bold bool, px int) (*metrics, error) {
	k := faceKey{bold, px}
	if m, ok := faceCache.Load(k); ok {
		return m.(*metrics), nil
	}
	if err := loadFonts(); err != nil {
		return nil, err
	}
	if px <= 0 || px > 512 {
		return nil, fmt.Errorf("glasses: font size %d px out of range: %w", px, ErrLayout)
	}
	f := parsed.regular
	if bold {
		f = parsed.bold
	}
	var buf sfnt.Buffer
	fm, err := f.Metrics(&buf, fixed.I(px), font.HintingNone)
	if err != nil {
		return nil, fmt.Errorf("glasses: font metrics: %w", err)
	}
	m := &metrics{key: k, font: f, ppem: fixed.I(px), ascent: fm.Ascent, descent: fm.Descent, adv: make(map[rune]glyphInfo, 32)}
	for r := range m.latin {
		if g, err := m.lookup(rune(r)); err == nil {
			g.ok = true
			m.latin[r] = g
		}
	}
	actual, _ := faceCache.LoadOrStore(k, m)
	return actual.(*metrics), nil
}

// glyph returns the glyph index and advance of r, or a *GlyphError when the
// font cannot draw it.
func (m *metrics) glyph(r rune) (glyphInfo, error) {
	if r >= 0 && r < rune(len(m.latin)) {
		if g := m.latin[r]; g.ok {
			return g, nil
		}
		return glyphInfo{}, &GlyphError{Rune: r}
	}
	m.mu.RLock()
	g, ok := m.adv[r]
	m.mu.RUnlock()
	if ok {
		return g, nil
	}
	g, err := m.lookup(r)
	if err != nil {
		return glyphInfo{}, err
	}
	m.mu.Lock()
	m.adv[r] = g
	m.mu.Unlock()
	return g, nil
}

// lookup asks the font for r's glyph and advance.
func (m *metrics) lookup(r rune) (glyphInfo, error) {
	var buf sfnt.Buffer
	x, err := m.font.GlyphIndex(&buf, r)
	if err != nil || x == 0 || r < 0x20 || (r >= 0x7f && r < 0xa0) {
		return glyphInfo{}, &GlyphError{Rune: r}
	}
	a, err := m.font.GlyphAdvance(&buf, x, m.ppem, font.HintingNone)
	if err != nil {
		return glyphInfo{}, &GlyphError{Rune: r}
	}
	return glyphInfo{index: x, advance: a}, nil
}

// width returns the advance width of s.
func (m *metrics) width(s string) (fixed.Int26_6, error) {
	var w fixed.Int26_6
	for _, r := range s {
		g, err := m.glyph(r)
		if err != nil {
			return 0, err
		}
		w += g.advance
	}
	return w, nil
}

// measure returns the advance width and the rune count of s.
func (m *metrics) measure(s string) (fixed.Int26_6, int, error) {
	var w fixed.Int26_6
	n := 0
	for _, r := range s {
		g, err := m.glyph(r)
		if err != nil {
			return 0, 0, err
		}
		w += g.advance
		n++
	}
	return w, n, nil
}

// widthPx returns the width of s rounded up to whole pixels.
func (m *metrics) widthPx(s string) (int, error) {
	w, err := m.width(s)
	return w.Ceil(), err
}

// baseline is the offset from a line box's top to its baseline, centring the
// font's ascent+descent in a box lineH pixels tall.
func (m *metrics) baseline(lineH int) int {
	return (lineH-(m.ascent+m.descent).Ceil())/2 + m.ascent.Ceil()
}

// CheckGlyphs returns a *GlyphError for the first rune of s the embedded
// fonts cannot draw (whitespace is ignored: layout normalises it away).
func CheckGlyphs(s string) error {
	m, err := metricsFor(false, 16)
	if err != nil {
		return err
	}
	for _, r := range s {
		if isSpace(r) {
			continue
		}
		if _, err := m.glyph(r); err != nil {
			return err
		}
	}
	return nil
}
