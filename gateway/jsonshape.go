package gateway

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Bounds on every JSON request body, checked on the raw bytes before the
// decoder sees them (the discipline gateway/tools applies to schemas): the
// work is one linear pass, whatever the body's shape.
const (
	// MaxJSONDepth bounds the nesting of objects and arrays.
	MaxJSONDepth = 64
	// MaxJSONValues bounds the number of values (objects, arrays, strings,
	// numbers, literals).
	MaxJSONValues = 10_000
)

// shapeFrame is one open object or array of the scan.
type shapeFrame struct {
	array bool
	index int
	key   string
	// keys are the object's keys so far, folded to lower case, mapped to
	// their spelling: a repeated key, or one that differs only in case,
	// is refused (encoding/json would keep the last, or match either
	// spelling to the same field).
	keys map[string]string
	// typ is the Go type the object or array decodes into, when known:
	// its fields' exact spellings are the only ones accepted.
	typ reflect.Type
	// raw: inside a json.RawMessage, whose owner bounds its depth and size
	// by its own rules (gateway/tools for input_schema); keys are still
	// checked.
	raw bool
}

// checkJSONShape checks raw's depth, value count and object keys against
// the type v decodes into, without decoding. Malformed JSON is left to the
// decoder. Errors name the JSON pointer and the rule.
func checkJSONShape(raw []byte, v any) *Error {
	var stack []shapeFrame
	nodes, depth := 0, 0
	root := deref(reflect.TypeOf(v))
	var pendingType reflect.Type = root // the type of the next value
	inRaw := func() bool { return len(stack) > 0 && stack[len(stack)-1].raw }
	value := func() {
		if !inRaw() {
			nodes++
		}
		if n := len(stack); n > 0 && stack[n-1].array {
			stack[n-1].index++
		}
	}
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			end := JSONStringEnd(raw, i)
			if JSONIsKey(raw, end) && len(stack) > 0 && !stack[len(stack)-1].array {
				f := &stack[len(stack)-1]
				key := jsonUnquote(raw[i:end])
				if err := f.addKey(key, stack); err != nil {
					return err
				}
				f.key = key
				pendingType = fieldType(f.typ, key)
			} else {
				value()
			}
			i = end - 1
		case c == '{' || c == '[':
			value()
			t := pendingType
			if n := len(stack); n > 0 && stack[n-1].array {
				t = elemType(stack[n-1].typ)
			}
			raw := inRaw() || t == rawMarker
			if raw {
				t = nil
			} else {
				depth++
			}
			stack = append(stack, shapeFrame{array: c == '[', index: -1, typ: t, raw: raw})
			if depth > MaxJSONDepth {
				return Errorf(InvalidRequest, "request body at %s is nested deeper than %d levels", jsonPointer(stack), MaxJSONDepth)
			}
			if n := len(stack); n > 0 && stack[n-1].array {
				pendingType = nil
			}
		case c == '}' || c == ']':
			if len(stack) > 0 {
				if !stack[len(stack)-1].raw {
					depth--
				}
				stack = stack[:len(stack)-1]
			}
		case c == '-' || (c >= '0' && c <= '9'):
			for i+1 < len(raw) && strings.IndexByte("+-.eE0123456789", raw[i+1]) >= 0 {
				i++
			}
			value()
		case c == 't' || c == 'f' || c == 'n':
			value()
			for i+1 < len(raw) && raw[i+1] >= 'a' && raw[i+1] <= 'z' {
				i++
			}
		}
		if nodes > MaxJSONValues {
			return Errorf(InvalidRequest, "request body has more than %d JSON values", MaxJSONValues)
		}
	}
	return nil
}

// addKey records key in the object f, refusing repeats and case variants.
func (f *shapeFrame) addKey(key string, stack []shapeFrame) *Error {
	if f.keys == nil {
		f.keys = map[string]string{}
	}
	folded := strings.ToLower(key)
	if prev, ok := f.keys[folded]; ok {
		if prev == key {
			return Errorf(InvalidRequest, "request body at %s has the key %q twice", jsonPointer(stack), key)
		}
		return Errorf(InvalidRequest, "request body at %s has the keys %q and %q, which differ only in case", jsonPointer(stack), prev, key)
	}
	f.keys[folded] = key
	if want, ok := caseVariant(f.typ, key); ok {
		return Errorf(InvalidRequest, "request body at %s: key %q must be spelled %q", jsonPointer(stack), key, want)
	}
	return nil
}

// structFields are a struct type's JSON names (exact spellings) to their
// types, embedded structs flattened as encoding/json does.
var structFields sync.Map // reflect.Type -> map[string]reflect.Type

func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := structFields.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" && tag == "-" {
				continue
			}
			if f.Anonymous && name == "" && deref(f.Type).Kind() == reflect.Struct {
				walk(deref(f.Type))
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := m[name]; !dup {
				m[name] = f.Type
			}
		}
	}
	walk(t)
	structFields.Store(t, m)
	return m
}

// caseVariant reports whether key is not a field of struct t but differs
// from one only in case, and that field's spelling.
func caseVariant(t reflect.Type, key string) (string, bool) {
	if t == nil || t.Kind() != reflect.Struct {
		return "", false
	}
	fs := fieldsOf(t)
	if _, ok := fs[key]; ok {
		return "", false
	}
	for name := range fs {
		if strings.EqualFold(name, key) {
			return name, true
		}
	}
	return "", false
}

// fieldType is the type key's value decodes into in an object of type t.
func fieldType(t reflect.Type, key string) reflect.Type {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return deref(fieldsOf(t)[key])
	case reflect.Map:
		return deref(t.Elem())
	}
	return nil
}

func elemType(t reflect.Type) reflect.Type {
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		return deref(t.Elem())
	}
	return nil
}

type rawSentinel struct{}

var (
	rawMessageType  = reflect.TypeOf(json.RawMessage(nil))
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	// rawMarker stands for json.RawMessage in the scan's types.
	rawMarker = reflect.TypeOf(rawSentinel{})
)

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessageType:
		return rawMarker
	case t != nil && (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)):
		return nil // decoded by its own rules: keys still checked for repeats
	}
	return t
}

// JSONStringEnd returns the index just past the JSON string literal that
// starts at raw[i] (len(raw) when it is not closed). The body scanners
// here and in gateway/tools share it.
func JSONStringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// JSONIsKey reports whether the JSON string ending before raw[end] is an
// object key (followed by a colon).
func JSONIsKey(raw []byte, end int) bool {
	for j := end; j < len(raw); j++ {
		switch raw[j] {
		case ' ', '\t', '\n', '\r':
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

// jsonUnquote decodes a string literal's escapes ("\u0065" is "e": a
// repeat spelled with escapes is still a repeat).
func jsonUnquote(lit []byte) string {
	if len(lit) >= 2 && !strings.ContainsRune(string(lit), '\\') {
		return string(lit[1 : len(lit)-1])
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return strings.Trim(string(lit), `"`)
	}
	return s
}

// jsonPointer renders the scan's open containers as a JSON pointer ("/"
// for the top level).
func jsonPointer(stack []shapeFrame) string {
	if len(stack) <= 1 {
		if len(stack) == 1 && stack[0].array {
			return "/" + strconv.Itoa(max(stack[0].index, 0))
		}
		return "the top level"
	}
	var b strings.Builder
	for _, f := range stack[:len(stack)-1] {
		b.WriteByte('/')
		if f.array {
			b.WriteString(strconv.Itoa(max(f.index, 0)))
		} else {
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(f.key))
		}
	}
	return b.String()
}
