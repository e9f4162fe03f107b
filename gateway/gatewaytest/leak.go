package gatewaytest

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// leakWait is how long LeakGuard waits for goroutines to end.
var leakWait = 15 * time.Second

// LeakGuard fails t when a goroutine started during the test outlives it
// (pion's CheckRoutines pattern, on goleak): the goroutines running now
// are ignored, and the check runs after every cleanup registered later,
// retrying for a while, since a closed peer connection's goroutines take
// a moment to return. NewStack calls it, so every test on a stack has its
// own guard and a leak names the test that made it, not the package.
func LeakGuard(t testing.TB) {
	t.Helper()
	current := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		deadline := time.Now().Add(leakWait)
		for {
			err := goleak.Find(current)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutines outlived the test: %v", err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}
