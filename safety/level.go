package safety

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ParseLevel parses a wire level name ("none", "elevated", "crisis"),
// case-insensitively and ignoring surrounding space. Anything else is
// ErrUnknownLevel.
func ParseLevel(s string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none":
		return LevelNone, nil
	case "elevated":
		return LevelElevated, nil
	case "crisis":
		return LevelCrisis, nil
	}
	return LevelNone, fmt.Errorf("safety: level %q: %w", s, ErrUnknownLevel)
}

// Valid reports whether l is one of the three defined levels.
func (l Level) Valid() bool { return l >= LevelNone && l <= LevelCrisis }

// MaxLevel returns the more serious of a and b.
func MaxLevel(a, b Level) Level {
	if b > a {
		return b
	}
	return a
}

// MarshalText encodes the level as its wire name. An out-of-range level is an
// error rather than a silent "none": a corrupt level must never look safe.
func (l Level) MarshalText() ([]byte, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("safety: level %d: %w", int(l), ErrUnknownLevel)
	}
	return []byte(l.String()), nil
}

// UnmarshalText decodes a wire name (see ParseLevel).
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// MarshalJSON encodes the level as a JSON string ("none", "elevated", "crisis").
func (l Level) MarshalJSON() ([]byte, error) {
	b, err := l.MarshalText()
	if err != nil {
		return nil, err
	}
	return json.Marshal(string(b))
}

// UnmarshalJSON accepts the wire string and, for peers that send the numeric
// form, the integers 0, 1 and 2. null leaves the level unchanged.
func (l *Level) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("safety: level: %w", err)
		}
		return l.UnmarshalText([]byte(s))
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("safety: level %s: %w", b, ErrUnknownLevel)
	}
	if v := Level(n); v.Valid() {
		*l = v
		return nil
	}
	return fmt.Errorf("safety: level %d: %w", n, ErrUnknownLevel)
}
