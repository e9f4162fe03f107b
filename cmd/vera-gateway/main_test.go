package main

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	if code == 0 {
		if err := goleak.Find(redistest.LeakOptions...); err != nil {
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
	// These tests check what a transcript does, not the busy answer (gateway/voice
	// tests that): give a recogniser slowed by -race and a shared box time to finish.
	cfg.Voice.ListenWaitMs = 5000
	return cfg
}

// startApp builds the wired app from cfg and serves it on a loopback
// httptest server; both are closed when the test ends.
func startApp(t *testing.T, cfg fileConfig) (*app, *httptest.Server) {
	t.Helper()
	a, err := newApp(cfg, envMap(nil), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		a.close()
	})
	return a, srv
}
