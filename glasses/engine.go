package glasses

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
)

// Config tunes card layout. Safety cards ignore MaxPages: they are never cut.
type Config struct {
	// MaxPages bounds non-safety cards (captions, info, prompts); a longer
	// card is a layout error for the caller to split, not a truncation.
	MaxPages int `yaml:"max_pages"`
	// PromptTimeoutMS is how long an approve/decline prompt waits; timeout
	// means decline, never approve.
	PromptTimeoutMS int `yaml:"prompt_timeout_ms"`
}

// DefaultConfig returns the production defaults.
func DefaultConfig() Config { return Config{MaxPages: 20, PromptTimeoutMS: 20000} }

// Validate names the offending key.
func (c Config) Validate() error {
	if c.MaxPages < 1 || c.MaxPages > 1000 {
		return fmt.Errorf("glasses.max_pages: %d must be in [1,1000]", c.MaxPages)
	}
	if c.PromptTimeoutMS < 1000 || c.PromptTimeoutMS > 600000 {
		return fmt.Errorf("glasses.prompt_timeout_ms: %d must be in [1000,600000]", c.PromptTimeoutMS)
	}
	return nil
}

// Engine lays out and renders cards. It is safe for concurrent use; parsed
// fonts and glyph advances are shared process-wide.
type Engine struct {
	cfg Config
	log *slog.Logger
}

// New returns an Engine; log may be nil.
func New(cfg Config, log *slog.Logger) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := loadFonts(); err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg, log: log}, nil
}

var defaultEngine = &Engine{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler)}

// LayoutCard lays c out for profile p with the default configuration.
func LayoutCard(c Card, p devices.Profile) (*Layout, error) { return defaultEngine.Layout(c, p) }

// Layout lays c out for the profile's first visual surface. Voice-only
// profiles return ErrNoDisplay.
func (e *Engine) Layout(c Card, p devices.Profile) (*Layout, error) {
	s, ok := p.Display()
	if !ok {
		return nil, fmt.Errorf("glasses: layout for %s: %w", p.ID, ErrNoDisplay)
	}
	l, err := e.LayoutSurface(c, p.ID, s)
	if err != nil {
		// Never log card text or tokens (they may be a person's words or
		// numbers): only the device, the kind and the failure class.
		e.log.Warn("card layout failed", "device", p.ID, "card_kind", string(c.Kind), "reason", reason(err))
	}
	return l, err
}

// SafetyPages lays the safety card cardID, with resources res in their
// order, out for one visual surface of device as display-op pages (the
// pages of the session's safety.card event).
//
// It never returns no pages for resources it can show: when the engine's
// layout refuses the card (a rune the fonts lack, a number wider than a
// line), the plain layout draws it and its pages are returned together
// with an error wrapping ErrFallback and the cause, for the caller to log.
// Pages are nil only when even the plain layout cannot draw the card: no
// resources, or a text budget under one line of eight runes.
func (e *Engine) SafetyPages(cardID string, res []safety.Resource, device string, s devices.Surface) ([]OpsPage, error) {
	pages, err := e.safetyPages(cardID, res, device, s)
	if err == nil {
		return pages, nil
	}
	plain, perr := plainSafety(res, s)
	if perr != nil {
		return nil, fmt.Errorf("glasses: safety card %s on %s/%s: %w (plain layout: %w)", cardID, device, s.ID, err, perr)
	}
	return plain, fmt.Errorf("glasses: safety card %s on %s/%s: %w: %w", cardID, device, s.ID, ErrFallback, err)
}

func (e *Engine) safetyPages(cardID string, res []safety.Resource, device string, s devices.Surface) ([]OpsPage, error) {
	card, err := NewSafetyCard(cardID, safety.Assessment{Resources: res})
	if err != nil {
		return nil, err
	}
	return e.opsPages(card, device, s)
}

