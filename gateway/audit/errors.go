package audit

import "errors"

var (
	// ErrInvalid: a record misses a required field or names an unknown
	// decision.
	ErrInvalid = errors.New("audit: invalid record")
	// ErrStore: the durable store failed.
	ErrStore = errors.New("audit: store")
)
