package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

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
	used, err := applyEnv(&cfg, getenv)
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

// decodeStrict decodes one YAML document onto cfg (which holds the
// defaults). Unknown keys are errors naming the key and its line.
func decodeStrict(r io.Reader, cfg any) error {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file keeps the defaults
		}
		return cleanYAMLError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("config holds more than one YAML document")
	}
	return nil
}

// cleanYAMLError turns yaml.v3's "field x not found in type main.fileConfig"
// into "line N: unknown key x".
func cleanYAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if before, after, ok := strings.Cut(m, ": field "); ok {
			if name, _, ok := strings.Cut(after, " not found in type"); ok {
				m = before + ": unknown key " + strconv.Quote(name)
			}
		}
		msgs[i] = m
	}
	return errors.New(strings.Join(msgs, "; "))
}

// loadConfigFile decodes path strictly onto cfg.
func loadConfigFile(path string, cfg any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := decodeStrict(bytes.NewReader(b), cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// applyEnv sets every scalar field of cfg (a pointer to a struct) from
// VERA_<PATH>, where PATH is the field's YAML key path joined by "_" in
// upper case. Lists and maps are configured in the file only. It returns
// the variables it used, for the start-up log.
func applyEnv(cfg any, getenv func(string) string) ([]string, error) {
	var used []string
	err := walkScalars(reflect.ValueOf(cfg).Elem(), nil, func(path []string, v reflect.Value) error {
		name := envPrefix + strings.ToUpper(strings.Join(path, "_"))
		s := getenv(name)
		if s == "" {
			return nil
		}
		if err := setScalar(v, s); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		used = append(used, name)
		return nil
	})
	return used, err
}

// walkScalars calls fn for every settable scalar field under v with its
// YAML key path. Inline structs add no path element.
func walkScalars(v reflect.Value, path []string, fn func([]string, reflect.Value) error) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		if strings.Contains(opts, "inline") {
			if err := walkScalars(fv, path, fn); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		p := append(append([]string(nil), path...), name)
		switch fv.Kind() {
		case reflect.Struct:
			if err := walkScalars(fv, p, fn); err != nil {
				return err
			}
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			if err := fn(p, fv); err != nil {
				return err
			}
		}
	}
	return nil
}

func setScalar(v reflect.Value, s string) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not a boolean", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("%q is not a duration", s)
			}
			v.SetInt(int64(d))
			return nil
		}
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a non-negative integer", s)
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(s, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		v.SetFloat(n)
	}
	return nil
}

// redacted is what -print-config shows in place of a secret.
const redacted = "[redacted]"

// redact blanks every secret in cfg, found generically so that a section
// added later is covered without a list to keep: every non-empty string
// whose YAML key is secret-shaped (see isSecretKey), and the userinfo of
// every URL-shaped string (user:pass@host), in structs, slices and maps
// alike. It works on cfg in place (maps are replaced by redacted copies):
// call it on a copy.
func redact(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			redact(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			redactNamed(v.Field(i), name)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			redactNamed(v.Index(i), "")
		}
	case reflect.Map:
		if v.IsNil() || !v.CanSet() {
			return
		}
		cp := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			name := ""
			if it.Key().Kind() == reflect.String {
				name = it.Key().String()
			}
			redactNamed(e, name)
			cp.SetMapIndex(it.Key(), e)
		}
		v.Set(cp)
	}
}

// redactNamed redacts one value held under the YAML key name ("" for a
// list element).
func redactNamed(fv reflect.Value, name string) {
	if fv.Kind() != reflect.String {
		redact(fv)
		return
	}
	switch {
	case fv.String() == "" || !fv.CanSet():
	case isSecretKey(name):
		fv.SetString(redacted)
	default:
		fv.SetString(redactUserinfo(fv.String()))
	}
}

// redactUserinfo replaces the userinfo of a URL-shaped string
// (scheme://user:pass@host, turn:user:pass@host) with [redacted].
func redactUserinfo(s string) string {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/@ ") {
		return s
	}
	authority := strings.TrimPrefix(rest, "//")
	end := strings.IndexAny(authority, "/?#")
	if end < 0 {
		end = len(authority)
	}
	at := strings.LastIndexByte(authority[:end], '@')
	if at < 0 {
		return s
	}
	prefix := s[:len(s)-len(authority)]
	return prefix + redacted + authority[at:]
}

// isSecretKey reports whether a YAML key names a secret: anything that
// says secret, password, passphrase, credential, token (not its ttl
// settings), private or api key, or authorization — never the *_env
// names, which only say where a secret is read from.
func isSecretKey(name string) bool {
	n := strings.ToLower(name)
	if strings.HasSuffix(n, "_env") || strings.HasSuffix(n, "_seconds") {
		return false
	}
	for _, w := range []string{"secret", "password", "passwd", "passphrase", "credential", "token", "api_key", "apikey", "private_key", "authorization"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
