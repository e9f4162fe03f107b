package router

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDefaultConfigValidAndFillsSlots(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Models) != 0 || len(c.Slots) != 0 {
		t.Fatalf("DefaultConfig names models or slots itself: %v %v", c.Models, c.Slots)
	}
	c = c.Resolved()
	for _, s := range []string{SlotConverse, SlotSpeak, SlotSnappy, SlotEco} {
		if len(c.Slots[s]) != 1 {
			t.Errorf("slot %s not filled: %v", s, c.Slots[s])
		}
	}
	if sphinxBuilt && c.Slots[SlotListen][0] != EmbeddedListen {
		t.Errorf("listen slot %v", c.Slots[SlotListen])
	}
}

func TestConfigKeepsNamedSlotsAndFillsOthers(t *testing.T) {
	// As cmd/ does: the YAML section decoded over DefaultConfig().
	c := DefaultConfig()
	yamlSection := `
models:
  - name: local-llm
    provider: openai
    base_url: http://127.0.0.1:11434/v1
    model: llama3.2
    api_key_env: OPENAI_API_KEY
    context_window: 8192
    ttft_ms: 1500
    timeout_ms: 20000
slots:
  converse: [local-llm, embedded-companion]
`
	dec := yaml.NewDecoder(strings.NewReader(yamlSection))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r := c.withEmbedded()
	if got := strings.Join(r.Slots[SlotConverse], ","); got != "local-llm,"+EmbeddedConverse {
		t.Fatalf("converse slot %s", got)
	}
	if r.Slots[SlotSpeak][0] != EmbeddedSpeak || r.Slots[SlotSnappy][0] != EmbeddedConverse {
		t.Fatalf("unnamed slots not filled: %v", r.Slots)
	}
	if len(c.Slots) != 1 {
		t.Fatal("withEmbedded modified its receiver")
	}
}

func TestValidateNamesTheKey(t *testing.T) {
	base := func() Config {
		c := DefaultConfig()
		c.Models = []ModelConfig{{Name: "a", Provider: ProviderOpenAI, BaseURL: "http://x/v1", Model: "m"}}
		c.Slots = map[string][]string{SlotSnappy: {"a"}}
		return c
	}
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"unknown model in slot", func(c *Config) { c.Slots[SlotSnappy] = []string{"nope"} }, `router.slots.snappy[0]: unknown model "nope"`},
		{"empty slot", func(c *Config) { c.Slots[SlotEco] = []string{} }, "router.slots.eco: empty slot"},
		{"unknown provider", func(c *Config) { c.Models[0].Provider = "gpt" }, `router.models[0].provider: unknown provider "gpt"`},
		{"duplicate", func(c *Config) { c.Models = append(c.Models, c.Models[0]) }, `router.models[1].name: duplicate model "a"`},
		{"no base url", func(c *Config) { c.Models[0].BaseURL = "" }, "router.models[0].base_url"},
		{"bad url", func(c *Config) { c.Models[0].BaseURL = "ftp://x" }, "router.models[0].base_url"},
		{"no model id", func(c *Config) { c.Models[0].Model = "" }, "router.models[0].model"},
		{"bad name", func(c *Config) { c.Models[0].Name = "a b"; c.Slots[SlotSnappy] = []string{"a b"} }, "router.models[0].name"},
		{"ttft over timeout", func(c *Config) { c.Models[0].TTFTMs, c.Models[0].TimeoutMs = 5000, 1000 }, "router.models[0].ttft_ms"},
		{"output over window", func(c *Config) { c.Models[0].ContextWindow, c.Models[0].MaxOutputTokens = 100, 100 }, "router.models[0].max_output_tokens"},
		{"audio format", func(c *Config) { c.Models[0].AudioFormat = "mp3" }, "router.models[0].audio_format"},
		{"wrong capability", func(c *Config) {
			c.Models = append(c.Models, ModelConfig{Name: "v", Provider: ProviderVERA, BaseURL: "https://api.veraneural.com/v1"})
			c.Slots[SlotSpeak] = []string{"v"}
		}, `router.slots.speak[0]: model "v" (provider vera) cannot serve slot "speak"`},
		{"listed twice", func(c *Config) { c.Slots[SlotSnappy] = []string{"a", "a"} }, `router.slots.snappy[1]: model "a" listed twice`},
		{"retries", func(c *Config) { c.Retry.MaxRetries = -1 }, "router.retry.max_retries"},
		{"jitter", func(c *Config) { c.Retry.Jitter = 1 }, "router.retry.jitter"},
		{"breaker", func(c *Config) { c.Breaker.Failures = 0 }, "router.breaker.failures"},
		{"body", func(c *Config) { c.MaxBodyBytes = 10 }, "router.max_body_bytes"},
		{"espeak", func(c *Config) { c.Espeak.Voice = "" }, "router.espeak.voice"},
	}
	for _, tc := range cases {
		c := base()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("base config invalid: %v", err)
	}
}

func TestEstimateIsConservative(t *testing.T) {
	msgs := []Message{{Role: RoleUser, Text: strings.Repeat("a", 300)}}
	if n := estimateTokens("", msgs, 0); n < 100 {
		t.Fatalf("300 bytes estimated at %d tokens, want >= 100", n)
	}
	if got := outputTokens(50, ModelConfig{MaxOutputTokens: 20}); got != 20 {
		t.Fatalf("request bound not capped by the model's: %d", got)
	}
	if got := outputTokens(0, ModelConfig{}); got != defaultOutputToken {
		t.Fatalf("default output %d", got)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := newFakeClock().Now()
	cases := map[string]int{"": 0, "3": 3, "-1": 0, "soon": 0, now.Add(7e9).UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"): 7}
	for in, want := range cases {
		if got := retryAfter(in, now); int(got.Seconds()) != want {
			t.Errorf("Retry-After %q = %v, want %ds", in, got, want)
		}
	}
}
