package main

import (
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// TestBrowserVoiceRelay is TestBrowserVoice with the web client allowed
// only the TURN relay (?relay=1: iceTransportPolicy "relay") and the
// gateway minting credentials for a real coturn (rtc.turn). The page knows
// no TURN server before its first answer, so its offer has no candidates;
// it takes the servers from the answer's Link headers and restarts ICE by
// PATCH, gathering relay candidates with the minted credential, and the
// spoken turn then goes both ways through coturn.
func TestBrowserVoiceRelay(t *testing.T) {
	bin := fixtures.ChromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (CI installs it via .ci/deps.sh)")
	}
	if fixtures.TURNServerPath() == "" {
		t.Skip("turnserver not installed (Debian package coturn; .ci/deps.sh installs it on the test path)")
	}
	if fixtures.InLoopbackNamespace(t, "TestBrowserVoiceRelay") {
		return
	}
	const secret = "browser-relay-static-auth-secret-0123456789"
	runBrowserVoice(t, bin, micFile(t), browserVoiceRun{
		tweak: func(t *testing.T, cfg *fileConfig) {
			turn := fixtures.StartTURNServerForTest(t, secret) // installed: checked above
			cfg.RTC.TURN = rtc.TURNConfig{URLs: []string{turn.URL("udp")}, SecretEnv: "TURN_SECRET", Secret: secret, TTLSeconds: 600}
		},
		query: "&relay=1",
		check: func(t *testing.T, rep voiceReport) {
			if rep.ICERestarts < 1 {
				t.Errorf("the page made %d ICE restarts, want one to take up the answer's TURN server", rep.ICERestarts)
			}
			if rep.Path == nil || rep.Path.Local != "relay" {
				t.Fatalf("selected path %+v, want the page's relay candidate", rep.Path)
			}
			t.Logf("ICE restarts %d (%q); selected path %+v", rep.ICERestarts, rep.RestartWhy, *rep.Path)
		},
	})
}
