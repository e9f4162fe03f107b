package tools

import "errors"

var (
	// ErrLimit: the partner already holds Config.MaxPerPartner tools.
	ErrLimit = errors.New("tool limit reached")
	// ErrUnknownTool: the partner has no tool of that name.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrInvalid: a schema or an input breaks the rules; the error is a
	// *PathError naming where.
	ErrInvalid = errors.New("invalid")
)

// Unwrap makes every PathError match ErrInvalid.
func (e *PathError) Unwrap() error { return ErrInvalid }
