package gateway_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/safety"
)

func gatherCounters(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetCounter().GetValue()
		}
	}
	return out
}

// safety.Counters through the gateway's Prometheus sink: the exported
// names and labels, bounded; a second set on one registry reuses the
// collectors.
func TestSafetyCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	sink := gateway.NewSafetyCounters(reg)
	if sink.Err() != nil {
		t.Fatal(sink.Err())
	}
	c := safety.NewCounters(sink)
	c.CardShown(safety.LevelCrisis, "us", safety.SurfaceHUD)
	c.CardShown(safety.LevelCrisis, "US", safety.SurfaceHUD)
	c.CardSpoken(safety.LevelCrisis, "US", safety.SurfaceVoice)
	c.CardAcked(safety.LevelElevated, "Jane Doe <jane@example.com>", "toaster")
	c.CardShown(safety.Level(9), "", safety.SurfaceScreen)
	got := gatherCounters(t, reg)
	want := map[string]float64{
		"vera_safety_cards_shown_total{level=crisis,region=US,surface=hud}":          2,
		"vera_safety_cards_spoken_total{level=crisis,region=US,surface=voice}":       1,
		"vera_safety_cards_acked_total{level=elevated,region=unknown,surface=other}": 1,
		"vera_safety_cards_shown_total{level=unknown,region=unknown,surface=screen}": 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	sink2 := gateway.NewSafetyCounters(reg)
	if sink2.Err() != nil {
		t.Fatal(sink2.Err())
	}
	safety.NewCounters(sink2).CardShown(safety.LevelCrisis, "US", safety.SurfaceHUD)
	if got := gatherCounters(t, reg)["vera_safety_cards_shown_total{level=crisis,region=US,surface=hud}"]; got != 3 {
		t.Errorf("after re-register: %v, want 3", got)
	}
}
