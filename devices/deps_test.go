package devices_test

import (
	"testing"

	"github.com/veraneural/vera-gateway/fixtures/deptest"
)

// TestDeps guards BRIEF §2 on devices' whole build graph: device profiles
// and negotiation are data, read by the gateway, never reaching into it,
// the network or the test fixtures.
func TestDeps(t *testing.T) {
	const mod = "github.com/veraneural/vera-gateway"
	deptest.Checker{
		Pkgs: []string{mod + "/devices/..."},
		Tags: "nolibopusfile",
		BadDeps: map[string]string{
			mod + "/gateway/...":  "devices never imports the gateway; the gateway negotiates with devices",
			mod + "/fixtures/...": "the test fixtures are for tests and cmd/vera-replay only",
			"net":                 "device profiles make no network calls",
			"net/http":            "device profiles make no network calls",
			"github.com/prometheus/client_golang/...": "metrics pull in net/http; the gateway exports them",
		},
	}.Check(t)
}
