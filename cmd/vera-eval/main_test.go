package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine of the end-of-turn sweep or
// the recogniser runs outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
