package gateway

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/veraneural/vera-gateway/safety"
)

// SafetyCounters is the Prometheus side of safety.Counters (a
// safety.CounterSink): vera_safety_cards_{shown,acked,spoken}_total by
// level, region and surface. The labels come bounded from safety.Counters
// (no text, no identifiers).
type SafetyCounters struct {
	vecs map[string]*prometheus.CounterVec
	err  error
}

// NewSafetyCounters creates the counters and registers them with reg (nil:
// not registered). If reg already holds them (a second gateway in one
// process, tests) the existing collectors are reused; any other
// registration error is kept for Err and counting still works.
func NewSafetyCounters(reg prometheus.Registerer) *SafetyCounters {
	c := &SafetyCounters{vecs: map[string]*prometheus.CounterVec{}}
	help := map[string]string{
		safety.EventShown:  "Safety cards with help resources shown to a person, by level, region and surface.",
		safety.EventAcked:  "Safety cards the person acknowledged, by level, region and surface.",
		safety.EventSpoken: "Safety resources spoken aloud to a person, by level, region and surface.",
	}
	for _, ev := range []string{safety.EventShown, safety.EventAcked, safety.EventSpoken} {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "vera",
			Subsystem: "safety",
			Name:      "cards_" + ev + "_total",
			Help:      help[ev],
		}, []string{"level", "region", "surface"})
		if reg != nil {
			if err := reg.Register(v); err != nil {
				var are prometheus.AlreadyRegisteredError
				if errors.As(err, &are) {
					if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
						v = existing
					}
				} else if c.err == nil {
					c.err = err
				}
			}
		}
		c.vecs[ev] = v
	}
	return c
}

// Err reports a registration failure other than "already registered".
func (c *SafetyCounters) Err() error { return c.err }

// Inc implements safety.CounterSink.
func (c *SafetyCounters) Inc(event, level, region, surface string) {
	if v := c.vecs[event]; v != nil {
		v.WithLabelValues(level, region, surface).Inc()
	}
}
