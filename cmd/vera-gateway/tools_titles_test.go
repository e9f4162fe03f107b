package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// TestToolsOfferedToOpenAIModel: the partner's tools reach an
// OpenAI-compatible converse model in its tools format; the streamed
// tool_calls come back as proposals, and a call whose arguments fail the
// tool's schema never reaches the person.
func TestToolsOfferedToOpenAIModel(t *testing.T) {
	var mu sync.Mutex
	var offered []json.RawMessage
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Tools json.RawMessage `json:"tools"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		offered = append(offered, body.Tools)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range []string{
			`{"choices":[{"delta":{"content":"I can text Sam."},"finish_reason":null}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"send_message","arguments":"{\"to\":\"sam\","}}]},"finish_reason":null}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"text\":\"late\"}"}}]},"finish_reason":null}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"send_message","arguments":"{\"to\":\"sam\"}"}}]},"finish_reason":null}]}`,
			`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", e)
			w.(http.Flusher).Flush()
		}
	}))
	defer llm.Close()
	cfg := testFileConfig()
	cfg.Router.Models = append(cfg.Router.Models, routerModel("chat", "openai", llm.URL, ""))
	cfg.Router.Slots = map[string][]string{"converse": {"chat"}}
	a, srv := startApp(t, cfg)

	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/tools/send_message", strings.NewReader(
		`{"description":"Send a text to a contact. Only after approval.","input_schema":{"type":"object","properties":{"to":{"type":"string"},"text":{"type":"string"}},"required":["to","text"]}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("PUT tool = %d %s", resp.StatusCode, b)
	}

	s, st, err := a.sessions.Open(session.Owner{PartnerID: "dev", EndUserID: "u_1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Detach()
	s.Submit("tell Sam I'm late")
	var proposals []map[string]any
	nextEvent(t, st, func(typ string, ev map[string]any) bool {
		if typ == string(event.TypeActionProposed) {
			proposals = append(proposals, ev)
		}
		return typ == string(event.TypeReplyDone)
	})
	if len(proposals) != 1 {
		t.Fatalf("%d proposals, want 1 (the second call fails the schema): %v", len(proposals), proposals)
	}
	p := proposals[0]
	in, _ := json.Marshal(p["action"].(map[string]any)["input"])
	if field(p, "action.type") != "send_message" || field(p, "action.title") != "Send a text to a contact" || string(in) != `{"text":"late","to":"sam"}` {
		t.Fatalf("proposal %v (input %s)", p, in)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offered) != 1 || !strings.Contains(string(offered[0]), `"name":"send_message"`) || !strings.Contains(string(offered[0]), `"type":"function"`) {
		t.Fatalf("tools offered %s", offered)
	}
}

// TestSessionTitles: wired, the first turn names the session from the
// person's message through the embedded snappy slot (gateway/hooks and
// gateway/titles), and the partner's PUT title then answers named.
func TestSessionTitles(t *testing.T) {
	a, srv := startApp(t, testFileConfig())
	s1, st1, err := a.sessions.Open(session.Owner{PartnerID: "dev", EndUserID: "u_1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st1.Detach()
	s1.Submit("I feel anxious about my exam tomorrow")
	ev := nextEvent(t, st1, func(typ string, _ map[string]any) bool { return typ == string(event.TypeSessionTitle) })
	if got := field(ev, "title"); got != "Anxious about exam tomorrow" {
		t.Fatalf("automatic title %q (event %v)", got, ev)
	}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/sessions/"+s1.ID()+"/title", strings.NewReader(`{"title":"Exam prep"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"outcome":"named"`) {
		t.Fatalf("PUT on a named session = %d %s", resp.StatusCode, b)
	}
}
