package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Sentinel errors; a *DecodeError wraps exactly one of them.
var (
	// ErrTooLarge: the event is over MaxEventBytes.
	ErrTooLarge = errors.New("event too large")
	// ErrInvalidJSON: the bytes are not one JSON object.
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrUnknownType: the type field names no client event.
	ErrUnknownType = errors.New("unknown event type")
	// ErrUnknownField: a field the event type does not have.
	ErrUnknownField = errors.New("unknown field")
	// ErrWrongType: a field has the wrong JSON type.
	ErrWrongType = errors.New("wrong field type")
	// ErrMissing: a required field is absent or empty.
	ErrMissing = errors.New("missing field")
	// ErrTooLong: a field is over its size limit.
	ErrTooLong = errors.New("field too long")
	// ErrInvalidValue: a field has a value outside its domain.
	ErrInvalidValue = errors.New("invalid value")
	// ErrPayloadNotObject: Encode was given a payload that is not an object.
	ErrPayloadNotObject = errors.New("payload is not a JSON object")
)

// DecodeError says why a client event was rejected. Field is the offending
// field's JSON path ("" when the whole event is at fault) and EventType the
// event's type when it was readable.
type DecodeError struct {
	EventType Type
	Field     string
	Err       error
	Detail    string
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString("event: ")
	if e.EventType != "" {
		b.WriteString(string(e.EventType))
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Payload turns the error into the error event's payload (type
// invalid_request) so a transport can answer and keep the connection.
func (e *DecodeError) Payload() Error {
	return Error{Error: ErrorBody{
		Type:      ErrInvalidRequest,
		Message:   e.Error(),
		Field:     e.Field,
		EventType: string(e.EventType),
	}}
}

func invalid(field string, err error, format string, args ...any) *DecodeError {
	return &DecodeError{Field: field, Err: err, Detail: fmt.Sprintf(format, args...)}
}

// clientTypes maps every client event type to a constructor.
var clientTypes = map[Type]func() Client{
	TypeHello:           func() Client { return new(Hello) },
	TypeInputText:       func() Client { return new(InputText) },
	TypeDisplayAck:      func() Client { return new(DisplayAck) },
	TypeInputKey:        func() Client { return new(InputKey) },
	TypeActionApprove:   func() Client { return new(ActionApprove) },
	TypeActionDecline:   func() Client { return new(ActionDecline) },
	TypePlaybackStarted: func() Client { return new(PlaybackStarted) },
	TypeResponseCancel:  func() Client { return new(ResponseCancel) },
	TypeSessionRename:   func() Client { return new(SessionRename) },
}

// fieldsOf lists the JSON field names of each client payload, computed once.
var fieldsOf = func() map[Type]map[string]bool {
	m := make(map[Type]map[string]bool, len(clientTypes))
	for t, mk := range clientTypes {
		set := map[string]bool{"type": true}
		rt := reflect.TypeOf(mk()).Elem()
		for i := 0; i < rt.NumField(); i++ {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			set[name] = true
		}
		m[t] = set
	}
	return m
}()

// ClientTypes lists the client event types Decode accepts.
func ClientTypes() []Type {
	out := make([]Type, 0, len(clientTypes))
	for t := range clientTypes {
		out = append(out, t)
	}
	return out
}

// Decode parses and validates one client event strictly. Errors are
// *DecodeError values wrapping one of the sentinel errors above.
func Decode(data []byte) (Client, error) {
	if len(data) > MaxEventBytes {
		return nil, &DecodeError{Err: ErrTooLarge, Detail: fmt.Sprintf("%d bytes, at most %d", len(data), MaxEventBytes)}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		detail := "not a JSON object"
		var te *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &te) {
			detail = err.Error()
		}
		return nil, &DecodeError{Err: ErrInvalidJSON, Detail: detail}
	}
	rawType, ok := fields["type"]
	if !ok {
		return nil, &DecodeError{Field: "type", Err: ErrMissing, Detail: "every event needs a type"}
	}
	var typ Type
	if err := json.Unmarshal(rawType, &typ); err != nil {
		return nil, &DecodeError{Field: "type", Err: ErrWrongType, Detail: "must be a string"}
	}
	mk, ok := clientTypes[typ]
	if !ok {
		return nil, &DecodeError{EventType: typ, Field: "type", Err: ErrUnknownType, Detail: fmt.Sprintf("%.64q", string(typ))}
	}
	allowed := fieldsOf[typ]
	for name := range fields {
		if !allowed[name] {
			return nil, &DecodeError{EventType: typ, Field: clip(name), Err: ErrUnknownField}
		}
	}
	ev := mk()
	delete(fields, "type")
	if len(fields) > 0 {
		// Re-encode without the type so the payload struct decodes strictly.
		body, err := json.Marshal(fields)
		if err != nil {
			return nil, &DecodeError{EventType: typ, Err: ErrInvalidJSON, Detail: err.Error()}
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(ev); err != nil {
			return nil, fromJSONError(typ, err)
		}
	}
	if err := ev.Validate(); err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			de.EventType = typ
			return nil, de
		}
		return nil, &DecodeError{EventType: typ, Err: ErrInvalidValue, Detail: err.Error()}
	}
	return ev, nil
}

func fromJSONError(typ Type, err error) *DecodeError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		return &DecodeError{EventType: typ, Field: field, Err: ErrWrongType, Detail: "want " + jsonKind(te.Type.Kind()) + ", got " + te.Value}
	}
	// encoding/json reports unknown nested fields only as text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &DecodeError{EventType: typ, Field: clip(strings.Trim(name, `"`)), Err: ErrUnknownField}
	}
	return &DecodeError{EventType: typ, Err: ErrInvalidJSON, Detail: err.Error()}
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}

func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max]
}
