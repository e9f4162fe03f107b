package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// ErrorType is one of the Partner API's error types; each has one status.
type ErrorType string

const (
	InvalidRequest      ErrorType = "invalid_request"
	AuthenticationError ErrorType = "authentication_error"
	PermissionError     ErrorType = "permission_error"
	NotFound            ErrorType = "not_found"
	Conflict            ErrorType = "conflict"
	RateLimited         ErrorType = "rate_limited"
	EngineUnavailable   ErrorType = "engine_unavailable"
	// Unavailable is the gateway's own type for 503: draining or over its
	// admission limit. Clients retry after Retry-After.
	Unavailable ErrorType = "unavailable"
	// InternalError is never expected; it exists so that a bug still leaves
	// as an envelope with a request id.
	InternalError ErrorType = "internal_error"
)

// Status returns the HTTP status of an error type.
func (t ErrorType) Status() int {
	switch t {
	case InvalidRequest:
		return http.StatusBadRequest
	case AuthenticationError:
		return http.StatusUnauthorized
	case PermissionError:
		return http.StatusForbidden
	case NotFound:
		return http.StatusNotFound
	case Conflict:
		return http.StatusConflict
	case RateLimited:
		return http.StatusTooManyRequests
	case EngineUnavailable:
		return http.StatusBadGateway
	case Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// Error is an API error: a type, a message safe to show the caller, and an
// optional status that overrides the type's own (413 for oversized bodies,
// 415 for a wrong content type, 412 for a failed precondition).
type Error struct {
	Type       ErrorType
	Message    string
	HTTPStatus int
	// RetryAfter, when positive, is sent as Retry-After in whole seconds.
	RetryAfter int
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Type, e.Message) }

// Status is the HTTP status the error leaves with.
func (e *Error) Status() int {
	if e.HTTPStatus != 0 {
		return e.HTTPStatus
	}
	return e.Type.Status()
}

// Errorf builds an *Error with a formatted message.
func Errorf(t ErrorType, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...)}
}

type envelope struct {
	Error envelopeBody `json:"error"`
}

type envelopeBody struct {
	Type      ErrorType `json:"type"`
	Message   string    `json:"message"`
	RequestID string    `json:"request_id"`
}

// WriteError writes err as the Partner API envelope — the one writer every
// HTTP handler of the gateway uses. Errors that are not *Error become
// internal_error with a generic message: internals never leak. The
// envelope's request_id is the one in the X-Request-Id response header:
// the server's middleware set both; a handler served without it (a
// sub-package's own tests) gets the caller's valid X-Request-Id or a fresh
// one, set on the response too.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *Error
	if !errors.As(err, &ae) {
		ae = &Error{Type: InternalError, Message: "internal error"}
	}
	h := w.Header()
	rid := RequestID(r.Context())
	if rid == "" {
		rid = h.Get("X-Request-Id")
	}
	if rid == "" {
		if rid = r.Header.Get("X-Request-Id"); !validRequestID(rid) {
			rid = newRequestID()
		}
		h.Set("X-Request-Id", rid)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if ae.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	w.WriteHeader(ae.Status())
	_ = json.NewEncoder(w).Encode(envelope{Error: envelopeBody{
		Type: ae.Type, Message: ae.Message, RequestID: rid,
	}})
}

// WriteJSON writes v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
