package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// PathError is a fault at one place of a JSON document: Root is
// "input_schema" or "input", Path a JSON pointer inside it.
type PathError struct {
	Root    string
	Path    string
	Message string
	// More counts further faults not named.
	More int
}

func (e *PathError) Error() string {
	s := e.Root + e.Path + ": " + e.Message
	if e.More > 0 {
		s += fmt.Sprintf(" (and %d more)", e.More)
	}
	return s
}

// noLoader refuses every external reference: a schema may only refer to
// itself, so compiling never reads a file or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed: define it under $defs", url)
}

// schemaURL names the one resource a compiler holds.
const schemaURL = "vera:tool-input-schema.json"

// compile checks raw as an input_schema and compiles it.
func compile(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &PathError{Root: "input_schema", Message: "is not valid JSON: " + err.Error()}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, &PathError{Root: "input_schema", Message: "must be a JSON object"}
	}
	if obj["type"] != "object" {
		return nil, &PathError{Root: "input_schema", Path: "/type", Message: `must be "object": a tool's input is an object of named arguments`}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, &PathError{Root: "input_schema", Message: err.Error()}
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		var sve *jsonschema.SchemaValidationError
		var ve *jsonschema.ValidationError
		if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
			return nil, pathError("input_schema", ve)
		}
		return nil, &PathError{Root: "input_schema", Message: strings.TrimPrefix(err.Error(), "jsonschema: ")}
	}
	return sch, nil
}

// validate checks input against sch.
func validate(sch *jsonschema.Schema, input json.RawMessage) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return &PathError{Root: "input", Message: "is not valid JSON: " + err.Error()}
	}
	err = sch.Validate(doc)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return pathError("input", ve)
	}
	return err
}

// pathError names the deepest fault of a validation error tree (the most
// specific place), counting the others.
func pathError(root string, ve *jsonschema.ValidationError) *PathError {
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return len(b.InstanceLocation) - len(a.InstanceLocation)
	})
	out := leaf(leaves[0].BasicOutput())
	return &PathError{Root: root, Path: out.InstanceLocation, Message: out.msg, More: len(leaves) - 1}
}

type unit struct{ InstanceLocation, msg string }

func leaf(u *jsonschema.OutputUnit) unit {
	for u.Error == nil && len(u.Errors) > 0 {
		u = &u.Errors[0]
	}
	msg := "is invalid"
	if u.Error != nil {
		msg = u.Error.String()
	}
	return unit{InstanceLocation: u.InstanceLocation, msg: msg}
}
