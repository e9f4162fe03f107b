package webhook

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Event types a partner can subscribe to.
const (
	TypeTurnFinished   = "turn_finished"
	TypeActionApproved = "action.approved"
	TypeActionDeclined = "action.declined"
	TypeActionExpired  = "action.expired"
	TypeActionResult   = "action.result"
)

// EventTypes lists every event type, in documentation order.
var EventTypes = []string{TypeTurnFinished, TypeActionApproved, TypeActionDeclined, TypeActionExpired, TypeActionResult}

// MinSecretLen is the shortest accepted signing secret.
const MinSecretLen = 16

// Endpoint is one receiver of a partner's events. cmd fills Secret from
// SecretEnv (preferred: secrets stay out of files).
type Endpoint struct {
	URL       string `yaml:"url"`
	SecretEnv string `yaml:"secret_env"`
	Secret    string `yaml:"secret"`
	// Events the endpoint receives; empty means every event type.
	Events []string `yaml:"events"`
}

// Wants reports whether the endpoint subscribes to event type t.
func (e Endpoint) Wants(t string) bool { return len(e.Events) == 0 || slices.Contains(e.Events, t) }

// ValidateEndpoints checks endpoints configured under key (e.g.
// "auth.keys[0].webhooks"); messages name the key. dev allows plain http
// (dev mode only ever serves loopback clients); otherwise URLs must be https.
func ValidateEndpoints(key string, eps []Endpoint, dev bool) error {
	var errs []error
	bad := func(k, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", k, fmt.Sprintf(format, args...)))
	}
	seen := map[string]bool{}
	for i, e := range eps {
		k := fmt.Sprintf("%s[%d]", key, i)
		u, err := url.Parse(e.URL)
		switch {
		case strings.TrimSpace(e.URL) == "":
			bad(k+".url", "must not be empty")
		case err != nil || u.Host == "" || u.User != nil || u.Fragment != "":
			bad(k+".url", "%q is not an absolute URL without credentials or fragment", e.URL)
		case u.Scheme == "http" && !dev:
			bad(k+".url", "%q must use https (plain http is allowed in dev mode only)", e.URL)
		case u.Scheme != "https" && u.Scheme != "http":
			bad(k+".url", "%q must use https", e.URL)
		case seen[e.URL]:
			bad(k+".url", "%q is listed twice", e.URL)
		}
		seen[e.URL] = true
		if e.Secret == "" {
			if e.SecretEnv != "" {
				bad(k+".secret_env", "environment variable %s is empty or unset", e.SecretEnv)
			} else {
				bad(k+".secret", "set secret_env (preferred) or secret")
			}
		} else if len(e.Secret) < MinSecretLen {
			bad(k+".secret", "must be at least %d characters", MinSecretLen)
		}
		for _, t := range e.Events {
			if !slices.Contains(EventTypes, t) {
				bad(k+".events", "unknown event %q (known: %v)", t, EventTypes)
			}
		}
	}
	return errors.Join(errs...)
}

// Config tunes delivery. Decoded from YAML under "webhook_delivery".
type Config struct {
	// Timeout bounds one delivery attempt (connect to last byte).
	Timeout time.Duration `yaml:"timeout"`
	// MaxPending bounds the deliveries waiting in one partner endpoint's
	// queue; Publish refuses an event for that endpoint (ErrQueueFull)
	// beyond it rather than growing the store without limit, and the
	// partner's other endpoints, and every other partner, are unaffected.
	MaxPending int `yaml:"max_pending"`
	// KeepFailed bounds the failed deliveries kept for inspection; the
	// oldest are dropped first.
	KeepFailed int `yaml:"keep_failed"`
	// AllowPrivateTargets lets endpoints reach loopback, private,
	// link-local (cloud metadata) and other internal addresses: for tests
	// and on-premises receivers. Off, such a URL fails at start and such a
	// resolved address is refused at every dial.
	AllowPrivateTargets bool `yaml:"allow_private_targets"`
}

// DefaultConfig returns production defaults.
func DefaultConfig() Config {
	return Config{Timeout: 10 * time.Second, MaxPending: 10_000, KeepFailed: 10_000}
}

// Validate checks every key; messages name it.
func (c Config) Validate() error {
	var errs []error
	if c.Timeout < 100*time.Millisecond || c.Timeout > time.Minute {
		errs = append(errs, errors.New("webhook_delivery.timeout: must be in [100ms, 1m]"))
	}
	if c.MaxPending < 1 {
		errs = append(errs, errors.New("webhook_delivery.max_pending: must be at least 1"))
	}
	if c.KeepFailed < 0 {
		errs = append(errs, errors.New("webhook_delivery.keep_failed: must not be negative"))
	}
	return errors.Join(errs...)
}
