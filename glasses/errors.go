package glasses

import (
	"errors"
	"fmt"
)

// Sentinel errors. Layout failures are returned, never papered over: a card
// that cannot be shown whole must not be shown cut.
var (
	// ErrGlyph: the text contains a rune the embedded fonts cannot draw
	// (emoji, CJK, control characters...). Wrapped by *GlyphError.
	ErrGlyph = errors.New("glasses: glyph not in font")
	// ErrUnbreakable: a number (or digit run) is wider than one line and
	// numbers are never split. Wrapped by *UnbreakableError.
	ErrUnbreakable = errors.New("glasses: number does not fit on one line")
	// ErrTitleTooLong: the title needs more lines than the surface allows.
	ErrTitleTooLong = errors.New("glasses: title does not fit")
	// ErrNoDisplay: the profile has no visual surface (voice-only); the
	// card must be spoken instead.
	ErrNoDisplay = errors.New("glasses: profile has no display surface")
	// ErrInvalidCard: the card itself is malformed (no resources on a safety
	// card, a prompt without exactly two actions, an unknown kind...).
	ErrInvalidCard = errors.New("glasses: invalid card")
	// ErrLayout: any other layout failure (too many pages for a non-safety
	// card, a control label too wide, a page index out of range).
	ErrLayout = errors.New("glasses: layout failed")
)

// GlyphError names the rune the fonts cannot draw.
type GlyphError struct {
	Rune rune
}

func (e *GlyphError) Error() string {
	return fmt.Sprintf("glasses: no glyph for %U %q in the embedded Go font (covers Latin, Greek, Cyrillic)", e.Rune, e.Rune)
}

func (e *GlyphError) Unwrap() error { return ErrGlyph }

// UnbreakableError names the number that cannot fit on one line.
type UnbreakableError struct {
	Token         string
	WidthPx       int
	LimitPx       int
	Runes         int
	LimitRunes    int
	SurfaceDevice string
}

func (e *UnbreakableError) Error() string {
	return fmt.Sprintf("glasses: %s: number %q (%d px, %d runes) does not fit one line (%d px, %d runes); numbers are never split",
		e.SurfaceDevice, e.Token, e.WidthPx, e.Runes, e.LimitPx, e.LimitRunes)
}

func (e *UnbreakableError) Unwrap() error { return ErrUnbreakable }
