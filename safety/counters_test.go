package safety

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
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

func TestCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := NewCounters(reg)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	c.CardShown(LevelCrisis, "us", SurfaceHUD)
	c.CardShown(LevelCrisis, "US", SurfaceHUD)
	c.CardSpoken(LevelCrisis, "US", SurfaceVoice)
	c.CardAcked(LevelElevated, "Jane Doe <jane@example.com>", "toaster")
	c.CardShown(Level(9), "", SurfaceScreen)

	got := gather(t, reg)
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
	snap := c.Snapshot()
	if snap.Totals[EventShown] != 3 || snap.Totals[EventSpoken] != 1 || snap.Totals[EventAcked] != 1 {
		t.Errorf("totals = %v", snap.Totals)
	}
	b, _ := json.Marshal(snap)
	for _, leak := range []string{"jane", "Jane", "example.com", "toaster"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("snapshot leaks %q: %s", leak, b)
		}
	}
	if snap.Rows[0].Event != EventAcked {
		t.Errorf("rows not sorted: %+v", snap.Rows)
	}

	// A second set on the same registry reuses the collectors.
	c2 := NewCounters(reg)
	if c2.Err() != nil {
		t.Fatal(c2.Err())
	}
	c2.CardShown(LevelCrisis, "US", SurfaceHUD)
	if got := gather(t, reg)["vera_safety_cards_shown_total{level=crisis,region=US,surface=hud}"]; got != 3 {
		t.Errorf("after re-register: %v, want 3", got)
	}
}

func TestCountersNilAndConcurrent(t *testing.T) {
	var nilC *Counters
	nilC.CardShown(LevelCrisis, "US", SurfaceHUD)
	if s := nilC.Snapshot(); len(s.Rows) != 0 || nilC.Err() != nil {
		t.Fatal("nil counters must be inert")
	}
	c := NewCounters(nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.CardShown(LevelElevated, "GB", SurfaceScreen)
			}
		}()
	}
	wg.Wait()
	if n := c.Snapshot().Totals[EventShown]; n != 800 {
		t.Fatalf("shown = %d, want 800", n)
	}
}