// PromptPages lays an approve/decline prompt out for one visual surface of
// device as display-op pages: title and n/N on every page, the body, and
// on the last page the controls ControlApprove and ControlDecline with
// focus on Decline (a surface without buttons says what to say). A title
// too long for the surface's title lines moves into the body under
// PromptTitle: nothing is dropped. Like SafetyPages it falls back to the
// plain layout, returning its pages with an error wrapping ErrFallback.
func (e *Engine) PromptPages(cardID, title, body, device string, s devices.Surface) ([]OpsPage, error) {
	pages, err := e.promptPages(cardID, title, body, device, s)
	if err != nil && errors.Is(err, ErrTitleTooLong) && title != PromptTitle {
		pages, err = e.promptPages(cardID, PromptTitle, title+"\n\n"+body, device, s)
	}
	if err == nil {
		return pages, nil
	}
	plain, perr := plainPrompt(title, body, s)
	if perr != nil {
		return nil, fmt.Errorf("glasses: prompt %s on %s/%s: %w (plain layout: %w)", cardID, device, s.ID, err, perr)
	}
	return plain, fmt.Errorf("glasses: prompt %s on %s/%s: %w: %w", cardID, device, s.ID, ErrFallback, err)
}

func (e *Engine) promptPages(cardID, title, body, device string, s devices.Surface) ([]OpsPage, error) {
	card, err := NewPrompt(cardID, title, body,
		Action{ID: ControlApprove, Label: "Approve", Voice: []string{"yes"}},
		Action{ID: ControlDecline, Label: "Decline", Voice: []string{"no"}})
	if err != nil {
		return nil, err
	}
	return e.opsPages(card, device, s)
}

// opsPages lays c out for one surface and returns its display-op pages.
func (e *Engine) opsPages(c Card, device string, s devices.Surface) ([]OpsPage, error) {
	l, err := e.LayoutSurface(c, device, s)
	if err != nil {
		return nil, err
	}
	doc, err := l.Ops()
	if err != nil {
		return nil, err
	}
	return doc.Pages, nil
}

// reason names the failure class of a layout error for logs and metrics.
func reason(err error) string {
	for _, r := range []struct {
		err  error
		name string
	}{{ErrGlyph, "glyph"}, {ErrUnbreakable, "unbreakable"}, {ErrTitleTooLong, "title"}, {ErrNoDisplay, "no_display"}, {ErrInvalidCard, "invalid_card"}, {ErrLayout, "layout"}} {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	return "other"
}

// LayoutSurface lays c out for one visual surface of device.
func (e *Engine) LayoutSurface(c Card, device string, s devices.Surface) (*Layout, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !s.Visual() {
		return nil, fmt.Errorf("glasses: layout for %s/%s: %w", device, s.ID, ErrNoDisplay)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("glasses: layout for %s: %w", device, err)
	}
	fs, err := facesFor(s)
	if err != nil {
		return nil, err
	}
	tb := s.TextBudget
	width := s.ContentWidth()

	// 1. Wrap the blocks and pack them into pages (layout.go).
	safetyCard := c.Kind == KindSafety
	pages, err := packBody(fs, c, device, s)
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		pages = []Page{{}} // a prompt with an empty body still has a page
	}
	if !safetyCard && len(pages) > e.cfg.MaxPages {
		return nil, fmt.Errorf("glasses: card %q on %s: %d pages exceeds glasses.max_pages %d: %w", c.ID, device, len(pages), e.cfg.MaxPages, ErrLayout)
	}

	// 3. Title and n/N on every page; controls.
	n := len(pages)
	ind := fmt.Sprintf("%d/%d", n, n)
	indPx, err := fs.meta.widthPx(ind)
	if err != nil {
		return nil, err
	}
	titleWrap, err := e.wrapStyle(fs, StyleTitle, NormalizeSpace(c.Title), width-indPx-s.MarginPx/2-4, tb.CharsPerLine-utf8.RuneCountInString(ind)-1, device)
	if err != nil {
		return nil, fmt.Errorf("glasses: title: %w", err)
	}
	if len(titleWrap) > tb.TitleLines {
		return nil, fmt.Errorf("glasses: card %q on %s: title needs %d lines, surface allows %d: %w", c.ID, device, len(titleWrap), tb.TitleLines, ErrTitleTooLong)
	}
	title := make([]Line, len(titleWrap))
	for i, w := range titleWrap {
		title[i] = Line{Text: w.text, Style: StyleTitle, Cont: w.cont, WidthPx: w.px}
	}
	for i := range pages {
		p := &pages[i]
		p.N, p.Of = i+1, n
		p.Title = make([]string, len(title))
		for j, t := range title {
			p.Title[j] = t.Text
		}
		p.Focus = -1
		if safetyCard {
			for _, ln := range p.Lines {
				if !slices.Contains(p.Resources, ln.Section) {
					p.Resources = append(p.Resources, ln.Section)
				}
			}
		}
		if s.Buttons {
			if err := e.controls(fs, s, c, p); err != nil {
				return nil, err
			}
		}
	}
	l := &Layout{Device: device, Surface: s, Card: c, Pages: pages, Title: title, Source: c.SourceText(s)}
	if c.Kind == KindAction {
		l.TimeoutMS = e.cfg.PromptTimeoutMS
	}
	// Belt and braces: the invariant is checked on every layout, not only
	// in tests; a violation is a bug and must never reach a person.
	if got := NormalizeSpace(JoinText(pages)); got != l.Source {
		return nil, fmt.Errorf("glasses: card %q on %s: paged text differs from source: %w", c.ID, device, ErrLayout)
	}
	return l, nil
}

