package rtc

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The floor benchmarks re-execute this binary as their client process.
	if spec := os.Getenv(benchClientsEnv); spec != "" {
		os.Exit(runBenchClients(spec))
	}
	goleak.VerifyTestMain(m)
}
