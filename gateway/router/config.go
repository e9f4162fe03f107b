package router

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/gateway/router/espeak"
	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
	"github.com/veraneural/vera-gateway/safety"
)

// Provider names accepted in models[].provider.
const (
	ProviderOpenAI       = "openai"
	ProviderCompanion    = "companion"
	ProviderPocketsphinx = "pocketsphinx"
	ProviderEspeak       = "espeak"
	ProviderVERA         = "vera"
	// Classifier providers serve only the safety slot.
	ProviderModeration = "openai-moderation" // POST {base}/moderations
	ProviderGuard      = "guard"             // a Llama Guard style chat model
)

// providerList is every provider name, for error messages.
const providerList = "openai|companion|pocketsphinx|espeak|vera|openai-moderation|guard"

// Slot names the gateway itself uses. Other slot names are allowed and
// behave like text slots (oneshot).
const (
	SlotListen   = "listen"
	SlotConverse = "converse"
	SlotSpeak    = "speak"
	SlotSnappy   = "snappy"
	SlotEco      = "eco"
	// SlotSafety is reserved: its models classify each user turn, all in
	// parallel, and the highest verdict wins (Classify). It is never
	// filled by an embedded engine: no safety slot, no classifier.
	SlotSafety = "safety"
)

// Names of the embedded models that fill slots the configuration leaves out.
const (
	EmbeddedListen   = "embedded-listen"
	EmbeddedConverse = "embedded-companion"
	EmbeddedSpeak    = "embedded-speak"
)

// validName is what a model name may be: it travels in Idempotency-Key
// headers and metric labels.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Config is the router section of the gateway configuration.
type Config struct {
	Models  []ModelConfig       `yaml:"models"`
	Slots   map[string][]string `yaml:"slots"`
	Retry   RetryConfig         `yaml:"retry"`
	Breaker BreakerConfig       `yaml:"breaker"`
	// MaxBodyBytes bounds every provider response body read.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxTurnSeconds bounds the audio a listen session keeps for failover.
	MaxTurnSeconds int `yaml:"max_turn_seconds"`
	// Sphinx configures the embedded pocketsphinx decoders.
	Sphinx sphinx.Config `yaml:"sphinx"`
	// Espeak configures the embedded espeak-ng voice.
	Espeak espeak.Config `yaml:"espeak"`
}

// ModelConfig is one model a slot may name.
type ModelConfig struct {
	Name     string `yaml:"name"`
	Provider string `yaml:"provider"`
	// BaseURL of an HTTP provider, e.g. http://127.0.0.1:11434/v1 (openai)
	// or https://api.veraneural.com/v1 (vera).
	BaseURL string `yaml:"base_url"`
	// Model is the provider's model id (openai: chat, whisper or tts model).
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable holding the key; read once
	// through Options.Getenv at construction. Empty: no Authorization header.
	APIKeyEnv string `yaml:"api_key_env"`
	// ContextWindow in tokens; 0 means unbounded (embedded engines).
	ContextWindow int `yaml:"context_window"`
	// MaxOutputTokens reserved for the reply when the request names none.
	MaxOutputTokens int `yaml:"max_output_tokens"`
	// TTFTMs is the time-to-first-useful-token budget of one attempt. For
	// providers that do not stream (vera, transcriptions) the first useful
	// token is the whole answer.
	TTFTMs int `yaml:"ttft_ms"`
	// TimeoutMs bounds all tries of this model, retries included.
	TimeoutMs int `yaml:"timeout_ms"`
	// Voice for speak models (openai: e.g. "alloy"; espeak: e.g. "en-us").
	Voice string `yaml:"voice"`
	// AudioFormat asked of an openai speak model: opus, pcm or wav.
	AudioFormat string `yaml:"audio_format"`
	// Language hint for listen models (ISO-639-1), optional.
	Language string `yaml:"language"`
	// EndUserID is the opaque end_user_id a vera model uses for oneshot
	// conversations (converse turns use the thread's own).
	EndUserID string `yaml:"end_user_id"`
	// Classifier maps a safety-slot model's answer to levels.
	Classifier ClassifierConfig `yaml:"classifier"`
}

// ClassifierConfig maps a classifier's answer to safety levels. Keys it
// names replace the defaults' values for those keys; other keys keep their
// defaults (DefaultModerationThresholds, DefaultGuardCodes).
type ClassifierConfig struct {
	// Crisis and Elevated (openai-moderation): category → the score at or
	// above which the turn is at least that level. A threshold above 1
	// turns the category off (scores are at most 1).
	Crisis   map[string]float64 `yaml:"crisis"`
	Elevated map[string]float64 `yaml:"elevated"`
	// Codes (guard): category code → "crisis", "elevated" or "none"
	// (ignored). Codes are matched without regard to case.
	Codes map[string]string `yaml:"codes"`
}

