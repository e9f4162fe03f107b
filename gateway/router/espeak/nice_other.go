//go:build !linux

package espeak

// lowerPriority is Linux-only; elsewhere espeak-ng runs at the gateway's
// priority, still bounded in number.
func lowerPriority(int, int) error { return nil }
