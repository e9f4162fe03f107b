package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

var sendTool = Tool{Name: "send_message", Description: "Send a text message to one of the person's contacts. Only after approval.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"text":{"type":"string"}},"required":["to","text"]}`)}

var bookTool = Tool{Name: "book_slot", Parameters: json.RawMessage(`{"type":"object"}`)}

// toolServer is an OpenAI-compatible chat completions endpoint that
// records each request body and answers with the raw SSE events given.
type toolServer struct {
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
	events []string
}

func (s *toolServer) handler(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]json.RawMessage
	_ = json.Unmarshal(b, &body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range s.events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func toolDelta(index int, id, name, args string) string {
	call := map[string]any{"index": index, "function": map[string]string{"arguments": args}}
	if id != "" {
		call["id"], call["type"] = id, "function"
		call["function"].(map[string]string)["name"] = name
	}
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"delta": map[string]any{"tool_calls": []any{call}}, "finish_reason": nil}}})
	return string(b)
}

func converseSlot(models ...ModelConfig) Config {
	c := textConfig(models...)
	c.Slots[SlotConverse] = c.Slots[SlotSnappy]
	return c
}

// TestOpenAIToolCallsBecomeProposals: the request offers the tools in the
// OpenAI format; streamed tool_calls (arguments split across deltas, two
// calls interleaved) become proposals with the tool's name as type, a title
// and summary from its description and the joined arguments as input; a
// call to a tool never offered and one with broken arguments are dropped.
func TestOpenAIToolCallsBecomeProposals(t *testing.T) {
	ts := &toolServer{events: []string{
		`{"choices":[{"delta":{"role":"assistant","content":"Sure, "},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"content":"I can text Sam."},"finish_reason":null}]}`,
		toolDelta(0, "call_a", "send_message", `{"to":`),
		toolDelta(1, "call_b", "book_slot", ``),
		toolDelta(0, "", "", `"sam","text":"running `),
		toolDelta(0, "", "", `late"}`),
		toolDelta(2, "call_c", "wire_money", `{"amount":5}`),
		toolDelta(3, "call_d", "send_message", `{"to":"sam",`),
		`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
	}}
	s, _ := server(t, ts.handler)
	r, _, _ := testRouter(t, converseSlot(openAIModel("chat", s.URL)), nil)
	var deltas strings.Builder
	rep, err := r.Converse(tctx(t), ConverseRequest{Text: "tell Sam I'm late", Tools: []Tool{sendTool, bookTool}}, func(d string) error {
		deltas.WriteString(d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Message != "Sure, I can text Sam." || deltas.String() != rep.Message {
		t.Fatalf("message %q, deltas %q", rep.Message, deltas.String())
	}
	var offered []chatTool
	if err := json.Unmarshal(ts.bodies[0]["tools"], &offered); err != nil || len(offered) != 2 {
		t.Fatalf("tools in request: %s (%v)", ts.bodies[0]["tools"], err)
	}
	if offered[0].Type != "function" || offered[0].Function.Name != "send_message" || !strings.Contains(string(offered[0].Function.Parameters), `"required":["to","text"]`) {
		t.Fatalf("offered %+v", offered[0])
	}
	acts := rep.ProposedActions
	if len(acts) != 2 {
		t.Fatalf("proposals %+v, want send_message and book_slot", acts)
	}
	send, book := acts[0], acts[1]
	if send.Type != "send_message" || string(send.Input) != `{"to":"sam","text":"running late"}` ||
		send.Title != "Send a text message to one of the person's contacts" || send.Summary != sendTool.Description {
		t.Fatalf("send proposal %+v (input %s)", send, send.Input)
	}
	if book.Type != "book_slot" || string(book.Input) != `{}` || book.Title != "Book slot" {
		t.Fatalf("book proposal %+v (input %s)", book, book.Input)
	}
	if !strings.HasPrefix(send.ID, "act_") || send.ID == book.ID {
		t.Fatalf("ids %q %q: fresh and distinct", send.ID, book.ID)
	}
	if want := newFakeClock().Now().Add(24 * time.Hour); !send.ExpiresAt.Equal(want) {
		t.Fatalf("expires %v, want %v", send.ExpiresAt, want)
	}
}

// TestOpenAIToolCallOnlyReply: a reply that only calls a tool still has a
// message (so the turn is not empty) and it says nothing happens before
// approval; without tools offered, no "tools" key is sent.
func TestOpenAIToolCallOnlyReply(t *testing.T) {
	ts := &toolServer{events: []string{
		toolDelta(0, "call_a", "send_message", `{"to":"sam","text":"hi"}`),
		`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
	}}
	s, _ := server(t, ts.handler)
	r, _, _ := testRouter(t, converseSlot(openAIModel("chat", s.URL)), nil)
	var deltas strings.Builder
	rep, err := r.Converse(tctx(t), ConverseRequest{Text: "text sam hi", Tools: []Tool{sendTool}}, func(d string) error {
		deltas.WriteString(d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Message != toolCallOnlyMessage || deltas.String() != toolCallOnlyMessage || len(rep.ProposedActions) != 1 {
		t.Fatalf("reply %+v deltas %q", rep, deltas.String())
	}
	ts.events = []string{`{"choices":[{"delta":{"content":"Hello."},"finish_reason":"stop"}]}`}
	if _, err := r.Converse(tctx(t), ConverseRequest{Text: "hello"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := ts.bodies[1]["tools"]; ok {
		t.Fatalf("tools sent although none offered: %s", ts.bodies[1]["tools"])
	}
}

// TestOpenAIToolCallsWholeCompletion: a server that ignores stream:true
// answers with one JSON completion whose message carries tool_calls.
func TestOpenAIToolCallsWholeCompletion(t *testing.T) {
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"send_message","arguments":"{\"to\":\"sam\",\"text\":\"hi\"}"}}]},"finish_reason":"tool_calls"}]}`)
	})
	r, _, _ := testRouter(t, converseSlot(openAIModel("chat", s.URL)), nil)
	rep, err := r.Converse(tctx(t), ConverseRequest{Text: "text sam hi", Tools: []Tool{sendTool}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.ProposedActions) != 1 || string(rep.ProposedActions[0].Input) != `{"to":"sam","text":"hi"}` || rep.Message != toolCallOnlyMessage {
		t.Fatalf("reply %+v", rep)
	}
}

// TestToolCallsBounded: pieces without an index continue the last call; a
// flood of calls is cut at maxToolCalls.
func TestToolCallsBounded(t *testing.T) {
	tc := newToolCalls([]Tool{bookTool})
	piece := func(id, args string) chatToolCall {
		var c chatToolCall
		c.ID, c.Function.Arguments = id, args
		if id != "" {
			c.Function.Name = "book_slot"
		}
		return c
	}
	tc.add(piece("c1", `{"at":`))
	tc.add(piece("", `"9am"}`))
	for i := range 20 {
		tc.add(piece(fmt.Sprintf("x%d", i), `{}`))
	}
	acts := tc.actions(time.Unix(0, 0), slog.New(slog.DiscardHandler))
	if len(acts) != maxToolCalls || string(acts[0].Input) != `{"at":"9am"}` {
		t.Fatalf("%d actions, first input %s", len(acts), acts[0].Input)
	}
}

func TestActionTitle(t *testing.T) {
	for _, c := range []struct{ desc, name, want string }{
		{"Book a table. Needs a time.", "book", "Book a table"},
		{"", "send_text_message", "Send text message"},
		{"  Reserve   a ride  ", "ride", "Reserve a ride"},
		{strings.Repeat("word ", 30), "w", strings.TrimSpace(strings.Repeat("word ", 12))},
	} {
		if got := actionTitle(Tool{Name: c.name, Description: c.desc}); got != c.want {
			t.Errorf("actionTitle(%q, %q) = %q, want %q", c.desc, c.name, got, c.want)
		}
	}
}

// FuzzToolCalls: any sequence of streamed chunks assembles into proposals
// without a panic, and every proposal names an offered tool, carries one
// JSON object as input and a title within bounds.
func FuzzToolCalls(f *testing.F) {
	f.Add([]byte(toolDelta(0, "call_a", "send_message", `{"to":`) + "\n" + toolDelta(0, "", "", `"sam"}`)))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"id":"x","function":{"name":"book_slot","arguments":"[1]"}}]}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":-1,"function":{"name":"send_message","arguments":"{}"}},{"index":7}]}}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		tc := newToolCalls([]Tool{sendTool, bookTool})
		for line := range bytes.SplitSeq(in, []byte("\n")) {
			var chunk chatChunk
			if json.Unmarshal(line, &chunk) != nil {
				continue
			}
			for _, ch := range chunk.Choices {
				for _, d := range ch.Delta.ToolCalls {
					tc.add(d)
				}
			}
		}
		acts := tc.actions(time.Unix(0, 0), nil)
		if len(acts) > maxToolCalls {
			t.Fatalf("%d actions", len(acts))
		}
		for _, a := range acts {
			if a.Type != sendTool.Name && a.Type != bookTool.Name {
				t.Fatalf("action for a tool never offered: %q", a.Type)
			}
			if !isJSONObject(a.Input) {
				t.Fatalf("input %q is not a JSON object", a.Input)
			}
			if a.Title == "" || len([]rune(a.Title)) > maxActionTitle {
				t.Fatalf("title %q", a.Title)
			}
		}
	})
}

// TestToolsCountAgainstContextWindow: offered tools travel in the request,
// so a model whose window cannot hold them with the turn is skipped.
func TestToolsCountAgainstContextWindow(t *testing.T) {
	ts := &toolServer{events: []string{`{"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}`}}
	s, _ := server(t, ts.handler)
	small := openAIModel("small", s.URL)
	small.ContextWindow, small.MaxOutputTokens = 100, 20
	big := openAIModel("big", s.URL)
	r, _, _ := testRouter(t, converseSlot(small, big), nil)
	big1 := Tool{Name: "lookup", Description: strings.Repeat("a long description ", 20), Parameters: json.RawMessage(`{"type":"object"}`)}
	rep, err := r.Converse(tctx(t), ConverseRequest{Text: "hi", Tools: []Tool{big1}}, nil)
	if err != nil || rep.Model != "big" {
		t.Fatalf("with tools: model %q, %v; want the small model skipped", rep.Model, err)
	}
	rep, err = r.Converse(tctx(t), ConverseRequest{Text: "hi"}, nil)
	if err != nil || rep.Model != "small" {
		t.Fatalf("without tools: model %q, %v", rep.Model, err)
	}
}
