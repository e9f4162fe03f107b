package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
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

// TestSessionTitles: the first turn names the session from the person's
// message through the embedded snappy slot; the partner's PUT title then
// answers named. A title set first wins over the automatic one. Unknown
// and other partners' sessions are 404, a blank title 400.
func TestSessionTitles(t *testing.T) {
	a, srv := startApp(t, testFileConfig())
	put := func(id, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/sessions/"+id+"/title", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

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
	if code, body := put(s1.ID(), `{"title":"Exam prep"}`); code != 200 || !strings.Contains(body, `"outcome":"named"`) {
		t.Fatalf("PUT on a named session = %d %s", code, body)
	}

	s2, st2, err := a.sessions.Open(session.Owner{PartnerID: "dev", EndUserID: "u_2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Detach()
	if code, body := put(s2.ID(), "{\"title\":\"  Ride \\n home  \"}"); code != 200 || !strings.Contains(body, `"outcome":"set"`) {
		t.Fatalf("PUT on a new session = %d %s", code, body)
	}
	named := counterValue(t, a.ext.titles.outcomes.WithLabelValues("named"))
	s2.Submit("Can you book me a taxi to the station")
	deadline := time.Now().Add(20 * time.Second)
	for counterValue(t, a.ext.titles.outcomes.WithLabelValues("named")) == named {
		if time.Now().After(deadline) {
			t.Fatal("the automatic title was never attempted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s2.Title() != "Ride home" {
		t.Fatalf("title %q: the partner's title must win", s2.Title())
	}

	other, ost, err := a.sessions.Open(session.Owner{PartnerID: "other", EndUserID: "u_3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ost.Detach()
	for _, c := range []struct {
		id, body string
		code     int
		typ      string
	}{
		{"sess_nope", `{"title":"x"}`, 404, "not_found"},
		{other.ID(), `{"title":"x"}`, 404, "not_found"},
		{s2.ID(), `{"title":"   "}`, 400, "invalid_request"},
		{s2.ID(), `{}`, 400, "invalid_request"},
		{s2.ID(), `{"title":"` + strings.Repeat("a", 201) + `"}`, 400, "invalid_request"},
	} {
		if code, body := put(c.id, c.body); code != c.code || !strings.Contains(body, c.typ) {
			t.Errorf("PUT %s %s = %d %s, want %d %s", c.id, c.body, code, body, c.code, c.typ)
		}
	}
	if other.Title() != "" {
		t.Fatalf("another partner's session was named %q", other.Title())
	}
}

func TestNormalizeTitle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Anxious about exam tomorrow", "Anxious about exam tomorrow"},
		{"\"Raid on the button factory.\"", "Raid on the button factory"},
		{"Title: **Moving to Berlin**\nIt is about a move.", "Moving to Berlin"},
		{"\n\n  one two three four five six seven", "one two three four five"},
		{"What's next?", "What's next?"},
		{"   ", ""},
		{"...", ""},
	} {
		if got := normalizeTitle(c.in, 5); got != c.want {
			t.Errorf("normalizeTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestTitlerOffTurnPathBoundedAndJoined: naming never blocks its caller;
// past maxTitleCalls in flight a session is skipped; close cancels the
// calls in flight and waits for them.
func TestTitlerOffTurnPathBoundedAndJoined(t *testing.T) {
	started := make(chan struct{}, maxTitleCalls+1)
	var mu sync.Mutex
	var set []string
	tt := newTitler(func(ctx context.Context, req router.OneshotRequest) (router.OneshotResponse, error) {
		if req.Assignment != router.SlotSnappy || req.SystemPrompt != titlePrompt || req.MaxTokens != titleMaxTokens {
			return router.OneshotResponse{}, fmt.Errorf("request %+v", req)
		}
		started <- struct{}{}
		<-ctx.Done() // a model that never answers
		return router.OneshotResponse{}, ctx.Err()
	}, func(id, title string) string {
		mu.Lock()
		set = append(set, id)
		mu.Unlock()
		return titleSet
	}, slog.New(slog.DiscardHandler))
	for i := range maxTitleCalls + 3 {
		tt.name(fmt.Sprintf("s%d", i), "hello there")
	}
	for range maxTitleCalls {
		<-started
	}
	if got := counterValue(t, tt.outcomes.WithLabelValues("skipped")); got != 3 {
		t.Fatalf("skipped %v, want 3", got)
	}
	tt.close()
	tt.name("late", "after close") // ignored once closed
	if len(set) != 0 || counterValue(t, tt.outcomes.WithLabelValues("failed")) != 0 {
		t.Fatalf("cancelled calls set %v", set)
	}
}

// counterValue reads one counter.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestSpawnedFirstTurnIsNotNamed: as in vera.titles, only a first turn the
// person started names the session: after an inbox message opened the
// conversation, later turns do not name it either.
func TestSpawnedFirstTurnIsNotNamed(t *testing.T) {
	a, srv := startApp(t, testFileConfig())
	s, st, err := a.sessions.Open(session.Owner{PartnerID: "dev", EndUserID: "u_1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Detach()
	resp, err := http.Post(srv.URL+"/v1/sessions/"+s.ID()+"/messages", "application/json",
		strings.NewReader(`{"text":"Your ride is here","source":"rides/dispatch"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("inbox = %d", resp.StatusCode)
	}
	done := func(typ string, _ map[string]any) bool { return typ == string(event.TypeReplyDone) }
	nextEvent(t, st, done)
	s.Submit("I feel anxious about my exam tomorrow")
	nextEvent(t, st, done)
	a.ext.titles.close() // joins any naming call in flight
	for _, o := range []string{titleSet, titleNamed, titleNotFound, "failed", "skipped"} {
		if v := counterValue(t, a.ext.titles.outcomes.WithLabelValues(o)); v != 0 {
			t.Fatalf("titles %s = %v, want no naming at all", o, v)
		}
	}
	if s.Title() != "" {
		t.Fatalf("named %q", s.Title())
	}
}
