package devices

import (
	"fmt"
	"slices"
)

// Hello is the device part of a client hello: the profile it claims and
// optional overrides, each of which may only narrow the profile.
type Hello struct {
	Profile   string    `json:"profile"`
	Overrides Overrides `json:"overrides,omitempty"`
}

// Overrides narrow a profile for one connection. Nil/empty fields keep the
// profile's value. Surface selects which surface the text and font
// overrides apply to; empty means the profile's first visual surface.
type Overrides struct {
	Surface      string `json:"surface,omitempty"`
	LinesPerPage *int   `json:"lines_per_page,omitempty"`
	CharsPerLine *int   `json:"chars_per_line,omitempty"`
	// BodyPx may grow the body font up to fonts.max_body_px (bigger text is
	// an accessibility request); line height scales with it.
	BodyPx *int `json:"body_px,omitempty"`
	// UpdateThrottleMS may only be slower than the profile's.
	UpdateThrottleMS *int `json:"update_throttle_ms,omitempty"`
	// AckTimeoutMS may only be shorter: a longer wait would delay the
	// spoken fallback of a safety card.
	AckTimeoutMS *int `json:"ack_timeout_ms,omitempty"`
	// Inputs restricts the surface's inputs to a subset. Voice is always
	// kept when the surface has it.
	Inputs []Input `json:"inputs,omitempty"`
}

// Negotiate resolves a client hello to a profile: the built-in named by
// h.Profile with the overrides applied. Every override must stay inside the
// profile's bounds; the error names the offending field and wraps
// ErrOutOfBounds (or ErrUnknownDevice for the profile id).
func Negotiate(h Hello) (Profile, error) {
	p, err := Lookup(h.Profile)
	if err != nil {
		return Profile{}, fmt.Errorf("devices: negotiate: profile: %w", err)
	}
	o := h.Overrides
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("devices: negotiate %s: overrides.%s: %s: %w", p.ID, field, fmt.Sprintf(format, args...), ErrOutOfBounds)
	}
	if o.UpdateThrottleMS != nil {
		v := *o.UpdateThrottleMS
		if v < p.UpdateThrottleMS || v > 10000 {
			return Profile{}, bad("update_throttle_ms", "%d outside [%d, 10000]", v, p.UpdateThrottleMS)
		}
		p.UpdateThrottleMS = v
	}
	if o.AckTimeoutMS != nil {
		v := *o.AckTimeoutMS
		if v < 100 || v > p.AckTimeoutMS {
			return Profile{}, bad("ack_timeout_ms", "%d outside [100, %d]", v, p.AckTimeoutMS)
		}
		p.AckTimeoutMS = v
	}
	textOverride := o.LinesPerPage != nil || o.CharsPerLine != nil || o.BodyPx != nil || o.Inputs != nil
	if !textOverride && o.Surface == "" {
		return p, nil
	}
	idx := -1
	for i, s := range p.Surfaces {
		if (o.Surface == "" && s.Visual()) || (o.Surface != "" && s.ID == o.Surface) {
			idx = i
			break
		}
	}
	if idx < 0 {
		if o.Surface != "" {
			return Profile{}, bad("surface", "%q is not a surface of this profile", o.Surface)
		}
		if o.Inputs == nil {
			return Profile{}, bad("lines_per_page", "profile has no visual surface to apply text overrides to")
		}
		idx = 0
	}
	s := p.Surfaces[idx]
	if (o.LinesPerPage != nil || o.CharsPerLine != nil || o.BodyPx != nil) && !s.Visual() {
		return Profile{}, bad("surface", "%q is not visual; text overrides do not apply", s.ID)
	}
	if o.LinesPerPage != nil {
		v := *o.LinesPerPage
		if v < 1 || v > s.TextBudget.LinesPerPage {
			return Profile{}, bad("lines_per_page", "%d outside [1, %d]", v, s.TextBudget.LinesPerPage)
		}
		s.TextBudget.LinesPerPage = v
	}
	if o.CharsPerLine != nil {
		v := *o.CharsPerLine
		if v < 8 || v > s.TextBudget.CharsPerLine {
			return Profile{}, bad("chars_per_line", "%d outside [8, %d]", v, s.TextBudget.CharsPerLine)
		}
		s.TextBudget.CharsPerLine = v
	}
	if o.BodyPx != nil {
		v := *o.BodyPx
		if v < s.Fonts.BodyPx || v > s.Fonts.MaxBodyPx {
			return Profile{}, bad("body_px", "%d outside [%d, %d]", v, s.Fonts.BodyPx, s.Fonts.MaxBodyPx)
		}
		// Keep the body area's pixel height: fewer, taller lines.
		area := s.BodyHeightPx()
		line := s.Fonts.BodyLinePx * v / s.Fonts.BodyPx
		s.Fonts.BodyPx, s.Fonts.BodyLinePx = v, line
		s.TextBudget.LinesPerPage = max(1, area/line)
		if s.Fonts.HeadingPx < v {
			s.Fonts.HeadingPx, s.Fonts.HeadingLine = v, max(s.Fonts.HeadingLine, line)
		}
	}
	if o.Inputs != nil {
		var keep []Input
		for _, in := range o.Inputs {
			if !s.HasInput(in) {
				return Profile{}, bad("inputs", "%q is not an input of surface %s (has %v)", in, s.ID, s.Inputs)
			}
			if !slices.Contains(keep, in) {
				keep = append(keep, in)
			}
		}
		if s.HasInput(InputVoice) && !slices.Contains(keep, InputVoice) {
			keep = append(keep, InputVoice)
		}
		s.Inputs = keep
	}
	if err := s.Validate(); err != nil {
		return Profile{}, fmt.Errorf("devices: negotiate %s: %w", p.ID, err)
	}
	p.Surfaces[idx] = s
	return p, nil
}
