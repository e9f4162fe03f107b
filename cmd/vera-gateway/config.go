package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/chat"
	"github.com/veraneural/vera-gateway/gateway/cluster"
	"github.com/veraneural/vera-gateway/gateway/inbox"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/tools"
	"github.com/veraneural/vera-gateway/gateway/voice"
	"github.com/veraneural/vera-gateway/gateway/webhook"
	"github.com/veraneural/vera-gateway/gateway/yamlconf"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// fileConfig is the whole YAML file: the HTTP edge's keys at the top level
// and one section per package.
type fileConfig struct {
	gateway.Config `yaml:",inline"`
	// Auth is the edge's auth section with each key's webhook receivers;
	// edge() hands the edge its part.
	Auth authConfig `yaml:"auth"`
	// LogLevel is debug, info, warn or error.
	LogLevel string         `yaml:"log_level"`
	Router   router.Config  `yaml:"router"`
	Session  session.Config `yaml:"session"`
	Chat     chat.Config    `yaml:"chat"`
	RTC      rtc.Config     `yaml:"rtc"`
	Safety   safetySection  `yaml:"safety"`
	Glasses  glasses.Config `yaml:"glasses"`
	Devices  devices.Config `yaml:"devices"`
	Voice    voice.Config   `yaml:"voice"`
	// Admission bounds the load the gateway accepts; past it new sessions
	// get 503 with Retry-After instead of degrading live ones.
	Admission admissionConfig `yaml:"admission"`
	// Webhooks are dev mode's receivers (partner "dev"); with keys, each
	// key has its own under auth.keys[].webhooks.
	Webhooks        []webhook.Endpoint `yaml:"webhooks"`
	WebhookDelivery webhook.Config     `yaml:"webhook_delivery"`
	Tools           tools.Config       `yaml:"tools"`
	Inbox           inbox.Config       `yaml:"inbox"`
	Store           storeConfig        `yaml:"store"`
	// Audit bounds the decision audit log (GET /v1/audit/decisions).
	Audit audit.Config `yaml:"audit"`
	// Cluster, when set, makes this node one of a cluster on Redis
	// (gateway/cluster); absent, the node is alone on bbolt and memory.
	Cluster cluster.Config `yaml:"cluster"`
}

// authConfig is the file's auth section: the edge's settings, and its keys
// with each partner's webhook receivers (which the edge knows nothing of).
type authConfig struct {
	gateway.AuthConfig `yaml:",inline"`
	Keys               []keyConfig `yaml:"keys"`
}

// keyConfig is one auth.keys entry.
type keyConfig struct {
	gateway.KeyConfig `yaml:",inline"`
	// Webhooks receive this partner's signed events (secrets filled from
	// each endpoint's secret_env, like the key's own).
	Webhooks []webhook.Endpoint `yaml:"webhooks"`
}

// edge is the HTTP edge's config: the file's top level and auth keys.
func (c fileConfig) edge() gateway.Config {
	g := c.Config
	g.Auth = c.Auth.AuthConfig
	g.Auth.Keys = nil
	for _, k := range c.Auth.Keys {
		g.Auth.Keys = append(g.Auth.Keys, k.KeyConfig)
	}
	return g
}

// DevMode reports whether no partner key is configured.
func (c fileConfig) DevMode() bool { return len(c.Auth.Keys) == 0 }

// partnerWebhooks are the webhook receivers by partner: each key's, and in
// dev mode the top-level ones for partner "dev".
func (c fileConfig) partnerWebhooks() map[string][]webhook.Endpoint {
	out := map[string][]webhook.Endpoint{}
	for _, k := range c.Auth.Keys {
		if len(k.Webhooks) > 0 {
			out[k.ID] = k.Webhooks
		}
	}
	if c.DevMode() && len(c.Webhooks) > 0 {
		out[gateway.DevPartnerID] = c.Webhooks
	}
	return out
}