// DefaultModerationThresholds are the openai-moderation defaults: crisis
// only when the service reads intent to self-harm; elevated on self-harm
// content, instructions, a lower intent score, or violence the service is
// nearly sure of (violence alone fires on fiction and news, so its bar is
// high).
func DefaultModerationThresholds() (crisis, elevated map[string]float64) {
	return map[string]float64{"self-harm/intent": 0.5},
		map[string]float64{"self-harm": 0.3, "self-harm/intent": 0.2, "self-harm/instructions": 0.3, "violence": 0.9}
}

// DefaultGuardCodes are the guard defaults: Llama Guard 3 and 4's S11
// (suicide and self-harm) is crisis. An "unsafe" answer without a code
// counts as elevated; unsafe in any other category counts as nothing
// unless mapped here (Llama Guard 2 numbers self-harm S10: map it).
func DefaultGuardCodes() map[string]string { return map[string]string{"S11": "crisis"} }

// DefaultClassifyTimeout bounds a classifier call whose timeout_ms is 0.
const DefaultClassifyTimeout = 2 * time.Second

// RetryConfig shapes the exponential, jittered backoff between retries of
// one model (github.com/cenkalti/backoff/v4).
type RetryConfig struct {
	MaxRetries      int     `yaml:"max_retries"`
	InitialMs       int     `yaml:"initial_ms"`
	MaxIntervalMs   int     `yaml:"max_interval_ms"`
	Multiplier      float64 `yaml:"multiplier"`
	Jitter          float64 `yaml:"jitter"`
	MaxRetryAfterMs int     `yaml:"max_retry_after_ms"`
}

// BreakerConfig shapes the per-model circuit breaker.
type BreakerConfig struct {
	// Failures is how many consecutive failures open the breaker.
	Failures int `yaml:"failures"`
	// CooldownMs after which one half-open probe is let through.
	CooldownMs int `yaml:"cooldown_ms"`
}

// DefaultConfig is the offline configuration: no models or slots of its
// own, so every slot is served by the embedded engines (pocketsphinx
// listen, companion converse/snappy/eco, espeak speak; in noembedded builds
// the listen slot is absent). cmd/ decodes the YAML router section over it.
func DefaultConfig() Config {
	return Config{
		Retry: RetryConfig{
			MaxRetries: 2, InitialMs: 200, MaxIntervalMs: 2000,
			Multiplier: 2, Jitter: 0.2, MaxRetryAfterMs: 5000,
		},
		Breaker:        BreakerConfig{Failures: 5, CooldownMs: 30000},
		MaxBodyBytes:   8 << 20,
		MaxTurnSeconds: 30,
		Sphinx:         sphinx.DefaultConfig(),
		Espeak:         espeak.DefaultConfig(),
	}
}

// embeddedModels are the offline engines, keyed by the slot they fill.
func embeddedModels() map[string]ModelConfig {
	m := map[string]ModelConfig{
		SlotConverse: {Name: EmbeddedConverse, Provider: ProviderCompanion, TTFTMs: 1000, TimeoutMs: 5000},
		SlotSpeak:    {Name: EmbeddedSpeak, Provider: ProviderEspeak, TTFTMs: 3000, TimeoutMs: 60000},
	}
	if sphinxBuilt {
		m[SlotListen] = ModelConfig{Name: EmbeddedListen, Provider: ProviderPocketsphinx, TTFTMs: 3000, TimeoutMs: 10000}
	}
	return m
}

// withEmbedded returns a copy in which every standard slot the
// configuration does not name is filled by its embedded engine (snappy and
// eco by the companion), adding the embedded model when needed.
func (c Config) withEmbedded() Config {
	out := c
	out.Models = slices.Clone(c.Models)
	out.Slots = make(map[string][]string, len(c.Slots)+5)
	for k, v := range c.Slots {
		out.Slots[k] = slices.Clone(v)
	}
	emb := embeddedModels()
	fill := func(slot, key string) {
		if _, named := out.Slots[slot]; named {
			return
		}
		m, ok := emb[key]
		if !ok {
			return
		}
		if !slices.ContainsFunc(out.Models, func(x ModelConfig) bool { return x.Name == m.Name }) {
			out.Models = append(out.Models, m)
		}
		out.Slots[slot] = []string{m.Name}
	}
	fill(SlotListen, SlotListen)
	fill(SlotConverse, SlotConverse)
	fill(SlotSpeak, SlotSpeak)
	fill(SlotSnappy, SlotConverse)
	fill(SlotEco, SlotConverse)
	// Slots may name an embedded model without defining it.
	for _, names := range out.Slots {
		for _, n := range names {
			for _, m := range emb {
				if m.Name == n && !slices.ContainsFunc(out.Models, func(x ModelConfig) bool { return x.Name == n }) {
					out.Models = append(out.Models, m)
				}
			}
		}
	}
	return out
}

