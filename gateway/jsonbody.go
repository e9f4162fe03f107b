package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// DecodeJSON decodes the request body into v strictly: the content type must
// be JSON; the body's shape is bounded before decoding (MaxJSONDepth,
// MaxJSONValues); a key given twice, two keys that differ only in case, or
// a field spelled in another case are refused; unknown fields, trailing
// data and wrong types are refused with a 400 naming the field; a body over
// the route's limit is a 413. The body is already bounded by the server's
// middleware.
func DecodeJSON(r *http.Request, v any) *Error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return &Error{Type: InvalidRequest, Message: "Content-Type must be application/json", HTTPStatus: http.StatusUnsupportedMediaType}
		}
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return jsonError(err)
	}
	return decodeJSONBytes(raw, v)
}

// decodeJSONBytes is DecodeJSON on a body already read.
func decodeJSONBytes(raw []byte, v any) *Error {
	if e := checkJSONShape(raw, v); e != nil {
		return e
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return Errorf(InvalidRequest, "request body has data after the JSON object")
	}
	return nil
}

func jsonError(err error) *Error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.Is(err, io.EOF):
		return Errorf(InvalidRequest, "request body is empty: a JSON object is required")
	case errors.As(err, &mbe):
		return tooLarge(mbe.Limit)
	case errors.As(err, &syn):
		return Errorf(InvalidRequest, "malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Errorf(InvalidRequest, "malformed JSON: unexpected end of body")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return Errorf(InvalidRequest, "request body must be a JSON object, not %s", typ.Value)
		}
		return Errorf(InvalidRequest, "field %q must be %s, not %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return Errorf(InvalidRequest, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return Errorf(InvalidRequest, "invalid JSON body: %v", err)
	}
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	default:
		return k
	}
}

func tooLarge(limit int64) *Error {
	return &Error{Type: InvalidRequest, Message: fmt.Sprintf("request body is larger than %d bytes", limit), HTTPStatus: http.StatusRequestEntityTooLarge}
}