// storeConfig places the embedded database that keeps inbox messages,
// webhook deliveries and the decision audit across restarts.
type storeConfig struct {
	// Path of the bbolt file. Empty: a file in a temporary directory that is
	// removed at exit, so nothing survives a restart (fine for make run;
	// set a path in production).
	Path string `yaml:"path"`
}

// safetySection is the safety package's settings plus how long a reply
// waits for the router's safety classifiers.
type safetySection struct {
	safety.Config `yaml:",inline"`
	// ClassifyBudgetMs is how long the reply's first text delta and first
	// audio wait for the router's safety slot (router.slots.safety); a
	// verdict after it is a late detection. 0: never wait (late only).
	ClassifyBudgetMs int `yaml:"classify_budget_ms"`
}

// maxClassifyBudgetMs bounds the wait: past it the person hears dead air.
const maxClassifyBudgetMs = 3000

func (s safetySection) Validate() error {
	if err := s.Config.Validate(); err != nil {
		return err
	}
	if s.ClassifyBudgetMs < 0 || s.ClassifyBudgetMs > maxClassifyBudgetMs {
		return fmt.Errorf("safety.classify_budget_ms: must be in [0,%d], got %d", maxClassifyBudgetMs, s.ClassifyBudgetMs)
	}
	return nil
}

type admissionConfig struct {
	// MaxVoiceSessions bounds live WebRTC voice sessions.
	MaxVoiceSessions int `yaml:"max_voice_sessions"`
	// RetryAfterSeconds is sent with the 503.
	RetryAfterSeconds int `yaml:"retry_after_seconds"`
}

func defaultFileConfig() fileConfig {
	edge := gateway.DefaultConfig()
	return fileConfig{Config: edge, Auth: authConfig{AuthConfig: edge.Auth}, LogLevel: "info",
		Router: router.DefaultConfig(), Session: session.DefaultConfig(), Chat: chat.DefaultConfig(),
		RTC: rtc.DefaultConfig(), Safety: safetySection{Config: safety.DefaultConfig(), ClassifyBudgetMs: int(router.DefaultClassifyBudget / time.Millisecond)}, Glasses: glasses.DefaultConfig(),
		Devices: devices.DefaultConfig(), Voice: voice.DefaultConfig(),
		Admission:       admissionConfig{MaxVoiceSessions: 500, RetryAfterSeconds: 5},
		WebhookDelivery: webhook.DefaultConfig(), Tools: tools.DefaultConfig(), Inbox: inbox.DefaultConfig(),
		Audit: audit.DefaultConfig()}
}

// validate checks every section, so one start-up lists every bad key.
func (c *fileConfig) validate() error {
	var errs []error
	errs = append(errs, c.edge().Validate())
	for i, k := range c.Auth.Keys {
		key := fmt.Sprintf("auth.keys[%d].webhooks", i)
		errs = append(errs, webhook.ValidateEndpoints(key, k.Webhooks, false), webhook.ValidateTargets(key, k.Webhooks, c.WebhookDelivery, false))
	}
	for _, sec := range []struct {
		name string
		err  error
	}{
		{"router", c.Router.Validate()}, {"session", c.Session.Validate()}, {"chat", c.Chat.Validate()},
		{"rtc", c.RTC.Validate()}, {"safety", c.Safety.Validate()}, {"glasses", c.Glasses.Validate()},
		{"devices", c.Devices.Validate()}, {"voice", c.Voice.Validate()},
		{"webhook_delivery", c.WebhookDelivery.Validate()}, {"tools", c.Tools.Validate()}, {"inbox", c.Inbox.Validate()},
		{"audit", c.Audit.Validate()}, {"cluster", c.Cluster.Validate()},
	} {
		if sec.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sec.name, sec.err))
		}
	}
	if len(c.Webhooks) > 0 {
		if !c.DevMode() {
			errs = append(errs, errors.New("webhooks: top-level webhooks are for dev mode; with keys, use auth.keys[].webhooks"))
		} else if err := webhook.ValidateEndpoints("webhooks", c.Webhooks, true); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, webhook.ValidateTargets("webhooks", c.Webhooks, c.WebhookDelivery, true))
		}
	}
	if c.Cluster.Enabled() && c.Auth.TokenSecret == "" {
		errs = append(errs, errors.New("auth.token_secret_env: required with cluster: client tokens must verify on every node"))
	}
	if c.Admission.MaxVoiceSessions < 1 {
		errs = append(errs, errors.New("admission.max_voice_sessions: must be at least 1"))
	}
	if c.Admission.RetryAfterSeconds < 1 {
		errs = append(errs, errors.New("admission.retry_after_seconds: must be at least 1"))
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		errs = append(errs, fmt.Errorf("log_level: %q is not debug, info, warn or error", c.LogLevel))
	}
	return errors.Join(errs...)
}

