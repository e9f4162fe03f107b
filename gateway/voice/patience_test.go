package voice

import (
	"testing"

	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/gateway/event"
)

// TestPatienceHint: the newest hello's patience reaches the turn detector
// (a missing one is 1), widening the fixed and the adaptive waits.
func TestPatienceHint(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      turn.Config
		patience []float64 // hellos in order
		wantMs   int
	}{
		{"fixed, no hello", turn.FixedConfig(), nil, 500},
		{"fixed, patience 2", turn.FixedConfig(), []float64{2}, 1000},
		{"fixed, patience 3 then a hello without it", turn.FixedConfig(), []float64{3, 0}, 500},
		{"adaptive, patience 1.5", turn.AdaptiveConfig(), []float64{1.5}, 3000},
		{"adaptive, patience 3", turn.AdaptiveConfig(), []float64{3}, 6000},
	} {
		cfg := pipeline.DefaultConfig()
		cfg.Turn = c.cfg
		in, err := pipeline.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var p patienceHint
		p.apply(in) // before any hello: as configured
		for _, f := range c.patience {
			p.hello(&event.Hello{Device: "phone", Patience: f})
			p.apply(in)
		}
		if got := in.Turn().MaxWaitMs(); got != c.wantMs {
			t.Errorf("%s: longest wait %d ms, want %d", c.name, got, c.wantMs)
		}
	}
}
