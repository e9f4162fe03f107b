package safety_test

import (
	"testing"

	"github.com/veraneural/vera-gateway/fixtures/deptest"
)

// TestDeps guards BRIEF §2 on safety's whole build graph: the assessment,
// the catalog, the detector and the counters never import the gateway,
// anything networked or the test fixtures, directly or through a
// dependency (a metrics library would bring net/http).
func TestDeps(t *testing.T) {
	const mod = "github.com/veraneural/vera-gateway"
	deptest.Checker{
		Pkgs: []string{mod + "/safety/..."},
		Tags: "nolibopusfile",
		BadDeps: map[string]string{
			mod + "/gateway/...":  "safety never imports the gateway; the gateway asks safety",
			mod + "/fixtures/...": "the test fixtures are for tests and cmd/vera-replay only",
			mod + "/glasses/...":  "safety knows no layout; glasses lays out safety's resources",
			"net":                 "safety makes no network calls (BRIEF §2)",
			"net/http":            "safety makes no network calls (BRIEF §2)",
			"crypto/tls":          "safety makes no network calls (BRIEF §2)",
			"github.com/prometheus/client_golang/...": "metrics pull in net/http; safety counts into a CounterSink, the gateway exports it (gateway.SafetyCounters)",
		},
	}.Check(t)
}
