package voice

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain closes the router the tests share (its embedded decoders) before
// checking that no goroutine outlived its owner.
func TestMain(m *testing.M) {
	code := m.Run()
	closeSharedRouter()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
