package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
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

// limits bound the work one schema or one input may cause; Config sets
// them.
type limits struct {
	depth, nodes, inputBytes int
}

func (c Config) limits() limits {
	return limits{depth: c.MaxSchemaDepth, nodes: c.MaxSchemaNodes, inputBytes: c.MaxInputBytes}
}

// compile checks raw as an input_schema and compiles it. The shape is
// bounded before anything decodes it (depth, values, numbers), patterns
// before they compile, and the compiled schema's reference fan-out before
// it is accepted, so compiling and later checking inputs take bounded CPU
// (BenchmarkCompileWorst, BenchmarkValidateWorst).
func compile(raw json.RawMessage, lim limits) (*jsonschema.Schema, error) {
	if err := scanShape(raw, shapeLimits{root: "input_schema", maxDepth: lim.depth, maxNodes: lim.nodes,
		depthKey: "tools.max_schema_depth", nodesKey: "tools.max_schema_nodes"}); err != nil {
		return nil, err
	}
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
	c.UseRegexpEngine(newPatternBudget().compile)
	c.RegisterFormat(regexFormat)
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
		msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "jsonschema: "), `"`+schemaURL+"#", `"input_schema`)
		return nil, &PathError{Root: "input_schema", Message: msg}
	}
	if loc, kw := forbiddenKeyword(sch); kw != "" {
		return nil, &PathError{Root: "input_schema", Path: schemaPath(loc), Message: kw + " is not supported in a tool schema: use $ref"}
	}
	if w := schemaWeight(sch, maxInputCost); w > maxInputCost {
		return nil, &PathError{Root: "input_schema", Message: fmt.Sprintf(
			"checking one input would take more than %d schema evaluations ($ref applies the same subschemas along too many paths)", maxInputCost)}
	}
	return sch, nil
}

// schemaPath turns a compiled schema's location into a JSON pointer.
func schemaPath(loc string) string {
	_, frag, _ := strings.Cut(loc, "#")
	return frag
}

// validate checks input against sch: its shape is bounded first, then the
// work its check would take (checkInput), then the validator runs.
func validate(sch *jsonschema.Schema, input json.RawMessage, lim limits) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	if len(input) > lim.inputBytes {
		return &PathError{Root: "input", Message: fmt.Sprintf("is larger than %d bytes (tools.max_input_bytes)", lim.inputBytes)}
	}
	if err := scanShape(input, shapeLimits{root: "input", maxDepth: lim.depth, maxNodes: lim.inputBytes,
		depthKey: "tools.max_schema_depth"}); err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return &PathError{Root: "input", Message: "is not valid JSON: " + err.Error()}
	}
	if !checkInput(sch, doc, maxInputCost) {
		return &PathError{Root: "input", Message: fmt.Sprintf("would take more than %d schema evaluations to check against its tool schema", maxInputCost)}
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
	out := leaf(root, leaves[0].BasicOutput())
	return &PathError{Root: root, Path: out.InstanceLocation, Message: out.msg, More: len(leaves) - 1}
}

type unit struct{ InstanceLocation, msg string }

func leaf(root string, u *jsonschema.OutputUnit) unit {
	for u.Error == nil && len(u.Errors) > 0 {
		u = &u.Errors[0]
	}
	msg := "is invalid"
	if u.Error != nil {
		msg = valueFree(root, u.Error)
	}
	return unit{InstanceLocation: u.InstanceLocation, msg: msg}
}

// valueFree is the validator's message without the input's value: errors
// are logged, and an input is what a person said. A schema's faults are
// the partner's own text and keep their detail.
func valueFree(root string, e *jsonschema.OutputError) string {
	if k, ok := e.Kind.(*kind.Format); ok && root == "input_schema" {
		return fmt.Sprintf("is not a valid %s: %v", k.Want, k.Err)
	}
	if root == "input_schema" {
		return e.String()
	}
	switch k := e.Kind.(type) {
	case *kind.Pattern:
		return fmt.Sprintf("does not match pattern %q", k.Want)
	case *kind.Enum:
		return "is not one of the allowed values"
	case *kind.Const:
		return "is not the required value"
	case *kind.Format:
		return "is not a valid " + k.Want
	case *kind.Minimum:
		return "must be at least " + k.Want.FloatString(6)
	case *kind.Maximum:
		return "must be at most " + k.Want.FloatString(6)
	case *kind.ExclusiveMinimum:
		return "must be more than " + k.Want.FloatString(6)
	case *kind.ExclusiveMaximum:
		return "must be less than " + k.Want.FloatString(6)
	case *kind.MultipleOf:
		return "must be a multiple of " + k.Want.FloatString(6)
	}
	return e.String()
}
