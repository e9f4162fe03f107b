package event

import (
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/glasses"
)

// Limits on client events. Decode enforces them; they match the Partner
// API's message limit (8 000 characters) and body limit (64 KB).
const (
	MaxEventBytes  = 64 << 10
	MaxTextChars   = 8000
	MaxIDChars     = 128
	MaxTokenChars  = 2048
	MaxSurfaces    = 8
	MaxReasonChars = 500
	// MaxTitleChars bounds a session title (session.rename).
	MaxTitleChars  = 200
	maxDeviceChars = 64
	maxRegionChars = 16
)

// Client is a decoded client→server event. Its concrete type is one of the
// pointer types below.
type Client interface {
	// EventType is the wire type of the event.
	EventType() Type
	// Validate checks the payload's values (Decode calls it).
	Validate() error
}

// Hello opens (or resumes) a session: the device profile, the surfaces the
// client shows, optional per-surface overrides, and for a resume the token
// and the last seq the client saw.
type Hello struct {
	Device   string   `json:"device"`
	Surfaces []string `json:"surfaces,omitempty"`
	// Overrides narrow the profile (devices.Negotiate checks the bounds).
	Overrides   *devices.Overrides `json:"overrides,omitempty"`
	Region      string             `json:"region,omitempty"`
	ResumeToken string             `json:"resume_token,omitempty"`
	LastSeq     int64              `json:"last_seq,omitempty"`
}

// InputText is one typed user message.
type InputText struct {
	Text string `json:"text"`
}

// DisplayAck says a surface showed a page of a card.
type DisplayAck struct {
	CardID  string `json:"card_id"`
	Page    int    `json:"page"`
	Surface string `json:"surface"`
}

// Keys accepted by input.key: the glasses' four inputs (glasses.PageKey).
const (
	KeyNext   = glasses.KeyNext
	KeyPrev   = glasses.KeyPrev
	KeySelect = glasses.KeySelect
	KeyBack   = glasses.KeyBack
)

// InputKey is a key press on a surface (arrow keys, Enter, Escape on a
// Meta web app; taps elsewhere).
type InputKey struct {
	Key     string `json:"key"`
	Surface string `json:"surface,omitempty"`
}

// ActionApprove approves a proposed action.
type ActionApprove struct {
	ActionID string `json:"action_id"`
	// Surface is where the person approved (optional; audited).
	Surface string `json:"surface,omitempty"`
}

// ActionDecline declines a proposed action.
type ActionDecline struct {
	ActionID string `json:"action_id"`
	Reason   string `json:"reason,omitempty"`
	// Surface is where the person declined (optional; audited).
	Surface string `json:"surface,omitempty"`
}

// SessionRename is the person's own rename of the session; an empty
// title clears it. A user's rename or clear always wins over an automatic
// title. Title is required (send "" to clear).
type SessionRename struct {
	Title *string `json:"title"`
}

// PlaybackStarted says the client started playing the reply's audio.
type PlaybackStarted struct {
	TurnID string `json:"turn_id"`
}

// ResponseCancel cancels the reply in progress (TurnID optional).
type ResponseCancel struct {
	TurnID string `json:"turn_id,omitempty"`
}

func (*Hello) EventType() Type           { return TypeHello }
func (*InputText) EventType() Type       { return TypeInputText }
func (*DisplayAck) EventType() Type      { return TypeDisplayAck }
func (*InputKey) EventType() Type        { return TypeInputKey }
func (*ActionApprove) EventType() Type   { return TypeActionApprove }
func (*ActionDecline) EventType() Type   { return TypeActionDecline }
func (*PlaybackStarted) EventType() Type { return TypePlaybackStarted }
func (*ResponseCancel) EventType() Type  { return TypeResponseCancel }
func (*SessionRename) EventType() Type   { return TypeSessionRename }

