package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

const turnYAML = `rtc:
  tcp_port: 7881
  turn:
    urls: ["turn:turn.example.com:3478?transport=udp", "turns:turn.example.com:5349?transport=tcp"]
    secret_env: TURN_SECRET
    ttl_seconds: 3600
`

// TestConfigTURNSecretFromEnv: cmd reads rtc.turn.secret_env into the rtc
// config; a missing one stops start-up naming it; the secret is never
// printed.
func TestConfigTURNSecretFromEnv(t *testing.T) {
	p := writeConfig(t, turnYAML)
	const secret = "coturn-static-auth-secret-from-env-42"
	cfg, _, err := loadConfig(p, "", envMap(map[string]string{"TURN_SECRET": secret}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RTC.TURN.Secret != secret || cfg.RTC.TCPPort != 7881 || cfg.RTC.TURN.TTLSeconds != 3600 || len(cfg.RTC.TURN.URLs) != 2 {
		t.Fatalf("rtc config %+v", cfg.RTC)
	}
	_, _, err = loadConfig(p, "", envMap(nil))
	if err == nil || !strings.Contains(err.Error(), "rtc.turn.secret_env") || !strings.Contains(err.Error(), "TURN_SECRET") {
		t.Fatalf("missing TURN secret: %v", err)
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"-config", p, "-print-config"}, envMap(map[string]string{"TURN_SECRET": secret}), &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if strings.Contains(out.String(), secret) || !strings.Contains(out.String(), "secret_env: TURN_SECRET") || !strings.Contains(out.String(), "tcp_port: 7881") {
		t.Fatalf("print-config:\n%s", out.String())
	}
	// The secret has no YAML key: it cannot sit in the file.
	bad := writeConfig(t, "rtc:\n  turn:\n    urls: [\"turn:x\"]\n    secret: inline\n")
	if _, _, err := loadConfig(bad, "", envMap(nil)); err == nil || !strings.Contains(err.Error(), `unknown key "secret"`) {
		t.Fatalf("inline turn secret: %v", err)
	}
}
