package glasses

import (
	"testing"

	"go.uber.org/goleak"
)

// The package starts no goroutines (Queue is driven by its owner); keep it so.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
