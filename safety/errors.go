package safety

import "errors"

// Sentinel errors. Callers test them with errors.Is; the package wraps them
// with the context of the failing value or key.
var (
	// ErrUnknownLevel: a level name or number outside none/elevated/crisis.
	ErrUnknownLevel = errors.New("unknown safety level")
	// ErrCatalog: a resource catalog that fails validation (missing id,
	// name, action, source_url or verified_at, duplicate id, bad action type,
	// missing pre-stored spoken form).
	ErrCatalog = errors.New("invalid resource catalog")
	// ErrConfig: a Config value out of range.
	ErrConfig = errors.New("invalid safety config")
)
