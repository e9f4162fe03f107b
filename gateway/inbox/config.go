package inbox

import (
	"errors"
	"time"
)

// MaxTextBytes is the largest message text (sessions.send's 16 KiB).
const MaxTextBytes = 16 << 10

// Config bounds the inbox. Decoded from YAML under "inbox".
type Config struct {
	// MaxQueued bounds the messages waiting for one session; more are
	// refused with rate_limited.
	MaxQueued int `yaml:"max_queued"`
	// HoldFor is how long a message waits (for its session, or for the
	// person to admit its source after a restart) before it is dropped.
	HoldFor time.Duration `yaml:"hold_for"`
	// TurnTimeout is how long the inbox waits for TurnFinished after a
	// delivery before it assumes the turn ended without telling it.
	TurnTimeout time.Duration `yaml:"turn_timeout"`
}

// DefaultConfig returns production defaults.
func DefaultConfig() Config {
	return Config{MaxQueued: 32, HoldFor: 24 * time.Hour, TurnTimeout: 5 * time.Minute}
}

// Validate checks every key; messages name it.
func (c Config) Validate() error {
	var errs []error
	if c.MaxQueued < 1 || c.MaxQueued > 10_000 {
		errs = append(errs, errors.New("inbox.max_queued: must be in [1, 10000]"))
	}
	if c.HoldFor < time.Minute {
		errs = append(errs, errors.New("inbox.hold_for: must be at least 1m"))
	}
	if c.TurnTimeout < time.Second {
		errs = append(errs, errors.New("inbox.turn_timeout: must be at least 1s"))
	}
	return errors.Join(errs...)
}
