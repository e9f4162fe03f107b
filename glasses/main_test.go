package glasses

import (
	"testing"

	"go.uber.org/goleak"
)

// The package starts no goroutines; keep it so.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
