package devices

import (
	"errors"
	"fmt"
	"slices"
)

// Kind is the class of device a profile describes.
type Kind string

const (
	KindGlasses Kind = "glasses"
	KindPhone   Kind = "phone"
	KindBrowser Kind = "browser"
	KindVoice   Kind = "voice"
)

// SurfaceKind says how a surface presents content.
type SurfaceKind string

const (
	// SurfaceHUD is a head-worn display (additive or monochrome).
	SurfaceHUD SurfaceKind = "hud"
	// SurfaceScreen is an ordinary emissive screen (phone, browser).
	SurfaceScreen SurfaceKind = "screen"
	// SurfaceVoice is an audio-only surface: text is spoken, never drawn.
	SurfaceVoice SurfaceKind = "voice"
)

// Input is a class of user input a surface can deliver to the gateway.
type Input string

const (
	InputTap   Input = "tap"   // button/touch taps (Meta DAT buttons, touchbars)
	InputKeys  Input = "keys"  // arrow keys + Enter/Escape (Meta web apps, browsers)
	InputSwipe Input = "swipe" // swipe up/down (Even G2 touchpads, R1 ring)
	InputVoice Input = "voice" // spoken commands ("next", "send")
)

// ColorModel is how a surface reproduces colour.
type ColorModel string

const (
	ColorRGB   ColorModel = "rgb"   // full colour
	ColorGreen ColorModel = "green" // single-hue green with Levels intensities
	ColorNone  ColorModel = "none"  // no visual output
)

// Colors describes a surface's colour capability.
type Colors struct {
	Model ColorModel `json:"model" yaml:"model"`
	// Levels is the number of intensity levels per channel: 256 for rgb,
	// 16 for the G2's 4-bit green, 2 for 1-bit displays.
	Levels int `json:"levels" yaml:"levels"`
	// BlackIsTransparent is true on additive displays: black pixels are
	// off, so text must sit on a dark panel rather than pure black.
	BlackIsTransparent bool `json:"black_is_transparent" yaml:"black_is_transparent"`
}

// TextBudget is the most text one page may carry on a surface. Layout must
// respect both the pixel width and these counts.
type TextBudget struct {
	// LinesPerPage is the number of body lines (title excluded).
	LinesPerPage int `json:"lines_per_page" yaml:"lines_per_page"`
	// CharsPerLine is the most runes on one line, title and body alike.
	CharsPerLine int `json:"chars_per_line" yaml:"chars_per_line"`
	// TitleLines is the most lines the title may wrap to.
	TitleLines int `json:"title_lines" yaml:"title_lines"`
}

// Fonts gives the pixel sizes (em size / line height) used on a surface.
// On devices with one firmware font every style uses the body size and the
// Go font is only used to measure an upper bound of the real width.
type Fonts struct {
	Family       string `json:"family" yaml:"family"`
	FirmwareFont bool   `json:"firmware_font" yaml:"firmware_font"`
	BodyPx       int    `json:"body_px" yaml:"body_px"`
	BodyLinePx   int    `json:"body_line_px" yaml:"body_line_px"`
	TitlePx      int    `json:"title_px" yaml:"title_px"`
	TitleLinePx  int    `json:"title_line_px" yaml:"title_line_px"`
	HeadingPx    int    `json:"heading_px" yaml:"heading_px"`
	HeadingLine  int    `json:"heading_line_px" yaml:"heading_line_px"`
	EmphPx       int    `json:"emph_px" yaml:"emph_px"`
	EmphLinePx   int    `json:"emph_line_px" yaml:"emph_line_px"`
	MetaPx       int    `json:"meta_px" yaml:"meta_px"`
	// MaxBodyPx is the largest body size a client may negotiate.
	MaxBodyPx int `json:"max_body_px" yaml:"max_body_px"`
}

