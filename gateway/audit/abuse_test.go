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

// Attacks on the audit routes, each with the refusal it must get.
// THREATS.md lists them with their mitigations.

// TestAbuseSafetyCountsPerPartner: GET /v1/audit/safety once showed one
// partner's crisis counts to another. Each partner's report holds only its
// own sessions' cards; the deployment's totals stay whole.
func TestAbuseSafetyCountsPerPartner(t *testing.T) {
	c := safety.NewCounters(gateway.NewSafetyCounters(prometheus.NewRegistry()))
	for i := 0; i < 3; i++ {
		c.Partner("partner-a").CardShown(safety.LevelCrisis, "US", safety.SurfaceHUD)
	}
	c.Partner("partner-a").CardSpoken(safety.LevelCrisis, "US", safety.SurfaceVoice)
	c.Partner("partner-b").CardShown(safety.LevelElevated, "GB", safety.SurfaceScreen)
	cfg := gateway.DefaultConfig()
	cfg.Auth.Keys = []gateway.KeyConfig{
		{ID: "partner-a", Secret: "vera_sk_test_partner_a_0123456789", Scopes: []string{gateway.ScopeAuditRead}},
		{ID: "partner-b", Secret: "vera_sk_test_partner_b_0123456789", Scopes: []string{gateway.ScopeAuditRead}},
		{ID: "partner-c", Secret: "vera_sk_test_partner_c_0123456789", Scopes: []string{gateway.ScopeAuditRead}},
	}
	s, err := gateway.New(cfg, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount(audit.SafetyRoute(c))
	get := func(key string) safety.CountersSnapshot {
		req := httptest.NewRequest(http.MethodGet, "/v1/audit/safety", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		var snap safety.CountersSnapshot
		if err := json.Unmarshal(rec.Body.Bytes(), &snap); rec.Code != 200 || err != nil {
			t.Fatalf("GET = %d %s (%v)", rec.Code, rec.Body, err)
		}
		return snap
	}
	b := get("vera_sk_test_partner_b_0123456789")
	if len(b.Rows) != 1 || b.Rows[0].Level != "elevated" || b.Totals[safety.EventShown] != 1 || b.Totals[safety.EventSpoken] != 0 {
		t.Fatalf("partner b's report %+v, want only its own elevated card", b)
	}
	a := get("vera_sk_test_partner_a_0123456789")
	if a.Totals[safety.EventShown] != 3 || a.Totals[safety.EventSpoken] != 1 {
		t.Fatalf("partner a's report %+v", a)
	}
	if c := get("vera_sk_test_partner_c_0123456789"); len(c.Rows) != 0 || c.Totals[safety.EventShown] != 0 {
		t.Fatalf("partner c with no sessions sees %+v", c)
	}
	if all := c.Snapshot(); all.Totals[safety.EventShown] != 4 {
		t.Fatalf("deployment totals %+v, want 4 shown", all)
	}
}
