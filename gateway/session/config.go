package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/veraneural/vera-gateway/gateway/consent"
	"github.com/veraneural/vera-gateway/safety"
)

// Busy policies: what new input does while a reply is in progress.
const (
	BusyCancel = "cancel"
	BusyQueue  = "queue"
)

// Config bounds a session. Decoded from YAML under "session".
type Config struct {
	// ReplayEvents and ReplayBytes bound the replay log: the events a client
	// can get back after a reconnect, and how far a reader may lag behind.
	ReplayEvents int `yaml:"replay_events"`
	ReplayBytes  int `yaml:"replay_bytes"`
	// ResumeWindow is how long a session without a transport waits for a
	// reconnect before it is closed.
	ResumeWindow time.Duration `yaml:"resume_window"`
	// OnBusy is "cancel" (new input cancels the reply in progress) or
	// "queue" (it waits its turn).
	OnBusy string `yaml:"on_busy"`
	// MaxQueued bounds inputs waiting for a turn; more get rate_limited.
	MaxQueued int `yaml:"max_queued"`
	// HistoryMessages bounds the history sent to the Converser.
	HistoryMessages int `yaml:"history_messages"`
	// TurnTimeout bounds one converse call.
	TurnTimeout time.Duration `yaml:"turn_timeout"`
	// AckResends bounds how often an unacknowledged card is re-sent.
	AckResends int `yaml:"ack_resends"`
	// DefaultDevice is the profile of a client whose hello names none.
	DefaultDevice string `yaml:"default_device"`
	// MaxSessions bounds live sessions in a Manager.
	MaxSessions int `yaml:"max_sessions"`
	// Disclosure overrides the safety package's AI-disclosure texts: shown
	// on every surface and spoken in voice sessions (keep it short, it is
	// heard before the first reply); empty uses them.
	Disclosure string `yaml:"disclosure"`
	// DisclosureEvery repeats the disclosure in a continuing session (at
	// most safety.MaxDisclosureInterval).
	DisclosureEvery time.Duration `yaml:"disclosure_every"`
	// Consent bounds the approve/decline prompts of proposed actions:
	// their expiry, the answer window after a spoken offer, and how often an
	// offer is asked.
	Consent consent.Config `yaml:"consent"`
}

// DefaultConfig returns production defaults.
func DefaultConfig() Config {
	return Config{
		ReplayEvents:    512,
		ReplayBytes:     1 << 20,
		ResumeWindow:    2 * time.Minute,
		OnBusy:          BusyCancel,
		MaxQueued:       4,
		HistoryMessages: 40,
		TurnTimeout:     60 * time.Second,
		AckResends:      3,
		DefaultDevice:   "browser",
		MaxSessions:     10000,
		DisclosureEvery: safety.MaxDisclosureInterval,
		Consent:         consent.DefaultConfig(),
	}
}

// ErrConfig is wrapped by every Validate error.
var ErrConfig = errors.New("invalid config")

// Validate checks every key; messages name it.
func (c Config) Validate() error {
	bad := func(key, msg string) error { return fmt.Errorf("session.%s: %s: %w", key, msg, ErrConfig) }
	switch {
	case c.ReplayEvents < 16:
		return bad("replay_events", "must be >= 16")
	case c.ReplayBytes < 16<<10:
		return bad("replay_bytes", "must be >= 16384")
	case c.ResumeWindow < time.Second:
		return bad("resume_window", "must be >= 1s")
	case c.OnBusy != BusyCancel && c.OnBusy != BusyQueue:
		return bad("on_busy", `must be "cancel" or "queue"`)
	case c.MaxQueued < 1 || c.MaxQueued > 64:
		return bad("max_queued", "must be in [1,64]")
	case c.HistoryMessages < 0:
		return bad("history_messages", "must be >= 0")
	case c.TurnTimeout <= 0:
		return bad("turn_timeout", "must be > 0")
	case c.AckResends < 1:
		return bad("ack_resends", "must be >= 1")
	case c.DefaultDevice == "":
		return bad("default_device", "required")
	case c.MaxSessions < 1:
		return bad("max_sessions", "must be >= 1")
	case c.DisclosureEvery <= 0 || c.DisclosureEvery > safety.MaxDisclosureInterval:
		return bad("disclosure_every", "must be in (0, 3h]")
	}
	if err := c.Consent.Validate(); err != nil {
		return fmt.Errorf("session.%w: %w", err, ErrConfig)
	}
	return nil
}
