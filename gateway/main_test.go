package gateway

import (
	"testing"

	"go.uber.org/goleak"
)

// The edge starts goroutines (refusals of connections over a source's
// cap, the live servers of the connection tests): none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
