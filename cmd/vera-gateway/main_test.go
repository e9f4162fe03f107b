package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testFileConfig is the default config with media on an ephemeral
// loopback UDP port, so tests never collide with a gateway already running
// on the machine (make run holds 7882).
func testFileConfig() fileConfig {
	cfg := defaultFileConfig()
	cfg.RTC.UDPPort = 0
	cfg.RTC.UDPAddress, cfg.RTC.LoopbackOnly, cfg.RTC.IncludeLoopback = "127.0.0.1", true, true
	return cfg
}
