package safety

import (
	"fmt"
	"time"
)

// MaxDisclosureInterval is the longest gap allowed between AI disclosures in
// a continuing session (NY GBL §1702, CA SB 243 §22602(c), WA HB 2225).
const MaxDisclosureInterval = 3 * time.Hour

// Config holds the safety settings cmd/ reads from the gateway's config file.
// The AI disclosure's repeat interval is not here: it is the session's
// (session.disclosure_every), which runs the schedule.
type Config struct {
	// DefaultRegion is the ISO 3166-1 alpha-2 country used when the engine,
	// the user, the device and the locale all say nothing. Empty means the
	// international directory plus "call your local emergency number".
	DefaultRegion string `yaml:"default_region"`
	// ContextTurns is how many earlier user turns DetectTurn considers.
	ContextTurns int `yaml:"context_turns"`
	// IncludeUnverified adds catalog entries whose facts are not yet
	// verified. Off in production; for reviewing the dataset only.
	IncludeUnverified bool `yaml:"include_unverified"`
}

// DefaultConfig returns the production defaults.
func DefaultConfig() Config {
	return Config{
		ContextTurns: DefaultContextTurns,
	}
}

// Validate reports the first out-of-range key, naming it.
func (c Config) Validate() error {
	if c.DefaultRegion != "" && normRegion(c.DefaultRegion) == "" {
		return fmt.Errorf("safety.default_region: %q is not an ISO 3166-1 alpha-2 code: %w", c.DefaultRegion, ErrConfig)
	}
	if c.ContextTurns < 0 || c.ContextTurns > 50 {
		return fmt.Errorf("safety.context_turns: must be in [0,50], got %d: %w", c.ContextTurns, ErrConfig)
	}
	return nil
}
