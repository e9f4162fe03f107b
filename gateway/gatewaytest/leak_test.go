package gatewaytest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB whose cleanups and errors the test runs and
// reads itself.
type recorder struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }

func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestLeakGuard: a goroutine started under the guard and still running at
// the end is reported, naming its function; one that ends is not.
func TestLeakGuard(t *testing.T) {
	defer func(w time.Duration) { leakWait = w }(leakWait)
	leakWait = time.Second
	stop := make(chan struct{})
	leaky := &recorder{TB: t}
	LeakGuard(leaky)
	go blockUntil(stop)
	leaky.end()
	close(stop)
	if len(leaky.errs) != 1 || !strings.Contains(leaky.errs[0], "blockUntil") {
		t.Fatalf("a leaked goroutine: errors %q", leaky.errs)
	}

	clean := &recorder{TB: t}
	LeakGuard(clean)
	fin := make(chan struct{})
	go func() { blockUntil(fin) }()
	close(fin)
	clean.end()
	if len(clean.errs) != 0 {
		t.Fatalf("no leak, yet: %q", clean.errs)
	}
}

func blockUntil(c chan struct{}) { <-c }
