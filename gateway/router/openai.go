package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// openAI speaks the OpenAI-compatible HTTP API: /chat/completions (SSE
// streaming), /audio/transcriptions and /audio/speech.
type openAI struct {
	cfg  ModelConfig
	key  string
	env  *providerEnv
	base string // base_url without a trailing slash
}

func newOpenAI(cfg ModelConfig, key string, env *providerEnv) *openAI {
	return &openAI{cfg: cfg, key: key, env: env, base: strings.TrimRight(cfg.BaseURL, "/")}
}

func (p *openAI) newRequest(ctx context.Context, path, contentType string, body io.Reader, c *call) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+path, body)
	if err != nil {
		return nil, &ProviderError{Kind: KindInternal, Err: err}
	}
	req.Header.Set("Content-Type", contentType)
	if p.key != "" {
		req.Header.Set("Authorization", "Bearer "+p.key)
	}
	if c != nil && c.key != "" {
		req.Header.Set("Idempotency-Key", c.key)
	}
	return req, nil
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model     string        `json:"model"`
	Messages  []chatMessage `json:"messages"`
	Stream    bool          `json:"stream"`
	MaxTokens int           `json:"max_tokens,omitempty"`
	Tools     []chatTool    `json:"tools,omitempty"`
}

// chatTool is one entry of the request's "tools" (OpenAI tools format).
type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// chatToolCall is a tool call, whole (a non-streamed completion) or a
// streamed piece of one: the first piece of call Index carries its id and
// name, later pieces more of its arguments.
type chatToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatChunk is one streamed chunk, or (Message set) a whole completion from
// a server that ignored stream:true.
type chatChunk struct {
	Choices []struct {
		Delta struct {
			Content   string         `json:"content"`
			ToolCalls []chatToolCall `json:"tool_calls"`
		} `json:"delta"`
		Message struct {
			Content   string         `json:"content"`
			ToolCalls []chatToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

func (p *openAI) complete(ctx context.Context, c *call, tr textRequest, delta func(string) error) (Reply, error) {
	body := chatRequest{Model: p.cfg.Model, Stream: true, MaxTokens: tr.MaxTokens}
	if tr.System != "" {
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: tr.System})
	}
	for _, m := range tr.Messages {
		body.Messages = append(body.Messages, chatMessage{Role: m.Role, Content: m.Text})
	}
	for _, t := range tr.Tools {
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	calls := newToolCalls(tr.Tools)
	buf, err := json.Marshal(body)
	if err != nil {
		return Reply{}, &ProviderError{Kind: KindInternal, Err: err}
	}
	req, err := p.newRequest(ctx, "/chat/completions", "application/json", bytes.NewReader(buf), c)
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := do(ctx, p.env.client, req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return Reply{}, httpFailure(resp, p.env.maxBody, p.env.clock.Now())
	}
	if mediaType(resp) == "application/json" {
		var whole chatChunk
		if err := decodeJSON(resp, p.env.maxBody, &whole); err != nil {
			return Reply{}, err
		}
		if len(whole.Choices) == 0 {
			return Reply{}, perr(KindProtocol, "completion without choices")
		}
		text := whole.Choices[0].Message.Content
		for _, tc := range whole.Choices[0].Message.ToolCalls {
			calls.add(tc)
		}
		return p.finish(c, delta, text, false, calls)
	}
	if err := wantType(resp, "text/event-stream"); err != nil {
		return Reply{}, err
	}
	var text strings.Builder
	finished := false
	sse := newSSEReader(&boundedReader{r: resp.Body, n: p.env.maxBody})
	for {
		data, err := sse.next()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if finished {
				break // some servers end after finish_reason without [DONE]
			}
			return Reply{}, perr(KindConnection, "stream ended before [DONE] after %d bytes of reply", text.Len())
		}
		if err != nil {
			if ctx.Err() != nil {
				return Reply{}, context.Cause(ctx)
			}
			if errors.Is(err, errSSELine) {
				return Reply{}, perr(KindProtocol, "stream: %w", err)
			}
			return Reply{}, readErr(err, "stream")
		}
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			break
		}
		var chunk chatChunk
		if err := json.Unmarshal(data, &chunk); err != nil {
			return Reply{}, perr(KindProtocol, "malformed stream chunk: %w", err)
		}
		if chunk.Error != nil {
			return Reply{}, &ProviderError{Kind: KindUnavailable, Type: chunk.Error.Type, Err: errors.New("stream error: " + chunk.Error.Message)}
		}
		for _, ch := range chunk.Choices {
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				finished = true
			}
			for _, tc := range ch.Delta.ToolCalls {
				calls.add(tc)
				// A tool call is useful output: the turn is bound to
				// this model from here on, like a text delta.
				if !c.first() {
					return Reply{}, errAbandoned
				}
			}
			if ch.Delta.Content == "" {
				continue
			}
			text.WriteString(ch.Delta.Content)
			if err := emitDelta(c, delta, ch.Delta.Content); err != nil {
				return Reply{}, err
			}
		}
	}
	return p.finish(c, delta, text.String(), true, calls)
}

// toolCallOnlyMessage is the reply to a turn in which the model only called
// tools: the person sees and hears the proposals with it, and nothing is
// done until they approve.
const toolCallOnlyMessage = "I can do that once you approve it."

// finish turns the accumulated text and tool calls into the reply. text was
// already streamed when streamed is true.
func (p *openAI) finish(c *call, delta func(string) error, text string, streamed bool, calls *toolCalls) (Reply, error) {
	acts := calls.actions(p.env.clock.Now(), p.env.log)
	if strings.TrimSpace(text) == "" && len(acts) > 0 {
		text, streamed = toolCallOnlyMessage, false
	}
	if !streamed {
		if err := emitDelta(c, delta, text); err != nil {
			return Reply{}, err
		}
	}
	return Reply{Message: text, ProposedActions: acts}, nil
}
