// Package main is the vera-gateway command: it runs VERA's live-voice and glasses edge. It is the
// only place that reads flags, environment variables and files: it loads
// the YAML config strictly, applies VERA_* overrides, wires the packages and
// handles SIGINT/SIGTERM by draining.
//
//	vera-gateway [-config FILE] [-listen ADDR] [-print-config]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/chat"
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "vera-gateway:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// fileConfig is the whole YAML file: the HTTP edge's keys at the top level
// and one section per package.
type fileConfig struct {
	gateway.Config `yaml:",inline"`
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
	return fileConfig{Config: gateway.DefaultConfig(), LogLevel: "info",
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
	errs = append(errs, c.Config.Validate())
	for _, sec := range []struct {
		name string
		err  error
	}{
		{"router", c.Router.Validate()}, {"session", c.Session.Validate()}, {"chat", c.Chat.Validate()},
		{"rtc", c.RTC.Validate()}, {"safety", c.Safety.Validate()}, {"glasses", c.Glasses.Validate()},
		{"devices", c.Devices.Validate()}, {"voice", c.Voice.Validate()},
		{"webhook_delivery", c.WebhookDelivery.Validate()}, {"tools", c.Tools.Validate()}, {"inbox", c.Inbox.Validate()},
		{"audit", c.Audit.Validate()},
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
	for i, k := range c.Auth.Keys {
		errs = append(errs, webhook.ValidateTargets(fmt.Sprintf("auth.keys[%d].webhooks", i), k.Webhooks, c.WebhookDelivery, false))
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

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vera-gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML config `file` (none: embedded defaults)")
	listen := fs.String("listen", "", "listen `address`, overrides the config's listen")
	printConfig := fs.Bool("print-config", false, "print the effective config with secrets redacted, then exit")
	recordDir := fs.String("record-dir", "", "record every voice session (Ogg Opus both ways, events) into `DIR`/<session id>/, overriding voice.record_dir; records people's voices, see the README")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		return errUsage
	}
	cfg, used, err := loadConfig(*configPath, *listen, getenv)
	if err != nil {
		return err
	}
	if *recordDir != "" {
		cfg.Voice.RecordDir = *recordDir
		if err := cfg.Voice.Validate(); err != nil {
			return fmt.Errorf("-record-dir: voice: %w", err)
		}
	}
	if *printConfig {
		shown := cfg
		shown.Auth.Keys = append([]gateway.KeyConfig(nil), cfg.Auth.Keys...)
		for i := range shown.Auth.Keys {
			shown.Auth.Keys[i].Webhooks = append([]webhook.Endpoint(nil), shown.Auth.Keys[i].Webhooks...)
		}
		shown.Webhooks = append([]webhook.Endpoint(nil), cfg.Webhooks...)
		redact(reflect.ValueOf(&shown))
		enc := yaml.NewEncoder(stdout)
		enc.SetIndent(2)
		defer enc.Close()
		return enc.Encode(shown)
	}

	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	if cfg.Voice.RecordDir != "" {
		log.Warn("recording every voice session: people's voices are stored", "record_dir", cfg.Voice.RecordDir)
	}

	a, err := newApp(cfg, getenv, log)
	if err != nil {
		return err
	}
	defer a.close()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	httpSrv := &http.Server{Handler: a.srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	serveErr := make(chan error, 2)
	go func() { serveErr <- httpSrv.Serve(ln) }()

	var debugSrv *http.Server
	if cfg.DebugListen != "" {
		dln, err := net.Listen("tcp", cfg.DebugListen)
		if err != nil {
			_ = httpSrv.Close()
			return fmt.Errorf("debug_listen: %w", err)
		}
		debugSrv = &http.Server{Handler: gateway.DebugHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { serveErr <- debugSrv.Serve(dln) }()
		log.Info("debug listener", "addr", dln.Addr().String())
	}
	log.Info("vera-gateway listening", "addr", ln.Addr().String(), "dev_mode", cfg.DevMode(), "env_overrides", used,
		"web_client", "http://"+ln.Addr().String()+"/")

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	// Drain: readyz goes false, new sessions get 503, live ones get the grace.
	grace := time.Duration(cfg.ShutdownGraceMS) * time.Millisecond
	log.Info("draining", "grace", grace)
	a.srv.StartDrain()
	dctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	a.drain(dctx)
	sctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if err := httpSrv.Shutdown(sctx); err != nil {
		_ = httpSrv.Close()
	}
	if debugSrv != nil {
		_ = debugSrv.Close()
	}
	log.Info("stopped")
	return nil
}
