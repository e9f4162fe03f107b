package tools_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/gateway/tools"
)

// Attacks on the tool registry, each with the refusal it must get. Bounds
// are checked before the expensive step, so each refusal also bounds CPU
// (BenchmarkCompileWorst and BenchmarkValidateWorst measure the worst
// accepted cases).

// TestAbuseSchemaBoundsRefuseBeforeCompiling: schemas under the 32 KiB size
// limit that would burn CPU (the 31 KB nested "not" took 67.6 CPU
// seconds) are refused with 400 invalid_request naming the limit.
func TestAbuseSchemaBoundsRefuseBeforeCompiling(t *testing.T) {
	e := newEnv(t)
	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"not":`, 3800) + `{}` + strings.Repeat(`}`, 3800) + `}}`
	var props []string
	for i := range 1200 {
		props = append(props, fmt.Sprintf(`"p%d":{}`, i))
	}
	wide := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	var fan strings.Builder
	fan.WriteString(`{"type":"object","properties":{"a":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := range 24 {
		fmt.Fprintf(&fan, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fan.WriteString(`"d24":{"type":"integer"}}}`)
	var pats []string
	for i := range 30 {
		pats = append(pats, fmt.Sprintf(`"^x%d[a-z]{900}$":{}`, i))
	}
	patterns := `{"type":"object","patternProperties":{` + strings.Join(pats, ",") + `}}`
	cases := []struct{ name, schema, want string }{
		{"nested not, 31 KB", deep, "input_schema/properties/a/not/not/not"},
		{"nested not names the key", deep, "nested deeper than 32 levels (tools.max_schema_depth)"},
		{"1200 subschemas", wide, "more than 1000 JSON values (tools.max_schema_nodes)"},
		{"$ref fan-out 2^24", fan.String(), "more than 50000 schema evaluations"},
		{"huge exponent", `{"type":"object","properties":{"a":{"minimum":1e1000000}}}`, "input_schema/properties/a/minimum: has a number with an exponent beyond ±400"},
		{"long number", `{"type":"object","properties":{"a":{"maximum":` + strings.Repeat("9", 80) + `}}}`, "more than 64 characters"},
		{"pattern program", `{"type":"object","properties":{"a":{"pattern":"\\p{L}{1000}\\p{L}{1000}"}}}`, "pattern is too complex"},
		{"patterns together", patterns, "patterns are too complex together"},
		{"$dynamicRef", `{"type":"object","$dynamicAnchor":"n","properties":{"a":{"$dynamicRef":"#n"}}}`, "$dynamicRef is not supported"},
	}
	for _, c := range cases {
		if len(c.schema) > 32<<10 {
			t.Fatalf("%s: %d bytes is over max_schema_bytes; the attack must pass the size check", c.name, len(c.schema))
		}
		code, b := e.do(t, keyA, "PUT", "/v1/tools/x", putBody("d", c.schema))
		typ, msg := errOf(t, b)
		if code != 400 || typ != "invalid_request" || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %s %q, want 400 naming %q", c.name, code, typ, msg, c.want)
		}
	}
	// The same refusal again comes from the cache, still a 400.
	if code, b := e.do(t, keyA, "PUT", "/v1/tools/x", putBody("d", deep)); code != 400 {
		t.Fatalf("second PUT of the deep schema: %d %s", code, b)
	}
	if code, b := e.do(t, keyA, "GET", "/v1/tools", ""); code != 200 || !strings.Contains(string(b), `"tools":[]`) {
		t.Fatalf("a refused schema was stored: %s", b)
	}
}

// TestAbuseInputsBoundedBeforeValidating: a proposed action's input comes
// from the model, which a person can steer. Inputs that would make the
// validator burn CPU are refused as invalid (the action is dropped), and
// the error never quotes the input.
func TestAbuseInputsBoundedBeforeValidating(t *testing.T) {
	e := newEnv(t)
	// Recursion that doubles per level passes the schema check (one
	// unrolling is small) but 2^30 evaluations for a 30-level input do not.
	doubling := `{"type":"object","$ref":"#/$defs/n","$defs":{"n":{"allOf":[{"$ref":"#/$defs/m"},{"$ref":"#/$defs/m"}]},"m":{"properties":{"x":{"$ref":"#/$defs/n"}}}}}`
	pattern := `{"type":"object","properties":{"s":{"type":"string","pattern":"[a-z]{990}0"}},"additionalProperties":{"type":"number","multipleOf":0.001}}`
	for name, schema := range map[string]string{"doubling": doubling, "pattern": pattern} {
		if code, b := e.do(t, keyA, "PUT", "/v1/tools/"+name, putBody("d", schema)); code != 201 {
			t.Fatalf("%s: %d %s", name, code, b)
		}
	}
	secret := "maria-garcia-415-555-2671"
	cases := []struct{ tool, input, want string }{
		{"doubling", strings.Repeat(`{"x":`, 30) + "1" + strings.Repeat("}", 30), "input: would take more than 50000 schema evaluations"},
		{"pattern", `{"s":"` + strings.Repeat("a", 30_000) + `"}`, "input: would take more than 50000 schema evaluations"},
		{"pattern", `{"s":"` + strings.Repeat("a", 40_000) + `"}`, "input: is larger than 32768 bytes (tools.max_input_bytes)"},
		{"pattern", `{"n":1e999999}`, "input/n: has a number with an exponent beyond ±400"},
		{"pattern", strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40), "is nested deeper than 32 levels (tools.max_schema_depth)"},
		{"pattern", `{"s":"` + secret + `"}`, `input/s: does not match pattern "[a-z]{990}0"`},
		{"pattern", `{"n":` + "4155552671.0001" + `}`, "input/n: must be a multiple of 0.001"},
	}
	for _, c := range cases {
		err := e.reg.Validate("partner-a", c.tool, json.RawMessage(c.input))
		if err == nil || !errors.Is(err, tools.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %.60s…: %v, want ErrInvalid naming %q", c.tool, c.input, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "4155552671")) {
			t.Errorf("the error quotes the input: %v", err)
		}
	}
	// Ordinary inputs of the same tools still validate.
	if err := e.reg.Validate("partner-a", "doubling", json.RawMessage(`{"x":{"x":{"x":1}}}`)); err != nil {
		t.Errorf("shallow input: %v", err)
	}
	if err := e.reg.Validate("partner-a", "pattern", json.RawMessage(`{"s":"`+strings.Repeat("a", 990)+`0","n":2.5}`)); err != nil {
		t.Errorf("matching input: %v", err)
	}
}
