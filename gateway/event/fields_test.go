package event

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// fieldCheck holds the docs' server examples to the fields the code sends,
// found by reflection on each event's payload type: every example carries
// every field the encoder always writes (no omitempty), at every level of
// nesting, and every field it writes only when set (omitempty) is shown by
// at least one example of the document — per Go type, so a page field
// shown in safety.card documents the same page in display.card.
type fieldCheck struct {
	optional map[string]string // type.field → the first path it was missed at
	shown    map[string]bool
}

func newFieldCheck() *fieldCheck {
	return &fieldCheck{optional: map[string]string{}, shown: map[string]bool{}}
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// jsonField is one field of a struct as encoding/json writes it.
type jsonField struct {
	name      string
	omitempty bool
	typ       reflect.Type
}

// jsonFields lists t's JSON fields, embedded structs inlined.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, omitempty: strings.Contains(opts, "omitempty"), typ: f.Type})
	}
	return out
}

// example checks one server example of typ (client examples decode
// strictly instead).
func (fc *fieldCheck) example(t *testing.T, typ Type, raw []byte) {
	t.Helper()
	mk, ok := serverPayloads[typ]
	if !ok {
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return // checkExample reports it
	}
	for _, k := range []string{"type", "seq", "session_id", "at"} {
		delete(obj, k)
	}
	body, _ := json.Marshal(obj)
	fc.walk(t, string(typ), reflect.TypeOf(mk()).Elem(), body)
}

// walk checks raw against typ at path.
func (fc *fieldCheck) walk(t *testing.T, path string, typ reflect.Type, raw json.RawMessage) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Implements(jsonMarshaler) || typ.Implements(textMarshaler) ||
		reflect.PointerTo(typ).Implements(jsonMarshaler) || reflect.PointerTo(typ).Implements(textMarshaler) {
		return // its own encoding (json.RawMessage, safety levels)
	}
	switch typ.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			t.Errorf("docs/events.md: %s is not an object", path)
			return
		}
		for _, f := range jsonFields(typ) {
			p, key := path+"."+f.name, typ.String()+"."+f.name
			v, ok := obj[f.name]
			switch {
			case ok:
				fc.shown[key] = true
				fc.walk(t, p, f.typ, v)
			case !f.omitempty:
				t.Errorf("docs/events.md: an example lacks %s, which the code always sends", p)
			case fc.optional[key] == "":
				fc.optional[key] = p
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return // null or a byte string: decoding checks it
		}
		for _, it := range items {
			fc.walk(t, path+"[]", typ.Elem(), it)
		}
	}
}

// optionalShown reports the fields sent when set that no example shows.
func (fc *fieldCheck) optionalShown(t *testing.T) {
	t.Helper()
	var missing []string
	for key, path := range fc.optional {
		if !fc.shown[key] {
			missing = append(missing, path+" ("+key+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("docs/events.md: no example shows %s, which the code sends when set", m)
	}
}