func (e *Engine) wrapStyle(fs *faces, st Style, text string, maxPx, maxRunes int, device string) ([]wline, error) {
	if maxPx <= 0 || maxRunes <= 0 {
		return nil, fmt.Errorf("glasses: %s: no room for %s text: %w", device, st, ErrLayout)
	}
	w := wrapper{m: fs.face(st), maxPx: maxPx, maxRunes: maxRunes, device: device}
	return w.wrap(text)
}

// controls fills a page's control row: Next/Done plus the page's first
// call/text link on cards, or the two verb choices on a prompt's last page
// (focus on the non-committing one).
func (e *Engine) controls(fs *faces, s devices.Surface, c Card, p *Page) error {
	last := p.N == p.Of
	switch {
	case c.Kind == KindAction && last:
		for _, a := range c.Actions {
			p.Controls = append(p.Controls, Control{ID: a.ID, Label: NormalizeSpace(a.Label), Role: a.Role})
			if a.Role == RoleDecline {
				p.Focus = len(p.Controls) - 1
			}
		}
	default:
		if last {
			p.Controls = append(p.Controls, Control{ID: ControlDone, Label: "Done"})
		} else {
			p.Controls = append(p.Controls, Control{ID: ControlNext, Label: "Next ►"})
		}
		p.Focus = 0
		if link, ok := linkControl(c, p); ok {
			p.Controls = append(p.Controls, link)
		}
	}
	bw := buttonWidth(s, len(p.Controls))
	for _, ctl := range p.Controls {
		px, err := fs.body.widthPx(ctl.Label)
		if err != nil {
			return fmt.Errorf("glasses: control %q: %w", ctl.ID, err)
		}
		if px > bw-16 {
			return fmt.Errorf("glasses: control %q label %q is %d px, button is %d: %w", ctl.ID, ctl.Label, px, bw, ErrLayout)
		}
	}
	return nil
}

// buttonWidth is the width of one of n buttons sharing the control row.
// The row is always split in two so a lone Next keeps the mock's size.
func buttonWidth(s devices.Surface, n int) int {
	_ = n
	return (s.ContentWidth() - s.GapPx) / 2
}
