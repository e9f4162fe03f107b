package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// startProfile asks the gateway's debug listener (base, e.g.
// http://127.0.0.1:6060) for a CPU profile of the next d (whole seconds,
// at least 1) and writes it to out. It returns at once; wait joins the
// request and returns its error. The profile covers the measured window
// exactly, which a profile started by hand cannot (the window starts only
// when every session is up or has failed).
func startProfile(ctx context.Context, hc *http.Client, base string, d time.Duration, out string) (wait func() error) {
	secs := max(int(d/time.Second), 1)
	done := make(chan error, 1)
	go func() { done <- fetchProfile(ctx, hc, base, secs, out) }()
	return func() error { return <-done }
}

func fetchProfile(ctx context.Context, hc *http.Client, base string, secs int, out string) error {
	u, err := url.Parse(strings.TrimRight(base, "/") + "/debug/pprof/profile")
	if err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	u.RawQuery = fmt.Sprintf("seconds=%d", secs)
	// The profile takes secs to come back; the shared client's timeout is
	// for short requests.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	c := *hc
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("pprof: %s: HTTP %d: %s", u, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("pprof: write %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	return nil
}