// loadConfig builds the effective config: defaults, then the file, then
// VERA_* variables, then flags; secrets named by *_env keys are read last.
func loadConfig(path, listen string, getenv func(string) string) (fileConfig, []string, error) {
	cfg := defaultFileConfig()
	if path != "" {
		if err := loadConfigFile(path, &cfg); err != nil {
			return cfg, nil, err
		}
	}
	used, err := yamlconf.ApplyEnv(&cfg, envPrefix, getenv)
	if err != nil {
		return cfg, nil, err
	}
	if listen != "" {
		cfg.Listen = listen
	}
	for i := range cfg.Auth.Keys {
		k := &cfg.Auth.Keys[i]
		if k.SecretEnv != "" {
			k.Secret = getenv(k.SecretEnv)
		}
		resolveWebhookSecrets(k.Webhooks, getenv)
	}
	resolveWebhookSecrets(cfg.Webhooks, getenv)
	if cfg.Auth.TokenSecretEnv != "" {
		cfg.Auth.TokenSecret = getenv(cfg.Auth.TokenSecretEnv)
		if cfg.Auth.TokenSecret == "" {
			return cfg, nil, fmt.Errorf("auth.token_secret_env: environment variable %s is empty or unset", cfg.Auth.TokenSecretEnv)
		}
	}
	if cl := &cfg.Cluster; cl.Enabled() {
		if cl.NodeID == "" {
			cl.NodeID, _ = os.Hostname()
		}
		cl.Secret, cl.RedisPassword = getenv(cl.SecretEnv), getenv(cl.RedisPasswordEnv)
	}
	if cfg.RTC.TURN.SecretEnv != "" {
		cfg.RTC.TURN.Secret = getenv(cfg.RTC.TURN.SecretEnv) // rtc.Validate names an empty one
	}
	if cfg.DevMode() && cfg.RTC.UDPAddress == "" {
		// Dev mode serves loopback clients only; its media stays there too.
		cfg.RTC.UDPAddress = "127.0.0.1"
		cfg.RTC.IncludeLoopback = true
	}
	if err := cfg.validate(); err != nil {
		return cfg, nil, fmt.Errorf("invalid config:\n%w", err)
	}
	return cfg, used, nil
}

// resolveWebhookSecrets fills each endpoint's secret from its secret_env.
func resolveWebhookSecrets(eps []webhook.Endpoint, getenv func(string) string) {
	for i := range eps {
		if eps[i].SecretEnv != "" {
			eps[i].Secret = getenv(eps[i].SecretEnv)
		}
	}
}

// envPrefix starts every environment override: VERA_LISTEN,
// VERA_LIMITS_REQUESTS_PER_MINUTE, VERA_ROUTER_MAX_BODY_BYTES, …
const envPrefix = "VERA_"

// loadConfigFile decodes path strictly onto cfg.
func loadConfigFile(path string, cfg any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yamlconf.DecodeStrict(bytes.NewReader(b), cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
