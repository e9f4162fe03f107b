package router

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/safety"
)

// Sentinel errors. Every error the router returns wraps one of them or a
// context error, so callers branch with errors.Is / errors.As.
var (
	// ErrUnknownSlot: the request names a slot the configuration lacks.
	ErrUnknownSlot = errors.New("router: unknown slot")
	// ErrNoModel is wrapped by *NoModelError: no model of the slot answered.
	ErrNoModel = errors.New("router: no model answered")
	// ErrBadRequest: the request itself is invalid (empty text, no messages).
	ErrBadRequest = errors.New("router: bad request")
	// ErrClosed: the router or session was closed.
	ErrClosed = errors.New("router: closed")
	// ErrUnsupported: the provider cannot serve this capability.
	ErrUnsupported = errors.New("router: capability not supported by provider")
)

// Kind classifies why an attempt failed; it is the "kind" label of the
// failures metric and decides retry: only KindRateLimited, KindUnavailable
// and KindConnection are retried on the same model.
type Kind string

const (
	KindTTFT          Kind = "ttft"           // no useful token within ttft_ms: next model at once
	KindTimeout       Kind = "timeout"        // the model's overall timeout_ms ran out
	KindRateLimited   Kind = "rate_limited"   // 429: retried after Retry-After
	KindUnavailable   Kind = "unavailable"    // 502/503/504 or engine_unavailable: retried
	KindConnection    Kind = "connection"     // dial/reset/truncated before output: retried
	KindProtocol      Kind = "protocol"       // malformed, wrong content type, oversized: next model
	KindRejected      Kind = "rejected"       // 4xx other than 429: next model
	KindTruncated     Kind = "truncated"      // failed after output was streamed to the caller: stop
	KindBreakerOpen   Kind = "breaker_open"   // skipped: circuit breaker open
	KindContextWindow Kind = "context_window" // skipped: request does not fit
	KindCanceled      Kind = "canceled"       // the caller's context ended
	KindAborted       Kind = "aborted"        // the caller's callback returned an error
	KindServer        Kind = "server_error"   // other 5xx: next model
	KindInternal      Kind = "internal"       // local engine failure
)

func (k Kind) retryable() bool {
	return k == KindRateLimited || k == KindUnavailable || k == KindConnection
}

// countsAgainstBreaker says whether a failure of this kind is evidence that
// the model is unhealthy (a rejected request or a caller cancel is not).
func (k Kind) countsAgainstBreaker() bool {
	switch k {
	case KindRejected, KindCanceled, KindAborted, KindBreakerOpen, KindContextWindow:
		return false
	}
	return true
}

// ProviderError is a failed attempt as a provider reports it. Providers
// return it (wrapped or not); other errors are classified as KindInternal
// or, for network errors, KindConnection.
type ProviderError struct {
	Kind       Kind
	Status     int           // HTTP status, 0 when not HTTP
	RetryAfter time.Duration // from Retry-After, 0 when absent
	Type       string        // engine error type, e.g. "invalid_request"
	RequestID  string        // engine request_id, when given
	Err        error
	// Safety is the engine's verdict read from a reply that was otherwise
	// unusable (no readable message); nil when there was none. Converse
	// keeps it: a valid safety object is never lost to another field.
	Safety *safety.Assessment
}

func (e *ProviderError) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Kind))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d", e.Status)
		if e.Type != "" {
			fmt.Fprintf(&b, " %s", e.Type)
		}
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request_id %s]", e.RequestID)
	}
	return b.String()
}

func (e *ProviderError) Unwrap() error { return e.Err }

func perr(kind Kind, format string, args ...any) *ProviderError {
	return &ProviderError{Kind: kind, Err: fmt.Errorf(format, args...)}
}

// Attempt records one try of one model (or its skip).
type Attempt struct {
	Model    string
	Provider string
	Kind     Kind  // why it failed or was skipped
	Err      error // the failure; for skips a description
	Duration time.Duration
	Retry    int // 0 for the first try of the model, 1.. for retries
}

func (a Attempt) String() string {
	s := fmt.Sprintf("%s (%s)", a.Model, a.Provider)
	if a.Retry > 0 {
		s += fmt.Sprintf(" retry %d", a.Retry)
	}
	s += ": " + string(a.Kind)
	if a.Err != nil {
		s += ": " + a.Err.Error()
	}
	if a.Duration > 0 {
		s += fmt.Sprintf(" after %s", a.Duration.Round(time.Millisecond))
	}
	return s
}

// NoModelError says no model of a slot answered, and why each attempt
// failed. The HTTP layer maps it to 502 engine_unavailable.
type NoModelError struct {
	Slot     string
	Attempts []Attempt
}

func (e *NoModelError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "router: slot %q: no model answered", e.Slot)
	if len(e.Attempts) == 0 {
		b.WriteString(" (no models)")
	}
	for i, a := range e.Attempts {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(a.String())
	}
	return b.String()
}

// Summary is the message for people outside the gateway (the HTTP error
// envelope): each attempt's model, provider, kind and HTTP status, without
// provider error text, which can carry internal URLs. Log Error() instead.
func (e *NoModelError) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no model of slot %q answered", e.Slot)
	for i, a := range e.Attempts {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s): %s", a.Model, a.Provider, a.Kind)
		var pe *ProviderError
		if errors.As(a.Err, &pe) && pe.Status != 0 {
			fmt.Fprintf(&b, " (HTTP %d)", pe.Status)
		}
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrNoModel) hold.
func (e *NoModelError) Unwrap() error { return ErrNoModel }

// Safety returns the engine safety verdicts that failed attempts still
// carried (a reply with a valid safety object but no readable message),
// merged never-downgrade; ok is false when no attempt carried one. A turn
// that failed can still show the card the engine asked for.
func (e *NoModelError) Safety() (a safety.Assessment, ok bool) {
	for _, at := range e.Attempts {
		var pe *ProviderError
		if errors.As(at.Err, &pe) && pe.Safety != nil {
			a, ok = mergeSalvaged(a, ok, *pe.Safety), true
		}
	}
	return a, ok
}

// mergeSalvaged folds a salvaged engine verdict into acc (held when
// have): the higher level, display if either requires it, every resource.
func mergeSalvaged(acc safety.Assessment, have bool, s safety.Assessment) safety.Assessment {
	if !have {
		return s
	}
	m := safety.Merge(acc, s)
	m.Source = safety.SourceEngine
	return m
}

// callbackError carries an error returned by the caller's own callback
// (onDelta, onAudio): it ends the call at once and is returned unchanged.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }
func (e *callbackError) Unwrap() error { return e.err }

// guard wraps a caller callback so its errors are recognised as the caller's.
func guard[T any](f func(T) error) func(T) error {
	if f == nil {
		return nil
	}
	return func(v T) error {
		if err := f(v); err != nil {
			return &callbackError{err: err}
		}
		return nil
	}
}
