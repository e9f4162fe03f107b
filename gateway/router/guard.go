package router

import (
	"context"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/veraneural/vera-gateway/safety"
)

// guardModel is a chat-completions model used as a classifier, in the Llama
// Guard convention: the user's turn goes in as the only user message (the
// server's chat template wraps it in the guard prompt), and the answer's
// first word is "safe" or "unsafe", followed by category codes (S11 is
// suicide and self-harm in Llama Guard 3 and 4). Any OpenAI-compatible
// server (vLLM, llama.cpp, Ollama) will do.
type guardModel struct {
	name, model, url, key string
	env                   *providerEnv
	codes                 map[string]safety.Level // upper-case code → level
}

func newGuard(cfg ModelConfig, key string, env *providerEnv) *guardModel {
	raw := DefaultGuardCodes()
	maps.Copy(raw, cfg.Classifier.Codes)
	codes := make(map[string]safety.Level, len(raw))
	for c, l := range raw {
		lvl, _ := safety.ParseLevel(l) // validated with the config
		codes[strings.ToUpper(strings.TrimSpace(c))] = lvl
	}
	return &guardModel{name: cfg.Name, model: cfg.Model, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		key: key, env: env, codes: codes}
}

// guardRequest is the whole request: the model, the one user message,
// greedy decoding and a short answer. No user field, no ids.
type guardRequest struct {
	Model       string         `json:"model"`
	Messages    []guardMessage `json:"messages"`
	Temperature float64        `json:"temperature"`
	MaxTokens   int            `json:"max_tokens"`
	Stream      bool           `json:"stream"`
}

type guardMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type guardResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

func (p *guardModel) classify(ctx context.Context, text string) (safety.Level, []string, error) {
	var out guardResponse
	req := guardRequest{Model: p.model, Messages: []guardMessage{{Role: RoleUser, Content: text}}, MaxTokens: 20}
	if err := classifierPost(ctx, p.env, p.url, p.key, req, &out); err != nil {
		return safety.LevelNone, nil, err
	}
	if len(out.Choices) == 0 || out.Choices[0].Message.Content == nil {
		return safety.LevelNone, nil, perr(KindProtocol, "guard: no choices[0].message.content")
	}
	return parseGuardVerdict(*out.Choices[0].Message.Content, p.name, p.codes)
}

// parseGuardVerdict reads "safe", or "unsafe" and its codes (on the same
// or the following lines, comma or space separated). unsafe without a code
// is elevated; a code not in codes counts as nothing. Anything else is a
// protocol fault: a guard that does not answer in form judged nothing.
func parseGuardVerdict(answer, name string, codes map[string]safety.Level) (safety.Level, []string, error) {
	words := strings.FieldsFunc(answer, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' })
	if len(words) == 0 {
		return safety.LevelNone, nil, perr(KindProtocol, "guard: empty answer")
	}
	switch strings.ToLower(strings.Trim(words[0], ".:")) {
	case "safe":
		return safety.LevelNone, nil, nil
	case "unsafe":
	default:
		return safety.LevelNone, nil, perr(KindProtocol, "guard: answer starts with neither safe nor unsafe")
	}
	if len(words) == 1 {
		return safety.LevelElevated, []string{name + ":unsafe"}, nil
	}
	level, reasons := safety.LevelNone, []string(nil)
	for _, w := range words[1:] {
		code := strings.ToUpper(strings.Trim(w, ".:()[]"))
		if l := codes[code]; l > safety.LevelNone {
			level = safety.MaxLevel(level, l)
			if r := name + ":" + code; !slices.Contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
	}
	slices.Sort(reasons)
	return level, reasons, nil
}
