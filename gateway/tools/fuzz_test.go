package tools

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzToolSchema: any schema of at most max_schema_bytes either compiles or
// is refused with a PathError naming input_schema, never panics, and an
// accepted schema checks any input to an outcome: nil or a PathError naming
// input (no panic; a hang trips the fuzz engine's per-input timeout).
func FuzzToolSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string","pattern":"^[a-z]+$"}}}`), []byte(`{"a":"x"}`))
	f.Add([]byte(`{"type":"object","$defs":{"x":{"$ref":"#/$defs/x"}},"properties":{"a":{"$ref":"#/$defs/x"}}}`), []byte(`{"a":{}}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"not":{"not":{"not":{}}}}}}`), []byte(`{"a":[1,{"b":2}]}`))
	f.Add([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"r":{"format":"regex"}}}`), []byte(`{"r":"(a|b)*c{1000}"}`))
	f.Add([]byte(`{"type":"object","additionalProperties":{"anyOf":[{"$ref":"#"},{"type":"integer","multipleOf":1e-300}]}}`), []byte(`{"a":{"b":1e300}}`))
	f.Add([]byte(fanout(9)), []byte(`{"a":1}`))
	f.Add([]byte(`{"type":"object","patternProperties":{"^[a-z]{900}$":{"$ref":"#"}},"unevaluatedProperties":false}`), []byte(`{"aaa":{"b":[]}}`))
	lim := DefaultConfig().limits()
	f.Fuzz(func(t *testing.T, schema, input []byte) {
		if len(schema) > DefaultConfig().MaxSchemaBytes || !json.Valid(schema) {
			return
		}
		sch, err := compile(schema, lim)
		var pe *PathError
		if err != nil {
			if !errors.As(err, &pe) || pe.Root != "input_schema" {
				t.Fatalf("refusal %v is not an input_schema PathError", err)
			}
			return
		}
		if err := validate(sch, input, lim); err != nil && (!errors.As(err, &pe) || pe.Root != "input") {
			t.Fatalf("input refusal %v is not an input PathError", err)
		}
	})
}
