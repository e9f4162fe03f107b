package tools

import (
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxInputCost bounds the work of checking one input against its tool
// schema, in units of about one schema evaluation (see matchCost). A
// schema's size is bounded, but $ref lets a 1 KB schema apply one
// subschema 2^20 times to the same value (a "billion laughs" of
// references), and applicators like additionalProperties multiply by the
// input's size; so the checker walks the input with the schema, charging
// each evaluation, before the validator runs, and refuses an input whose
// charge passes the bound. The walk counts every branch (anyOf, oneOf, if,
// then and else alike), so it is an upper bound of the validator's work
// and itself costs at most maxInputCost steps.
const maxInputCost = 50_000

// sameInstance lists the subschemas s applies to the value s is applied
// to.
func sameInstance(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, d := range s.DependentSchemas {
		out = append(out, d)
	}
	for _, d := range s.Dependencies {
		if d, ok := d.(*jsonschema.Schema); ok {
			out = append(out, d)
		}
	}
	return out
}

// descending lists the subschemas s applies to parts of its value.
func descending(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.PropertyNames, s.Contains, s.Items2020, s.UnevaluatedProperties, s.UnevaluatedItems, s.ContentSchema}
	for _, p := range s.Properties {
		out = append(out, p)
	}
	for _, p := range s.PatternProperties {
		out = append(out, p)
	}
	out = append(out, s.PrefixItems...)
	for _, v := range []any{s.AdditionalProperties, s.AdditionalItems, s.Items} {
		switch v := v.(type) {
		case *jsonschema.Schema:
			out = append(out, v)
		case []*jsonschema.Schema:
			out = append(out, v...)
		}
	}
	return out
}

// schemaWeight is what checking one input that exercises every
// applicator once costs, as checkInput charges it (each evaluation one unit
// plus its same-value chain's share): a subschema reached by n reference paths is
// counted n times. A recursive reference counts once (its cost grows with
// the input, which checkInput charges). It stops counting past limit.
func schemaWeight(root *jsonschema.Schema, limit int) int {
	type at struct {
		s     *jsonschema.Schema
		chain int
	}
	memo := map[at]int{}
	onPath := map[*jsonschema.Schema]bool{}
	var weight func(s *jsonschema.Schema, chain int) int
	weight = func(s *jsonschema.Schema, chain int) int {
		if s == nil {
			return 0
		}
		if w, ok := memo[at{s, chain}]; ok {
			return w
		}
		if onPath[s] {
			return 1 + chain/chainUnit
		}
		onPath[s] = true
		total := 1 + chain/chainUnit
		for _, c := range sameInstance(s) {
			total = min(total+weight(c, chain+1), limit+1)
		}
		for _, c := range descending(s) {
			total = min(total+weight(c, 0), limit+1)
		}
		delete(onPath, s)
		memo[at{s, chain}] = total
		return total
	}
	return weight(root, 0)
}

// forbiddenKeyword names a keyword tool schemas may not use, or "": the
// dynamic references resolve through the evaluation path, which no static
// bound can follow (and a tool's arguments never need them).
func forbiddenKeyword(root *jsonschema.Schema) (loc, kw string) {
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] || kw != "" {
			return
		}
		seen[s] = true
		switch {
		case s.DynamicRef != nil:
			loc, kw = s.Location, "$dynamicRef"
			return
		case s.RecursiveRef != nil:
			loc, kw = s.Location, "$recursiveRef"
			return
		}
		for _, c := range append(sameInstance(s), descending(s)...) {
			walk(c)
		}
	}
	walk(root)
	return loc, kw
}

// budget is the walk of checkInput.
type budget struct{ left int }

// charge spends n units and reports whether any are left.
func (b *budget) charge(n int) bool {
	b.left -= n
	return b.left >= 0
}

// checkInput reports whether validating v against s costs at most limit
// units.
func checkInput(s *jsonschema.Schema, v any, limit int) bool {
	b := &budget{left: limit}
	return b.visit(s, v, 0)
}

// chainUnit is how many steps of the validator's cycle check (a pointer
// comparison each) make one unit.
const chainUnit = 64

// visit charges one evaluation of s on v and everything it applies. chain
// counts the evaluations on the same value above this one: the validator
// walks that chain on every evaluation to detect reference cycles.
func (b *budget) visit(s *jsonschema.Schema, v any, chain int) bool {
	if s == nil {
		return true
	}
	if !b.charge(1 + chain/chainUnit + ownCost(s, v)) {
		return false
	}
	if s.Bool != nil {
		return true
	}
	for _, c := range sameInstance(s) {
		if !b.visit(c, v, chain+1) {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		return b.visitObject(s, v)
	case []any:
		return b.visitArray(s, v)
	}
	return true
}

// ownCost is one evaluation's work besides its subschemas: the
// validator's loop over an object's members (with every pattern property
// matched against every name), enum and const comparisons, a pattern or a
// format on a string.
func ownCost(s *jsonschema.Schema, v any) int {
	n := len(s.Required)
	width := 1
	switch v := v.(type) {
	case map[string]any:
		width = len(v)
		names := 0
		for k := range v {
			names += len(k) + 1
		}
		n += len(v)
		for re := range s.PatternProperties {
			n += len(v) + matchCost(re, names)
		}
	case []any:
		width = len(v)
		n += len(v)
	case string:
		if s.Pattern != nil {
			n += matchCost(s.Pattern, len(v))
		}
		if s.Format != nil {
			n += len(v)/64 + 1
		}
		if s.Format != nil && s.Format.Name == "regex" {
			n += len(v)/8 + 4 // parsed and sized; compiled only when small
		}
	}
	if s.Enum != nil {
		n += len(s.Enum.Values) * width
	}
	if s.Const != nil {
		n += width
	}
	return n
}

func (b *budget) visitObject(s *jsonschema.Schema, obj map[string]any) bool {
	for k, val := range obj {
		if p := s.Properties[k]; p != nil && !b.visit(p, val, 0) {
			return false
		}
		for re, p := range s.PatternProperties {
			if re.MatchString(k) && !b.visit(p, val, 0) {
				return false
			}
		}
		if p, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !b.visit(p, val, 0) {
			return false
		}
		if !b.visit(s.UnevaluatedProperties, val, 0) || !b.visit(s.PropertyNames, k, 0) {
			return false
		}
	}
	return true
}

func (b *budget) visitArray(s *jsonschema.Schema, arr []any) bool {
	for i, val := range arr {
		if i < len(s.PrefixItems) && !b.visit(s.PrefixItems[i], val, 0) {
			return false
		}
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			if !b.visit(items, val, 0) {
				return false
			}
		case []*jsonschema.Schema:
			if i < len(items) && !b.visit(items[i], val, 0) {
				return false
			}
		}
		if p, ok := s.AdditionalItems.(*jsonschema.Schema); ok && !b.visit(p, val, 0) {
			return false
		}
		if !b.visit(s.Items2020, val, 0) || !b.visit(s.Contains, val, 0) || !b.visit(s.UnevaluatedItems, val, 0) {
			return false
		}
	}
	return true
}