// Resolved returns the configuration as New uses it: every slot the
// configuration does not name filled by its embedded engine.
func (c Config) Resolved() Config { return c.withEmbedded() }

// capability is what a slot needs of its models.
type capability int

const (
	capText capability = iota
	capListen
	capSpeak
	capClassify
)

func slotCapability(slot string) capability {
	switch slot {
	case SlotListen:
		return capListen
	case SlotSpeak:
		return capSpeak
	case SlotSafety:
		return capClassify
	}
	return capText
}

func providerCan(provider string, c capability) bool {
	switch provider {
	case ProviderOpenAI:
		return c != capClassify
	case ProviderModeration, ProviderGuard:
		return c == capClassify
	case ProviderVERA, ProviderCompanion:
		return c == capText
	case ProviderPocketsphinx:
		return c == capListen
	case ProviderEspeak:
		return c == capSpeak
	}
	return false
}

// Validate checks the configuration after the embedded engines have filled
// the slots it leaves out; messages name the key at fault.
func (c Config) Validate() error {
	r := c.withEmbedded()
	var errs []error
	seen := map[string]int{}
	for i, m := range r.Models {
		key := fmt.Sprintf("router.models[%d]", i)
		if m.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: must be set", key))
		} else if !validName.MatchString(m.Name) {
			errs = append(errs, fmt.Errorf("%s.name: %q: use letters, digits, '.', '_', '-' (at most 64)", key, m.Name))
		} else if j, dup := seen[m.Name]; dup {
			errs = append(errs, fmt.Errorf("%s.name: duplicate model %q (also router.models[%d])", key, m.Name, j))
		} else {
			seen[m.Name] = i
		}
		errs = append(errs, m.validate(key))
	}
	slots := make([]string, 0, len(r.Slots))
	for s := range r.Slots {
		slots = append(slots, s)
	}
	sort.Strings(slots)
	for _, s := range slots {
		names := r.Slots[s]
		key := "router.slots." + s
		if len(names) == 0 {
			errs = append(errs, fmt.Errorf("%s: empty slot", key))
		}
		for j, n := range names {
			i, ok := seen[n]
			if !ok {
				errs = append(errs, fmt.Errorf("%s[%d]: unknown model %q", key, j, n))
				continue
			}
			if p := r.Models[i].Provider; !providerCan(p, slotCapability(s)) {
				hint := ""
				switch {
				case s == SlotSafety:
					hint = " (the safety slot takes classifier providers: openai-moderation, guard)"
				case p == ProviderModeration || p == ProviderGuard:
					hint = " (classifier providers serve only the safety slot)"
				}
				errs = append(errs, fmt.Errorf("%s[%d]: model %q (provider %s) cannot serve slot %q%s", key, j, n, p, s, hint))
			}
			if slices.Index(names, n) != j {
				errs = append(errs, fmt.Errorf("%s[%d]: model %q listed twice", key, j, n))
			}
		}
	}
	rc := r.Retry
	switch {
	case rc.MaxRetries < 0 || rc.MaxRetries > 10:
		errs = append(errs, fmt.Errorf("router.retry.max_retries: must be in [0,10], got %d", rc.MaxRetries))
	case rc.InitialMs <= 0:
		errs = append(errs, fmt.Errorf("router.retry.initial_ms: must be > 0, got %d", rc.InitialMs))
	case rc.MaxIntervalMs < rc.InitialMs:
		errs = append(errs, fmt.Errorf("router.retry.max_interval_ms: must be >= initial_ms, got %d", rc.MaxIntervalMs))
	case rc.Multiplier < 1:
		errs = append(errs, fmt.Errorf("router.retry.multiplier: must be >= 1, got %g", rc.Multiplier))
	case rc.Jitter < 0 || rc.Jitter >= 1:
		errs = append(errs, fmt.Errorf("router.retry.jitter: must be in [0,1), got %g", rc.Jitter))
	case rc.MaxRetryAfterMs < 0:
		errs = append(errs, fmt.Errorf("router.retry.max_retry_after_ms: must be >= 0, got %d", rc.MaxRetryAfterMs))
	}
	if r.Breaker.Failures < 1 {
		errs = append(errs, fmt.Errorf("router.breaker.failures: must be >= 1, got %d", r.Breaker.Failures))
	}
	if r.Breaker.CooldownMs <= 0 {
		errs = append(errs, fmt.Errorf("router.breaker.cooldown_ms: must be > 0, got %d", r.Breaker.CooldownMs))
	}
	if r.MaxBodyBytes < 1024 {
		errs = append(errs, fmt.Errorf("router.max_body_bytes: must be >= 1024, got %d", r.MaxBodyBytes))
	}
	if r.MaxTurnSeconds < 1 || r.MaxTurnSeconds > 600 {
		errs = append(errs, fmt.Errorf("router.max_turn_seconds: must be in [1,600], got %d", r.MaxTurnSeconds))
	}
	if r.uses(ProviderPocketsphinx) {
		if err := r.Sphinx.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("router.%w", err))
		}
	}
	if r.uses(ProviderEspeak) {
		if err := r.Espeak.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("router.%w", err))
		}
	}
	return errors.Join(errs...)
}

