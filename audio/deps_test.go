package audio_test

import (
	"testing"

	"github.com/veraneural/vera-gateway/fixtures/deptest"
)

// TestDeps guards BRIEF §2 on the whole build graph of audio and its
// sub-packages: the media core never imports the gateway, anything
// networked or the test fixtures, directly or through a dependency.
func TestDeps(t *testing.T) {
	const mod = "github.com/veraneural/vera-gateway"
	deptest.Checker{
		Pkgs: []string{mod + "/audio/..."},
		Tags: "nolibopusfile",
		BadDeps: map[string]string{
			mod + "/gateway/...":                      "audio never imports the gateway; the gateway drives audio",
			mod + "/fixtures/...":                     "the test fixtures are for tests and cmd/vera-replay only",
			"net":                                     "audio makes no network calls",
			"net/http":                                "audio makes no network calls",
			"crypto/tls":                              "audio makes no network calls",
			"github.com/pion/webrtc/v4":               "transport belongs to gateway/rtc; audio takes payloads and PCM",
			"github.com/pion/ice/v4/...":              "transport belongs to gateway/rtc",
			"github.com/coder/websocket/...":          "transport belongs to the gateway",
			"github.com/prometheus/client_golang/...": "metrics pull in net/http; audio returns counters, the gateway exports them",
		},
	}.Check(t)
}
