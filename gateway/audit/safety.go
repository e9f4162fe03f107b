package audit

import (
	"net/http"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/safety"
)

// SafetyCounters are the safety referral counters as their route reads
// them (*safety.Counters).
type SafetyCounters interface {
	SnapshotFor(partner string) safety.CountersSnapshot
}

// SharedSafetyCounters are counters kept in a store that may not answer
// (a cluster's, in Redis); the route asks TrySnapshotFor and answers 503
// when it fails, never a node's partial figures.
type SharedSafetyCounters interface {
	SafetyCounters
	TrySnapshotFor(partner string) (safety.CountersSnapshot, error)
}

// SafetyRoute is GET /v1/audit/safety (scope audit:read): how many safety
// cards this partner's sessions showed, had acknowledged and spoke, by
// level, region and surface kind — the referral report each partner files
// is its own, so another partner's crisis counts never appear. The
// counters hold no text and no identifiers.
func SafetyRoute(c SafetyCounters) gateway.Route {
	return gateway.Route{Method: http.MethodGet, Path: "/v1/audit/safety", Scope: gateway.ScopeAuditRead,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := gateway.PrincipalFrom(r.Context())
			if sc, ok := c.(SharedSafetyCounters); ok {
				snap, err := sc.TrySnapshotFor(p.PartnerID)
				if err != nil {
					gateway.WriteError(w, r, &gateway.Error{Type: gateway.Unavailable, RetryAfter: 1, Message: "the referral counters are unavailable; retry"})
					return
				}
				gateway.WriteJSON(w, http.StatusOK, snap)
				return
			}
			gateway.WriteJSON(w, http.StatusOK, c.SnapshotFor(p.PartnerID))
		})}
}
