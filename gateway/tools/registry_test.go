package tools_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/tools"
)

const (
	keyA     = "vera_sk_tools_partner_a_0123456789"
	keyB     = "vera_sk_tools_partner_b_0123456789"
	keyChat  = "vera_sk_tools_chat_only_0123456789"
	contactS = `{"type":"object","properties":{"to":{"type":"object","properties":{"phone":{"type":"string","pattern":"^\\+[0-9]{6,15}$"}},"required":["phone"]},"text":{"type":"string","maxLength":200},"tags":{"type":"array","items":{"type":"integer"}}},"required":["to","text"],"additionalProperties":false}`
)

type env struct {
	srv *httptest.Server
	reg *tools.Registry
}

func newEnv(t *testing.T) *env { return newEnvOn(t, nil) }

// newEnvOn serves the tool routes on store (nil: a MemoryStore).
func newEnvOn(t *testing.T, store tools.Store) *env {
	t.Helper()
	cfg := gateway.DefaultConfig()
	cfg.Auth.Keys = []gateway.KeyConfig{
		{ID: "partner-a", Secret: keyA, Scopes: []string{gateway.ScopeToolsWrite}},
		{ID: "partner-b", Secret: keyB, Scopes: []string{gateway.ScopeToolsWrite}},
		{ID: "partner-c", Secret: keyChat, Scopes: []string{gateway.ScopeConversationsWrite}},
	}
	cfg.Limits.RequestsPerMinute = 10_000
	s, err := gateway.New(cfg, gateway.Options{Clock: clocktest.NewClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.New(tools.DefaultConfig(), store, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range reg.Routes() {
		s.Mount(rt)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &env{srv: srv, reg: reg}
}

func (e *env) do(t *testing.T, key, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// errOf decodes the Partner API envelope and checks it is one.
func errOf(t *testing.T, b []byte) (typ, msg string) {
	t.Helper()
	var env struct {
		Error struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Error.Type == "" || env.Error.RequestID == "" {
		t.Fatalf("not an error envelope: %s", b)
	}
	return env.Error.Type, env.Error.Message
}

func putBody(desc, schema string) string {
	return fmt.Sprintf(`{"description":%q,"input_schema":%s}`, desc, schema)
}

func TestPutGetDeleteAndIsolation(t *testing.T) {
	e := newEnv(t)
	code, b := e.do(t, keyA, "PUT", "/v1/tools/send_message", putBody("Send a text message", contactS))
	if code != http.StatusCreated {
		t.Fatalf("PUT new = %d %s", code, b)
	}
	var tool tools.Tool
	if err := json.Unmarshal(b, &tool); err != nil || tool.Name != "send_message" || tool.Description != "Send a text message" {
		t.Fatalf("tool = %+v (%v)", tool, err)
	}
	code, _ = e.do(t, keyA, "PUT", "/v1/tools/send_message", putBody("Send an SMS", contactS))
	if code != http.StatusOK {
		t.Fatalf("PUT replace = %d", code)
	}
	code, b = e.do(t, keyA, "GET", "/v1/tools/send_message", "")
	if code != 200 || !strings.Contains(string(b), "Send an SMS") {
		t.Fatalf("GET = %d %s", code, b)
	}
	// Partner B cannot see, replace-through or delete A's tool.
	code, b = e.do(t, keyB, "GET", "/v1/tools/send_message", "")
	if typ, _ := errOf(t, b); code != 404 || typ != "not_found" {
		t.Fatalf("B GET A's tool = %d %s", code, b)
	}
	code, b = e.do(t, keyB, "DELETE", "/v1/tools/send_message", "")
	if code != 404 {
		t.Fatalf("B DELETE A's tool = %d %s", code, b)
	}
	code, b = e.do(t, keyB, "GET", "/v1/tools", "")
	if code != 200 || string(bytes.TrimSpace(b)) != `{"tools":[]}` {
		t.Fatalf("B list = %d %s", code, b)
	}
	if err := e.reg.Validate("partner-b", "send_message", json.RawMessage(`{}`)); !errors.Is(err, tools.ErrUnknownTool) {
		t.Fatalf("B Validate on A's tool = %v", err)
	}
	// A scope check: a key without tools:write is refused.
	code, b = e.do(t, keyChat, "GET", "/v1/tools", "")
	if typ, _ := errOf(t, b); code != 403 || typ != "permission_error" {
		t.Fatalf("no scope = %d %s", code, b)
	}
	code, _ = e.do(t, keyA, "DELETE", "/v1/tools/send_message", "")
	if code != http.StatusNoContent {
		t.Fatalf("DELETE = %d", code)
	}
	code, _ = e.do(t, keyA, "GET", "/v1/tools/send_message", "")
	if code != 404 {
		t.Fatalf("GET after DELETE = %d", code)
	}
	if err := e.reg.Validate("partner-a", "send_message", json.RawMessage(`{}`)); !errors.Is(err, tools.ErrUnknownTool) {
		t.Fatalf("Validate after DELETE = %v", err)
	}
}

func TestTwentySixthToolIsConflict(t *testing.T) {
	e := newEnv(t)
	for i := range 25 {
		if code, b := e.do(t, keyA, "PUT", fmt.Sprintf("/v1/tools/t%02d", i), putBody("d", `{"type":"object"}`)); code != 201 {
			t.Fatalf("tool %d: %d %s", i, code, b)
		}
	}
	code, b := e.do(t, keyA, "PUT", "/v1/tools/t25", putBody("d", `{"type":"object"}`))
	typ, msg := errOf(t, b)
	if code != http.StatusConflict || typ != "conflict" || !strings.Contains(msg, "already has 25 tools, the maximum") {
		t.Fatalf("26th = %d %s", code, b)
	}
	// Replacing one of the 25 still works, and another partner is not limited by A.
	if code, _ := e.do(t, keyA, "PUT", "/v1/tools/t00", putBody("new", `{"type":"object"}`)); code != 200 {
		t.Fatalf("replace at limit = %d", code)
	}
	if code, _ := e.do(t, keyB, "PUT", "/v1/tools/t25", putBody("d", `{"type":"object"}`)); code != 201 {
		t.Fatalf("B's first tool = %d", code)
	}
	code, b = e.do(t, keyA, "GET", "/v1/tools", "")
	var list struct{ Tools []tools.Tool }
	if err := json.Unmarshal(b, &list); err != nil || code != 200 || len(list.Tools) != 25 || list.Tools[0].Name != "t00" {
		t.Fatalf("list = %d, %d tools", code, len(list.Tools))
	}
	// After a delete there is room again.
	e.do(t, keyA, "DELETE", "/v1/tools/t03", "")
	if code, _ := e.do(t, keyA, "PUT", "/v1/tools/t25", putBody("d", `{"type":"object"}`)); code != 201 {
		t.Fatalf("after delete = %d", code)
	}
}

func TestLimitHoldsUnderConcurrentPuts(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	codes := make([]int, 40)
	for i := range codes {
		wg.Go(func() { // no t.Fatal off the test goroutine: a transport error leaves code 0
			req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/v1/tools/c%d", e.srv.URL, i), strings.NewReader(putBody("d", `{"type":"object"}`)))
			req.Header.Set("Authorization", "Bearer "+keyA)
			if resp, err := e.srv.Client().Do(req); err == nil {
				codes[i] = resp.StatusCode
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	created, conflict := 0, 0
	for _, c := range codes {
		switch c {
		case 201:
			created++
		case 409:
			conflict++
		}
	}
	if created != 25 || conflict != 15 {
		t.Fatalf("created %d, conflict %d; want 25 and 15", created, conflict)
	}
}

func TestPutRejectsBadRequestsNamingThePath(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, path, body, want string
	}{
		{"bad type keyword", "/v1/tools/x", putBody("d", `{"type":"object","properties":{"age":{"type":"integr"}}}`), "input_schema/properties/age/type"},
		{"minLength negative", "/v1/tools/x", putBody("d", `{"type":"object","properties":{"n":{"type":"string","minLength":-1}}}`), "input_schema/properties/n/minLength"},
		{"required not array", "/v1/tools/x", putBody("d", `{"type":"object","required":"to"}`), "input_schema/required"},
		{"bad nested items", "/v1/tools/x", putBody("d", `{"type":"object","properties":{"l":{"type":"array","items":{"enum":"x"}}}}`), "input_schema/properties/l/items/enum"},
		{"not an object schema", "/v1/tools/x", putBody("d", `{"type":"string"}`), "input_schema/type: must be \"object\""},
		{"schema is an array", "/v1/tools/x", putBody("d", `[1]`), "input_schema: must be a JSON object"},
		{"external ref", "/v1/tools/x", putBody("d", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`), "external $ref"},
		{"remote ref", "/v1/tools/x", putBody("d", `{"type":"object","$ref":"https://example.com/s.json"}`), "external $ref"},
		{"missing schema", "/v1/tools/x", `{"description":"d"}`, "input_schema is required"},
		{"blank description", "/v1/tools/x", putBody("  ", `{"type":"object"}`), "description is required"},
		{"unknown field", "/v1/tools/x", `{"description":"d","input_schema":{"type":"object"},"strict":true}`, "unknown field \"strict\""},
		{"bad name", "/v1/tools/has.dot", putBody("d", `{"type":"object"}`), "tool name \"has.dot\""},
		{"long description", "/v1/tools/x", putBody(strings.Repeat("a", 1025), `{"type":"object"}`), "longer than 1024"},
	}
	for _, c := range cases {
		code, b := e.do(t, keyA, "PUT", c.path, c.body)
		typ, msg := errOf(t, b)
		if code != 400 || typ != "invalid_request" || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %s %q, want 400 naming %q", c.name, code, typ, msg, c.want)
		}
	}
	if code, b := e.do(t, keyA, "GET", "/v1/tools", ""); code != 200 || !strings.Contains(string(b), `"tools":[]`) {
		t.Errorf("a rejected PUT stored something: %s", b)
	}
	// A schema that refers inside itself is fine.
	code, b := e.do(t, keyA, "PUT", "/v1/tools/local_ref", putBody("d", `{"type":"object","$defs":{"p":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/p"}}}`))
	if code != 201 {
		t.Fatalf("local $ref: %d %s", code, b)
	}
	if err := e.reg.Validate("partner-a", "local_ref", json.RawMessage(`{"a":5}`)); err == nil || !strings.Contains(err.Error(), "input/a:") {
		t.Fatalf("local $ref validation = %v", err)
	}
}

func TestValidateNamesTheInputPath(t *testing.T) {
	e := newEnv(t)
	if code, b := e.do(t, keyA, "PUT", "/v1/tools/send_message", putBody("Send a text", contactS)); code != 201 {
		t.Fatalf("%d %s", code, b)
	}
	cases := []struct {
		input, want string
	}{
		{`{"to":{"phone":"+4915112345678"},"text":"on my way","tags":[1,2]}`, ""},
		{`{"to":{"phone":"0151"},"text":"x"}`, "input/to/phone: "},
		{`{"to":{},"text":"x"}`, "input/to: missing property 'phone'"},
		{`{"text":"x"}`, "input: missing property 'to'"},
		{`{"to":{"phone":"+4915112345678"},"text":"x","tags":[1,"two"]}`, "input/tags/1: "},
		{`{"to":{"phone":"+4915112345678"},"text":"x","cc":"y"}`, "input: additional properties 'cc' not allowed"},
		{`{"to":{"phone":"+4915112345678"},"text":` + fmt.Sprintf("%q", strings.Repeat("a", 201)) + `}`, "input/text: "},
		{`[1]`, "input: got array, want object"},
		{`{"to":`, "input: is not valid JSON"},
		{``, "input: missing properties 'to', 'text'"},
	}
	for _, c := range cases {
		err := e.reg.Validate("partner-a", "send_message", json.RawMessage(c.input))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected %v", c.input, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, tools.ErrInvalid)):
			t.Errorf("%s: err = %v, want it to contain %q and match ErrInvalid", c.input, err, c.want)
		}
	}
	var pe *tools.PathError
	err := e.reg.Validate("partner-a", "send_message", json.RawMessage(`{"to":{"phone":"1"},"text":"x"}`))
	if !errors.As(err, &pe) || pe.Root != "input" || pe.Path != "/to/phone" {
		t.Fatalf("PathError = %+v", pe)
	}
}

func TestOpenAIFormat(t *testing.T) {
	e := newEnv(t)
	e.do(t, keyA, "PUT", "/v1/tools/b_tool", putBody("B", `{"type":"object"}`))
	e.do(t, keyA, "PUT", "/v1/tools/a_tool", putBody("A", `{"type":"object","properties":{"x":{"type":"string"}}}`))
	got, _ := json.Marshal(e.reg.OpenAI("partner-a"))
	want := `[{"type":"function","function":{"name":"a_tool","description":"A","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}},{"type":"function","function":{"name":"b_tool","description":"B","parameters":{"type":"object"}}}]`
	if string(got) != want {
		t.Fatalf("OpenAI =\n%s\nwant\n%s", got, want)
	}
	if n := len(e.reg.OpenAI("partner-b")); n != 0 {
		t.Fatalf("partner-b sees %d tools", n)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := tools.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := tools.Config{}
	err := c.Validate()
	for _, k := range []string{"tools.max_per_partner", "tools.max_schema_bytes", "tools.max_description_chars"} {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("Validate() = %v, want it to name %s", err, k)
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), []byte(`{"a":1}`))
	f.Add([]byte(`{"type":"object","$defs":{"x":{"$ref":"#/$defs/x"}},"properties":{"a":{"$ref":"#/$defs/x"}}}`), []byte(`{"a":{}}`))
	f.Add([]byte(`{"type":"object","properties":{"p":{"pattern":"(a+)+$"}}}`), []byte(`{"p":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}`))
	f.Fuzz(func(t *testing.T, schema, input []byte) {
		store := tools.NewMemoryStore()
		reg, err := tools.New(tools.DefaultConfig(), store, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(schema) {
			return
		}
		if _, _, err := store.Put("p", tools.Tool{Name: "t", InputSchema: schema}, 25); err != nil {
			t.Fatal(err)
		}
		// Any outcome is fine except a panic or a hang.
		_ = reg.Validate("p", "t", input)
	})
}

func BenchmarkValidate(b *testing.B) {
	store := tools.NewMemoryStore()
	reg, _ := tools.New(tools.DefaultConfig(), store, nil)
	if _, _, err := store.Put("p", tools.Tool{Name: "send_message", InputSchema: json.RawMessage(contactS)}, 25); err != nil {
		b.Fatal(err)
	}
	in := json.RawMessage(`{"to":{"phone":"+4915112345678"},"text":"on my way","tags":[1,2]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := reg.Validate("p", "send_message", in); err != nil {
			b.Fatal(err)
		}
	}
}
