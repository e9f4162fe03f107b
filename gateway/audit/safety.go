package audit

import (
	"net/http"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/safety"
)

// SafetyCounters are the safety referral counters as their route reads
// them (*safety.Counters).
type SafetyCounters interface {
	Snapshot() safety.CountersSnapshot
}

// SafetyRoute is GET /v1/audit/safety (scope audit:read): how many safety
// cards were shown, acknowledged and spoken, by level, region and surface
// kind. The counters hold no text and no identifiers, so every partner with
// the scope reads the same figures.
func SafetyRoute(c SafetyCounters) gateway.Route {
	return gateway.Route{Method: http.MethodGet, Path: "/v1/audit/safety", Scope: gateway.ScopeAuditRead,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gateway.WriteJSON(w, http.StatusOK, c.Snapshot())
		})}
}
