package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/webhook"
	"github.com/veraneural/vera-gateway/gateway/yamlconf"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vera.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func envMap(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigUnknownKeyNamesKeyAndLine(t *testing.T) {
	p := writeConfig(t, "listen: \"127.0.0.1:9\"\nlimits:\n  requests_per_minit: 5\n")
	_, _, err := loadConfig(p, "", envMap(nil))
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), `unknown key "requests_per_minit"`) {
		t.Fatalf("err = %v, want line 3 and the key", err)
	}
}

func TestConfigBadValueNamesKey(t *testing.T) {
	p := writeConfig(t, "limits:\n  requests_per_minute: 0\n")
	_, _, err := loadConfig(p, "", envMap(nil))
	if err == nil || !strings.Contains(err.Error(), "limits.requests_per_minute") {
		t.Fatalf("err = %v", err)
	}
	_, _, err = loadConfig("", "", envMap(map[string]string{"VERA_LIMITS_BODY_BYTES": "lots"}))
	if err == nil || !strings.Contains(err.Error(), "VERA_LIMITS_BODY_BYTES") {
		t.Fatalf("bad env value: %v", err)
	}
	p = writeConfig(t, "listen: [1, 2]\n")
	if _, _, err = loadConfig(p, "", envMap(nil)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("wrong type: %v", err)
	}
}

func TestConfigLayering(t *testing.T) {
	p := writeConfig(t, `listen: "127.0.0.1:9000"
auth:
  keys:
    - id: partner-a
      secret_env: PARTNER_A_KEY
      scopes: [sessions:write]
limits:
  requests_per_minute: 10
`)
	env := envMap(map[string]string{"VERA_LIMITS_REQUESTS_PER_MINUTE": "20", "PARTNER_A_KEY": "vera_sk_from_env_0123456789", "VERA_LOG_LEVEL": "debug"})
	cfg, used, err := loadConfig(p, "127.0.0.1:9100", env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9100" || cfg.Limits.RequestsPerMinute != 20 || cfg.Auth.Keys[0].Secret != "vera_sk_from_env_0123456789" || cfg.LogLevel != "debug" {
		t.Fatalf("layering wrong: %+v", cfg)
	}
	if strings.Join(used, ",") != "VERA_LIMITS_REQUESTS_PER_MINUTE,VERA_LOG_LEVEL" {
		t.Fatalf("used = %v", used)
	}
	// A missing secret env stops start-up naming it.
	_, _, err = loadConfig(p, "", envMap(nil))
	if err == nil || !strings.Contains(err.Error(), "PARTNER_A_KEY") {
		t.Fatalf("missing secret env: %v", err)
	}
}

func TestPrintConfigRedactsSecrets(t *testing.T) {
	p := writeConfig(t, `auth:
  keys:
    - id: partner-a
      secret: vera_sk_inline_secret_0123456789
      scopes: [audit:read]
  token_secret: "0123456789abcdef0123456789abcdef-token"
`)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"-config", p, "-print-config"}, envMap(nil), &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	s := out.String()
	if strings.Contains(s, "vera_sk_inline_secret") || strings.Contains(s, "abcdef-token") || strings.Count(s, yamlconf.Redacted) != 2 {
		t.Fatalf("secrets not redacted:\n%s", s)
	}
	if !strings.Contains(s, "partner-a") || !strings.Contains(s, "requests_per_minute: 60") {
		t.Fatalf("effective config incomplete:\n%s", s)
	}
}

func TestDevModeRefusesPublicListen(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"-listen", "0.0.0.0:0"}, envMap(nil), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("err = %v", err)
	}
}

// TestConfigValidatesKeyWebhooks: auth.keys[].webhooks is checked with the
// rest of the file, naming the key; partner keys never get plain http.
func TestConfigValidatesKeyWebhooks(t *testing.T) {
	cfg := testFileConfig()
	cfg.Listen = "0.0.0.0:8080"
	cfg.Auth.Keys = []keyConfig{{KeyConfig: gateway.KeyConfig{ID: "acme", Secret: "vera_sk_acme_0123456789", Scopes: gateway.AllScopes},
		Webhooks: []webhook.Endpoint{{URL: "https://partner.example/vera/events", Secret: "whsec_test_0123456789abcdef"}}}}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	cfg.Auth.Keys[0].Webhooks = append(cfg.Auth.Keys[0].Webhooks, webhook.Endpoint{URL: "http://partner.example/h", SecretEnv: "VERA_WH_UNSET"})
	err := cfg.validate()
	for _, want := range []string{"auth.keys[0].webhooks[1].url", "auth.keys[0].webhooks[1].secret_env"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate() = %v, want it to name %s", err, want)
		}
	}
}

// TestOneDisclosureIntervalKey: session.disclosure_every sets the AI
// disclosure's interval; the old safety.disclosure_interval, which nothing
// read, stops start-up with its name rather than being silently ignored.
func TestOneDisclosureIntervalKey(t *testing.T) {
	cfg, _, err := loadConfig(writeConfig(t, "session:\n  disclosure_every: 1h\n"), "", envMap(nil))
	if err != nil || cfg.Session.DisclosureEvery != time.Hour {
		t.Fatalf("disclosure_every: %v, %v", cfg.Session.DisclosureEvery, err)
	}
	_, _, err = loadConfig(writeConfig(t, "safety:\n  disclosure_interval: 1h\n"), "", envMap(nil))
	if err == nil || !strings.Contains(err.Error(), `unknown key "disclosure_interval"`) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v, want the unknown key named with its line", err)
	}
}

// TestConfigClassifyBudget: safety.classify_budget_ms sits beside the
// safety package's own keys, defaults to 300, is bounded, and takes the
// usual environment override.
func TestConfigClassifyBudget(t *testing.T) {
	cfg, _, err := loadConfig("", "", envMap(nil))
	if err != nil || cfg.Safety.ClassifyBudgetMs != 300 {
		t.Fatalf("default %d (%v)", cfg.Safety.ClassifyBudgetMs, err)
	}
	p := writeConfig(t, "safety:\n  default_region: GB\n  classify_budget_ms: 450\n")
	if cfg, _, err = loadConfig(p, "", envMap(nil)); err != nil || cfg.Safety.ClassifyBudgetMs != 450 || cfg.Safety.DefaultRegion != "GB" {
		t.Fatalf("from file: %+v (%v)", cfg.Safety, err)
	}
	if cfg, _, err = loadConfig(p, "", envMap(map[string]string{"VERA_SAFETY_CLASSIFY_BUDGET_MS": "0"})); err != nil || cfg.Safety.ClassifyBudgetMs != 0 {
		t.Fatalf("from env: %+v (%v)", cfg.Safety, err)
	}
	p = writeConfig(t, "safety:\n  classify_budget_ms: 60000\n")
	if _, _, err = loadConfig(p, "", envMap(nil)); err == nil || !strings.Contains(err.Error(), "safety.classify_budget_ms") {
		t.Fatalf("out of range: %v", err)
	}
}
