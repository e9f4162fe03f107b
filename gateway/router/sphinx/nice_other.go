//go:build !linux

package sphinx

import "errors"

// lowerThreadPriority is Linux-only (per-thread nice); elsewhere the
// workers run at the process's priority, still bounded in number.
func lowerThreadPriority(int) error { return errors.New("sphinx: per-thread priority is Linux-only") }

// onMainThread is not known here; the workers are not niced anyway.
func onMainThread() bool { return false }
