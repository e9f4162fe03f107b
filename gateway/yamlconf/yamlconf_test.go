package yamlconf

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type inner struct {
	Budget time.Duration `yaml:"budget"`
	APIKey string        `yaml:"api_key"`
	KeyEnv string        `yaml:"api_key_env"`
	URL    string        `yaml:"url"`
}

type cfg struct {
	Listen string `yaml:"listen"`
	Inner  inner  `yaml:"inner"`
	Flat   inner  `yaml:",inline"`
	N      int    `yaml:"n"`
}

// DecodeStrict names unknown keys with their line; ApplyEnv sets scalars
// by key path (inline structs add none) and reports what it used; Redact
// blanks secret-shaped keys and URL userinfo, never the *_env names.
func TestDecodeEnvRedact(t *testing.T) {
	var c cfg
	if err := DecodeStrict(strings.NewReader("listen: :1\nnope: 1\n"), &c); err == nil || !strings.Contains(err.Error(), `line 2: unknown key "nope"`) {
		t.Fatalf("unknown key: %v", err)
	}
	if err := DecodeStrict(strings.NewReader(""), &c); err != nil {
		t.Fatalf("empty file: %v", err)
	}
	env := map[string]string{"VERA_LISTEN": ":8080", "VERA_INNER_BUDGET": "300ms", "VERA_N": "7", "VERA_URL": "https://u:p@h.example/v1"}
	used, err := ApplyEnv(&c, "VERA_", func(k string) string { return env[k] })
	if err != nil || len(used) != 4 || c.Listen != ":8080" || c.Inner.Budget != 300*time.Millisecond || c.N != 7 || c.Flat.URL == "" {
		t.Fatalf("ApplyEnv: %v %v %+v", used, err, c)
	}
	if _, err := ApplyEnv(&c, "VERA_", func(k string) string { return map[string]string{"VERA_N": "x"}[k] }); err == nil || !strings.Contains(err.Error(), "VERA_N") {
		t.Fatalf("bad integer: %v", err)
	}
	c.Inner.APIKey, c.Inner.KeyEnv = "sk-secret", "OPENAI_API_KEY"
	Redact(&c)
	if c.Inner.APIKey != Redacted || c.Inner.KeyEnv != "OPENAI_API_KEY" || c.Flat.URL != "https://[redacted]@h.example/v1" {
		t.Fatalf("Redact: %+v", c)
	}
}

func TestRedactUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@h.example/x?q=1":  "https://[redacted]@h.example/x?q=1",
		"redis://:pw@10.0.0.1:6379/0":  "redis://[redacted]@10.0.0.1:6379/0",
		"turns:u:p@turn.example:5349":  "turns:[redacted]@turn.example:5349",
		"https://h.example/path@x":     "https://h.example/path@x",
		"127.0.0.1:8080":               "127.0.0.1:8080",
		"plain text":                   "plain text",
		"https://h.example/?to=a@b.cd": "https://h.example/?to=a@b.cd",
	} {
		if got := redactUserinfo(in); got != want {
			t.Errorf("redactUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