// Surface is one output of a device: a display or a speaker.
type Surface struct {
	ID         string      `json:"id" yaml:"id"`
	Kind       SurfaceKind `json:"kind" yaml:"kind"`
	Width      int         `json:"width" yaml:"width"`
	Height     int         `json:"height" yaml:"height"`
	MarginPx   int         `json:"margin_px" yaml:"margin_px"`
	Colors     Colors      `json:"colors" yaml:"colors"`
	TextBudget TextBudget  `json:"text_budget" yaml:"text_budget"`
	Fonts      Fonts       `json:"fonts" yaml:"fonts"`
	// Buttons is true when the surface draws a row of focusable controls
	// (Next, Call, Send/Don't send). Without it prompts show spoken phrases.
	Buttons bool `json:"buttons" yaml:"buttons"`
	// ButtonRowPx is the height reserved for the control row.
	ButtonRowPx int     `json:"button_row_px,omitempty" yaml:"button_row_px"`
	GapPx       int     `json:"gap_px" yaml:"gap_px"`
	Inputs      []Input `json:"inputs" yaml:"inputs"`
}

// Visual reports whether the surface draws text.
func (s Surface) Visual() bool { return s.Kind == SurfaceHUD || s.Kind == SurfaceScreen }

// HasInput reports whether in is among the surface's inputs.
func (s Surface) HasInput(in Input) bool { return slices.Contains(s.Inputs, in) }

// ContentWidth is the drawable text width in pixels.
func (s Surface) ContentWidth() int { return s.Width - 2*s.MarginPx }

// BodyHeightPx is the pixel height of the body area: LinesPerPage body lines.
func (s Surface) BodyHeightPx() int { return s.TextBudget.LinesPerPage * s.Fonts.BodyLinePx }

// BodyAreaPx is the pixel height left for body lines once margins, the
// reserved title lines, gaps and the control row are placed. Layout fills
// at most LinesPerPage lines and at most this many pixels (large call
// lines are taller than body lines).
func (s Surface) BodyAreaPx() int { return s.Height - (s.RequiredHeight() - s.BodyHeightPx()) }

// RequiredHeight is the height the page geometry needs: margins, title,
// gap, body area and the control row.
func (s Surface) RequiredHeight() int {
	h := 2*s.MarginPx + s.TextBudget.TitleLines*s.Fonts.TitleLinePx + s.GapPx + s.BodyHeightPx()
	if s.Buttons {
		h += s.GapPx + s.ButtonRowPx
	}
	return h
}

// Validate checks a surface's geometry. Messages name the field.
func (s Surface) Validate() error {
	p := "surface " + s.ID
	switch s.Kind {
	case SurfaceVoice:
		return nil
	case SurfaceHUD, SurfaceScreen:
	default:
		return fmt.Errorf("%s: kind: %q is not hud, screen or voice: %w", p, s.Kind, ErrInvalidProfile)
	}
	tb, f := s.TextBudget, s.Fonts
	checks := []struct {
		ok  bool
		msg string
	}{
		{s.Width > 0 && s.Height > 0, "width/height: must be > 0"},
		{s.MarginPx >= 0 && 2*s.MarginPx < s.Width, "margin_px: must leave room for text"},
		{tb.LinesPerPage > 0, "text_budget.lines_per_page: must be > 0"},
		{tb.CharsPerLine >= 8, "text_budget.chars_per_line: must be >= 8"},
		{tb.TitleLines >= 1, "text_budget.title_lines: must be >= 1"},
		{f.BodyPx > 0 && f.BodyLinePx >= f.BodyPx, "fonts.body_px/body_line_px: must be > 0 with line >= size"},
		{f.TitlePx > 0 && f.TitleLinePx >= f.TitlePx, "fonts.title_px/title_line_px: must be > 0 with line >= size"},
		{f.HeadingPx > 0 && f.HeadingLine >= f.HeadingPx, "fonts.heading_px/heading_line_px: must be > 0 with line >= size"},
		{f.EmphPx > 0 && f.EmphLinePx >= f.EmphPx, "fonts.emph_px/emph_line_px: must be > 0 with line >= size"},
		{f.MetaPx > 0, "fonts.meta_px: must be > 0"},
		{f.MaxBodyPx >= f.BodyPx, "fonts.max_body_px: must be >= body_px"},
		{!s.Buttons || s.ButtonRowPx > 0, "button_row_px: must be > 0 when buttons is true"},
		{s.RequiredHeight() <= s.Height, fmt.Sprintf("height: geometry needs %d px, surface has %d", s.RequiredHeight(), s.Height)},
	}
	for _, c := range checks {
		if !c.ok {
			return fmt.Errorf("%s: %s: %w", p, c.msg, ErrInvalidProfile)
		}
	}
	return nil
}

