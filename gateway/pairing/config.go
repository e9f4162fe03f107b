package pairing

import (
	"errors"
	"fmt"
)

// Config bounds codes, pairings and attempts.
type Config struct {
	// CodeTTLSeconds is how long a pairing code can be exchanged.
	CodeTTLSeconds int `yaml:"code_ttl_seconds"`
	// RefreshIdleDays ends a pairing that was not refreshed for this long.
	RefreshIdleDays int `yaml:"refresh_idle_days"`
	// RotationGraceSeconds keeps the previous refresh credential valid
	// after a rotation, until the new one is first used.
	RotationGraceSeconds int `yaml:"rotation_grace_seconds"`
	// ExchangesPerMinute bounds code exchanges per client address.
	ExchangesPerMinute int `yaml:"exchanges_per_minute"`
	// RefreshesPerMinute bounds refreshes per client address.
	RefreshesPerMinute int `yaml:"refreshes_per_minute"`
	// MaxCodes bounds the codes held at once (503 beyond).
	MaxCodes int `yaml:"max_codes"`
	// MaxPerEndUser bounds one end user's pairings; the least recently
	// refreshed one ends when another is made.
	MaxPerEndUser int `yaml:"max_per_end_user"`
}

// DefaultConfig returns five-minute codes, 30-day idle pairings, a
// two-minute rotation grace, 10 exchanges and 60 refreshes per minute per
// address, 100 000 live codes and 5 pairings per end user.
func DefaultConfig() Config {
	return Config{CodeTTLSeconds: 300, RefreshIdleDays: 30, RotationGraceSeconds: 120,
		ExchangesPerMinute: 10, RefreshesPerMinute: 60, MaxCodes: 100_000, MaxPerEndUser: 5}
}

// ErrConfig wraps every configuration error.
var ErrConfig = errors.New("pairing: config")

// Validate checks the bounds.
func (c Config) Validate() error {
	check := func(name string, v, lo, hi int) error {
		if v < lo || v > hi {
			return fmt.Errorf("%w: %s must be between %d and %d, got %d", ErrConfig, name, lo, hi, v)
		}
		return nil
	}
	return errors.Join(
		check("code_ttl_seconds", c.CodeTTLSeconds, 30, 3600),
		check("refresh_idle_days", c.RefreshIdleDays, 1, 365),
		check("rotation_grace_seconds", c.RotationGraceSeconds, 0, 3600),
		check("exchanges_per_minute", c.ExchangesPerMinute, 1, 10_000),
		check("refreshes_per_minute", c.RefreshesPerMinute, 1, 10_000),
		check("max_codes", c.MaxCodes, 1, 10_000_000),
		check("max_per_end_user", c.MaxPerEndUser, 1, 100),
	)
}
