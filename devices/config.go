package devices

import (
	"fmt"
	"slices"
)

// Config selects which built-in profiles a gateway accepts and which one a
// client that sends no hello gets.
type Config struct {
	// Default is the profile used when a client names none.
	Default string `yaml:"default"`
	// Enabled lists the profile ids clients may negotiate; empty means all
	// built-ins.
	Enabled []string `yaml:"enabled"`
}

// DefaultConfig enables every built-in profile and defaults to "browser".
func DefaultConfig() Config { return Config{Default: Browser} }

// Validate checks that every named profile exists and that the default is
// enabled.
func (c Config) Validate() error {
	if _, err := Lookup(c.Default); err != nil {
		return fmt.Errorf("devices.default: %w", err)
	}
	for i, id := range c.Enabled {
		if _, err := Lookup(id); err != nil {
			return fmt.Errorf("devices.enabled[%d]: %w", i, err)
		}
	}
	if len(c.Enabled) > 0 && !slices.Contains(c.Enabled, c.Default) {
		return fmt.Errorf("devices.default: %q is not in devices.enabled: %w", c.Default, ErrInvalidProfile)
	}
	return nil
}

// Profiles returns the enabled profiles (all built-ins when Enabled is empty).
func (c Config) Profiles() ([]Profile, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if len(c.Enabled) == 0 {
		return Builtins(), nil
	}
	out := make([]Profile, 0, len(c.Enabled))
	for _, id := range c.Enabled {
		p, _ := Lookup(id)
		out = append(out, p)
	}
	return out, nil
}