// Audio describes a device's audio path as the gateway sees it.
type Audio struct {
	Mic          bool   `json:"mic" yaml:"mic"`
	Speaker      bool   `json:"speaker" yaml:"speaker"`
	SampleRateHz int    `json:"sample_rate_hz" yaml:"sample_rate_hz"`
	Channels     int    `json:"channels" yaml:"channels"`
	Transport    string `json:"transport" yaml:"transport"`
	// Codecs the gateway may use towards this device, preferred first.
	Codecs []string `json:"codecs" yaml:"codecs"`
}

// Profile is everything the gateway knows about a device class.
type Profile struct {
	ID       string    `json:"id" yaml:"id"`
	Kind     Kind      `json:"kind" yaml:"kind"`
	Audio    Audio     `json:"audio" yaml:"audio"`
	Surfaces []Surface `json:"surfaces" yaml:"surfaces"`
	// AckTimeoutMS is how long the gateway waits for a render ack before it
	// re-sends and speaks a safety card.
	AckTimeoutMS int `json:"ack_timeout_ms" yaml:"ack_timeout_ms"`
	// UpdateThrottleMS is the smallest interval between display updates the
	// device keeps (last-wins); captions coalesce within it.
	UpdateThrottleMS int `json:"update_throttle_ms" yaml:"update_throttle_ms"`
	// RenderConfirmation is false when the device cannot confirm a render;
	// safety content must then always be spoken as well.
	RenderConfirmation bool `json:"render_confirmation" yaml:"render_confirmation"`
}

// Display returns the profile's first visual surface, if any.
func (p Profile) Display() (Surface, bool) {
	for _, s := range p.Surfaces {
		if s.Visual() {
			return s, true
		}
	}
	return Surface{}, false
}

// Surface returns the surface with the given id.
func (p Profile) Surface(id string) (Surface, bool) {
	for _, s := range p.Surfaces {
		if s.ID == id {
			return s, true
		}
	}
	return Surface{}, false
}

// MustSpeakSafety reports whether safety content must also be spoken on this
// device: it cannot confirm renders or has no visual surface.
func (p Profile) MustSpeakSafety() bool {
	_, visual := p.Display()
	return !p.RenderConfirmation || !visual
}

// Validate checks the whole profile; messages name the field.
func (p Profile) Validate() error {
	if p.ID == "" {
		return fmt.Errorf("profile: id: must not be empty: %w", ErrInvalidProfile)
	}
	if len(p.Surfaces) == 0 {
		return fmt.Errorf("profile %s: surfaces: must not be empty: %w", p.ID, ErrInvalidProfile)
	}
	if p.AckTimeoutMS <= 0 {
		return fmt.Errorf("profile %s: ack_timeout_ms: must be > 0: %w", p.ID, ErrInvalidProfile)
	}
	if p.UpdateThrottleMS < 0 {
		return fmt.Errorf("profile %s: update_throttle_ms: must be >= 0: %w", p.ID, ErrInvalidProfile)
	}
	seen := map[string]bool{}
	for _, s := range p.Surfaces {
		if s.ID == "" || seen[s.ID] {
			return fmt.Errorf("profile %s: surfaces: ids must be unique and non-empty (%q): %w", p.ID, s.ID, ErrInvalidProfile)
		}
		seen[s.ID] = true
		if err := s.Validate(); err != nil {
			return fmt.Errorf("profile %s: %w", p.ID, err)
		}
	}
	return nil
}

// clone returns a deep copy so callers cannot alias built-in slices.
func (p Profile) clone() Profile {
	c := p
	c.Audio.Codecs = slices.Clone(p.Audio.Codecs)
	c.Surfaces = make([]Surface, len(p.Surfaces))
	for i, s := range p.Surfaces {
		s.Inputs = slices.Clone(s.Inputs)
		c.Surfaces[i] = s
	}
	return c
}

// Sentinel errors.
var (
	// ErrUnknownDevice is returned by Lookup and Negotiate for an id that is
	// not a built-in profile; the message lists the known ids.
	ErrUnknownDevice = errors.New("devices: unknown device profile")
	// ErrOutOfBounds is returned by Negotiate when an override asks for more
	// than the profile's hardware offers (or for a nonsensical value).
	ErrOutOfBounds = errors.New("devices: override out of bounds")
	// ErrInvalidProfile is returned when a profile's own fields are invalid.
	ErrInvalidProfile = errors.New("devices: invalid profile")
)