func (c Config) uses(provider string) bool {
	return slices.ContainsFunc(c.Models, func(m ModelConfig) bool { return m.Provider == provider })
}

func (m ModelConfig) validate(key string) error {
	if err := m.validateClassifier(key); err != nil {
		return err
	}
	switch m.Provider {
	case ProviderOpenAI, ProviderVERA, ProviderModeration, ProviderGuard:
		if m.BaseURL == "" {
			return fmt.Errorf("%s.base_url: must be set for provider %s", key, m.Provider)
		}
		u, err := url.Parse(m.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s.base_url: must be an http(s) URL, got %q", key, m.BaseURL)
		}
		if m.Provider != ProviderVERA && m.Model == "" {
			return fmt.Errorf("%s.model: must be set for provider %s", key, m.Provider)
		}
	case ProviderCompanion, ProviderEspeak:
	case ProviderPocketsphinx:
		if !sphinxBuilt {
			return fmt.Errorf("%s.provider: pocketsphinx is not built into this binary (noembedded)", key)
		}
	case "":
		return fmt.Errorf("%s.provider: must be set (%s)", key, providerList)
	default:
		return fmt.Errorf("%s.provider: unknown provider %q (%s)", key, m.Provider, providerList)
	}
	switch {
	case m.ContextWindow < 0:
		return fmt.Errorf("%s.context_window: must be >= 0, got %d", key, m.ContextWindow)
	case m.MaxOutputTokens < 0:
		return fmt.Errorf("%s.max_output_tokens: must be >= 0, got %d", key, m.MaxOutputTokens)
	case m.ContextWindow > 0 && m.MaxOutputTokens >= m.ContextWindow:
		return fmt.Errorf("%s.max_output_tokens: must be < context_window (%d), got %d", key, m.ContextWindow, m.MaxOutputTokens)
	case m.TTFTMs < 0:
		return fmt.Errorf("%s.ttft_ms: must be >= 0, got %d", key, m.TTFTMs)
	case m.TimeoutMs < 0:
		return fmt.Errorf("%s.timeout_ms: must be >= 0, got %d", key, m.TimeoutMs)
	case m.TimeoutMs > 0 && m.TTFTMs > m.TimeoutMs:
		return fmt.Errorf("%s.ttft_ms: must be <= timeout_ms (%d), got %d", key, m.TimeoutMs, m.TTFTMs)
	}
	switch m.AudioFormat {
	case "", "opus", "pcm", "wav":
	default:
		return fmt.Errorf("%s.audio_format: must be opus, pcm or wav, got %q", key, m.AudioFormat)
	}
	return nil
}

// validateClassifier checks models[].classifier: thresholds for
// openai-moderation, codes for guard, nothing for other providers.
func (m ModelConfig) validateClassifier(key string) error {
	c := m.Classifier
	key += ".classifier"
	if (len(c.Crisis) > 0 || len(c.Elevated) > 0) && m.Provider != ProviderModeration {
		return fmt.Errorf("%s: crisis/elevated thresholds are for provider openai-moderation, not %q", key, m.Provider)
	}
	if len(c.Codes) > 0 && m.Provider != ProviderGuard {
		return fmt.Errorf("%s.codes: for provider guard, not %q", key, m.Provider)
	}
	for name, th := range map[string]map[string]float64{"crisis": c.Crisis, "elevated": c.Elevated} {
		for cat, v := range th {
			if strings.TrimSpace(cat) == "" {
				return fmt.Errorf("%s.%s: empty category name", key, name)
			}
			if !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("%s.%s[%q]: must be a score > 0 (above 1 turns it off), got %g", key, name, cat, v)
			}
		}
	}
	for code, lvl := range c.Codes {
		if strings.TrimSpace(code) == "" {
			return fmt.Errorf("%s.codes: empty code", key)
		}
		if _, err := safety.ParseLevel(lvl); err != nil {
			return fmt.Errorf("%s.codes[%q]: must be crisis, elevated or none, got %q", key, code, lvl)
		}
	}
	return nil
}
