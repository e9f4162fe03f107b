package router

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestLogValueNamesWhatAnswers: the start-up log line names each slot's
// models in order with provider, model and host — never a key, userinfo
// or path.
func TestLogValueNamesWhatAnswers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Models = []ModelConfig{
		{Name: "lab-llm", Provider: ProviderOpenAI, BaseURL: "http://user:pw@127.0.0.1:11434/v1/secret-path", Model: "llama3", APIKeyEnv: "LAB_KEY"},
	}
	cfg.Slots = map[string][]string{SlotConverse: {"lab-llm", EmbeddedConverse}}
	r, err := New(cfg, func(string) string { return "sk-do-not-log" }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("answering", "slots", r)
	line := b.String()
	for _, want := range []string{
		`slots.converse="lab-llm (openai llama3 at 127.0.0.1:11434), embedded-companion (companion)"`,
		`slots.speak="embedded-speak (espeak en-us 160 wpm)"`,
	} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %s:\n%s", want, line)
		}
	}
	if sphinxBuilt && !strings.Contains(line, `slots.listen="embedded-listen (pocketsphinx en-us)"`) {
		t.Errorf("log line lacks the listen slot:\n%s", line)
	}
	for _, secret := range []string{"sk-do-not-log", "pw", "secret-path", "user"} {
		if strings.Contains(line, secret) {
			t.Errorf("log line shows %q:\n%s", secret, line)
		}
	}
	if i, j := strings.Index(line, "slots.listen"), strings.Index(line, "slots.converse"); sphinxBuilt && (i < 0 || i > j) {
		t.Errorf("listen is not described first:\n%s", line)
	}
}
