package glasses_test

import (
	"testing"

	"github.com/veraneural/vera-gateway/fixtures/deptest"
)

// TestDeps guards BRIEF §2 on glasses' whole build graph: cards, layout,
// rendering and paging never import the gateway, anything networked or
// the test fixtures, directly or through a dependency.
func TestDeps(t *testing.T) {
	const mod = "github.com/veraneural/vera-gateway"
	deptest.Checker{
		Pkgs: []string{mod + "/glasses/..."},
		Tags: "nolibopusfile",
		BadDeps: map[string]string{
			mod + "/gateway/...":  "glasses never imports the gateway; the session lays cards out through glasses",
			mod + "/fixtures/...": "the test fixtures are for tests and cmd/vera-replay only",
			"net":                 "layout and rendering make no network calls",
			"net/http":            "layout and rendering make no network calls",
			"crypto/tls":          "layout and rendering make no network calls",
			"github.com/prometheus/client_golang/...": "metrics pull in net/http; the gateway exports them",
		},
	}.Check(t)
}