func (h *Hello) Validate() error {
	if err := checkID("device", h.Device, maxDeviceChars, true); err != nil {
		return err
	}
	if len(h.Surfaces) > MaxSurfaces {
		return invalid("surfaces", ErrTooLong, "at most %d surfaces", MaxSurfaces)
	}
	seen := map[string]bool{}
	for _, s := range h.Surfaces {
		if err := checkID("surfaces", s, maxDeviceChars, true); err != nil {
			return err
		}
		if seen[s] {
			return invalid("surfaces", ErrInvalidValue, "surface %q listed twice", s)
		}
		seen[s] = true
	}
	if err := checkID("region", h.Region, maxRegionChars, false); err != nil {
		return err
	}
	if err := checkID("resume_token", h.ResumeToken, MaxTokenChars, false); err != nil {
		return err
	}
	if h.LastSeq < 0 {
		return invalid("last_seq", ErrInvalidValue, "must not be negative")
	}
	if h.LastSeq > 0 && h.ResumeToken == "" {
		return invalid("last_seq", ErrInvalidValue, "needs resume_token")
	}
	return nil
}

func (e *InputText) Validate() error {
	if !utf8.ValidString(e.Text) {
		return invalid("text", ErrInvalidValue, "must be valid UTF-8")
	}
	n := utf8.RuneCountInString(e.Text)
	if n > MaxTextChars {
		return invalid("text", ErrTooLong, "%d characters, at most %d", n, MaxTextChars)
	}
	if isBlank(e.Text) {
		return invalid("text", ErrMissing, "must not be empty")
	}
	return nil
}

func (e *DisplayAck) Validate() error {
	if err := checkID("card_id", e.CardID, MaxIDChars, true); err != nil {
		return err
	}
	if e.Page < 1 {
		return invalid("page", ErrInvalidValue, "must be >= 1")
	}
	return checkID("surface", e.Surface, maxDeviceChars, true)
}

func (e *InputKey) Validate() error {
	switch e.Key {
	case KeyNext, KeyPrev, KeySelect, KeyBack:
	case "":
		return invalid("key", ErrMissing, "required: next, prev, select or back")
	default:
		return invalid("key", ErrInvalidValue, "must be next, prev, select or back")
	}
	return checkID("surface", e.Surface, maxDeviceChars, false)
}

func (e *ActionApprove) Validate() error {
	if err := checkID("action_id", e.ActionID, MaxIDChars, true); err != nil {
		return err
	}
	return checkID("surface", e.Surface, MaxIDChars, false)
}

func (e *ActionDecline) Validate() error {
	if err := checkID("action_id", e.ActionID, MaxIDChars, true); err != nil {
		return err
	}
	if err := checkID("surface", e.Surface, MaxIDChars, false); err != nil {
		return err
	}
	if utf8.RuneCountInString(e.Reason) > MaxReasonChars || !utf8.ValidString(e.Reason) {
		return invalid("reason", ErrTooLong, "at most %d characters of UTF-8", MaxReasonChars)
	}
	return nil
}

func (e *PlaybackStarted) Validate() error { return checkID("turn_id", e.TurnID, MaxIDChars, true) }

func (e *SessionRename) Validate() error {
	if e.Title == nil {
		return invalid("title", ErrMissing, `required ("" clears the title)`)
	}
	if !utf8.ValidString(*e.Title) {
		return invalid("title", ErrInvalidValue, "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(*e.Title); n > MaxTitleChars {
		return invalid("title", ErrTooLong, "%d characters, at most %d", n, MaxTitleChars)
	}
	return nil
}

func (e *ResponseCancel) Validate() error { return checkID("turn_id", e.TurnID, MaxIDChars, false) }

// checkID validates a short identifier: printable ASCII without spaces or
// quotes, at most max characters.
func checkID(field, v string, max int, required bool) error {
	if v == "" {
		if required {
			return invalid(field, ErrMissing, "required")
		}
		return nil
	}
	if len(v) > max {
		return invalid(field, ErrTooLong, "at most %d characters", max)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return invalid(field, ErrInvalidValue, "must be printable ASCII without spaces")
		}
	}
	return nil
}

func isBlank(s string) bool {
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '\u00a0', '\u3000', '\u200b':
		default:
			return false
		}
	}
	return true
}
