package audit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/safety"
)

// TestSafetyRoute: GET /v1/audit/safety serves the referral counters to a
// key with audit:read, and refuses one without it.
func TestSafetyRoute(t *testing.T) {
	c := safety.NewCounters(gateway.NewSafetyCounters(prometheus.NewRegistry()))
	a := c.Partner("partner-a")
	a.CardShown(safety.LevelCrisis, "US", safety.SurfaceHUD)
	a.CardShown(safety.LevelCrisis, "US", safety.SurfaceHUD)
	a.CardAcked(safety.LevelCrisis, "US", safety.SurfaceHUD)
	cfg := gateway.DefaultConfig()
	cfg.Auth.Keys = []gateway.KeyConfig{
		{ID: "partner-a", Secret: "vera_sk_test_partner_a_0123456789", Scopes: []string{gateway.ScopeAuditRead}},
		{ID: "partner-b", Secret: "vera_sk_test_partner_b_0123456789", Scopes: []string{gateway.ScopeSessionsWrite}},
	}
	s, err := gateway.New(cfg, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount(audit.SafetyRoute(c))
	get := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/v1/audit/safety", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	rec := get("vera_sk_test_partner_a_0123456789")
	var snap safety.CountersSnapshot
	if err := json.Unmarshal(rec.Body.Bytes(), &snap); rec.Code != 200 || err != nil {
		t.Fatalf("GET = %d %s (%v)", rec.Code, rec.Body, err)
	}
	if snap.Totals[safety.EventShown] != 2 || snap.Totals[safety.EventAcked] != 1 || len(snap.Rows) != 2 {
		t.Fatalf("snapshot %+v", snap)
	}
	if rec := get("vera_sk_test_partner_b_0123456789"); rec.Code != http.StatusForbidden {
		t.Fatalf("without audit:read = %d", rec.Code)
	}
}
