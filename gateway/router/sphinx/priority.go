package sphinx

import "context"

// Priority orders turns waiting for a decoder and decoding work waiting for
// a worker: raised first, then first come, first served.
type Priority int

const (
	// PriorityNormal is an ordinary turn.
	PriorityNormal Priority = iota
	// PriorityRaised is a turn of a session whose safety level is raised
	// (elevated or crisis): it goes to the front of every queue and may use
	// the pool's safety reserve.
	PriorityRaised
)

type priorityKey struct{}

// WithPriority returns ctx carrying p, which Pool.Acquire reads: the
// listen request crosses the router unchanged, and only the embedded
// recogniser, which queues, looks at it.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityOf is ctx's priority (PriorityNormal when it carries none).
func PriorityOf(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok {
		return p
	}
	return PriorityNormal
}
