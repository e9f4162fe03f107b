package webhook

import "errors"

var (
	// ErrUnknownEvent: an event type not in EventTypes.
	ErrUnknownEvent = errors.New("unknown event type")
	// ErrQueueFull: Config.MaxPending deliveries are waiting.
	ErrQueueFull = errors.New("webhook queue is full")
	// ErrClosed: the dispatcher is closed.
	ErrClosed = errors.New("webhook dispatcher is closed")
	// ErrNoSecret: an endpoint was given without a signing secret.
	ErrNoSecret = errors.New("endpoint has no secret")
)
