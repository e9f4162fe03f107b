package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Attacks on the command, each with the refusal it must get. THREATS.md
// lists them with their mitigations.

// TestAbusePrintConfigRedactsEverySecret: -print-config output is pasted
// into tickets and chats. Every secret-shaped field is redacted, found by
// key name wherever the section lives (TURN credentials, keys, token
// secrets), and so is the userinfo of every URL (user:pass@host), while
// the rest of the effective config stays readable.
func TestAbusePrintConfigRedactsEverySecret(t *testing.T) {
	p := writeConfig(t, `auth:
  keys:
    - id: partner-a
      secret: vera_sk_inline_secret_0123456789
      scopes: [audit:read]
  token_secret: "0123456789abcdef0123456789abcdef-token"
rtc:
  ice_servers:
    - urls: ["turn:turn.example.com:3478", "stun:stun.example.com:3478"]
      username: alice
      credential: turn-credential-123
router:
  models:
    - name: remote
      provider: openai
      base_url: "https://apiuser:apipass@models.example.com/v1"
      model: m
`)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"-config", p, "-print-config"}, envMap(nil), &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	s := out.String()
	for _, secret := range []string{"vera_sk_inline_secret", "abcdef-token", "turn-credential-123", "apipass", "apiuser"} {
		if strings.Contains(s, secret) {
			t.Errorf("-print-config shows %q:\n%s", secret, s)
		}
	}
	for _, kept := range []string{"partner-a", "turn:turn.example.com:3478", "stun:stun.example.com:3478",
		"https://[redacted]@models.example.com/v1", "username: alice", "token_ttl_seconds: 60"} {
		if !strings.Contains(s, kept) {
			t.Errorf("-print-config lost %q:\n%s", kept, s)
		}
	}
}
