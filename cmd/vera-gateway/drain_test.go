package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// TestDrainWaitsForLiveVoiceSessions: after SIGTERM a live call keeps going
// until it hangs up or the grace runs out; new calls get 503 meanwhile.
func TestDrainWaitsForLiveVoiceSessions(t *testing.T) {
	cfg := testFileConfig()
	a, srv := startApp(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := srv.URL + "/v1/voice/sessions"
	dial := func() (*fixtures.Client, error) {
		return fixtures.Dial(ctx, fixtures.ClientOptions{URL: url, LoopbackOnly: true})
	}

	// The grace runs out: the call is ended by the gateway.
	c, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	a.srv.StartDrain()
	var he *fixtures.HTTPError
	if _, err := dial(); !errors.As(err, &he) || he.Status != 503 {
		t.Fatalf("new call while draining: %v, want HTTP 503", err)
	}
	gctx, gcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	a.drain(gctx)
	gcancel()
	if gctx.Err() == nil {
		t.Fatal("drain returned before the grace with a call still live")
	}
	if n := a.rtc.Len(); n != 0 {
		t.Fatalf("%d voice sessions left after drain", n)
	}
}

// TestDrainEndsWhenCallsHangUp: drain returns as soon as the last call ends.
func TestDrainEndsWhenCallsHangUp(t *testing.T) {
	cfg := testFileConfig()
	a, srv := startApp(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: srv.URL + "/v1/voice/sessions", LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	a.srv.StartDrain()
	go func() {
		time.Sleep(200 * time.Millisecond) // the caller finishes its sentence
		_ = c.Hangup(context.Background())
	}()
	gctx, gcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer gcancel()
	a.drain(gctx)
	if gctx.Err() != nil {
		t.Fatal("drain waited the whole grace although the call hung up")
	}
	_ = c.Close(context.Background())
}
