package inbox

import "errors"

var (
	// ErrUnknownAdmission: Admit or Refuse named no held source of the
	// session.
	ErrUnknownAdmission = errors.New("inbox: unknown admission")
	// ErrMissingDeps: Options lacks Lookup or Deliver.
	ErrMissingDeps = errors.New("inbox: Lookup and Deliver are required")
)
