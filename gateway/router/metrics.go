package router

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the router's Prometheus series (namespace vera, subsystem
// router), labelled by model and provider.
type metrics struct {
	attempts *prometheus.CounterVec   // model, provider, slot
	failures *prometheus.CounterVec   // model, provider, kind
	skips    *prometheus.CounterVec   // model, provider, reason
	ttft     *prometheus.HistogramVec // model, provider
	duration *prometheus.HistogramVec // model, provider
	breaker  *prometheus.GaugeVec     // model, provider
	defects  *prometheus.CounterVec   // model, defect
	// classifier is vera_safety_classifier_total (subsystem safety: it
	// counts safety verdicts, whoever serves them).
	classifier *prometheus.CounterVec // model, outcome
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "vera", "router"
	lat := []float64{0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 30}
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "attempts_total", Help: "Attempts sent to a model, retries included."},
			[]string{"model", "provider", "slot"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "failures_total", Help: "Failed attempts by kind (ttft, timeout, rate_limited, unavailable, connection, protocol, rejected, server_error, truncated, canceled, internal)."},
			[]string{"model", "provider", "kind"}),
		skips: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "skips_total", Help: "Models skipped without an attempt (breaker_open, context_window)."},
			[]string{"model", "provider", "reason"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "ttft_seconds", Help: "Time from attempt start to the first useful token.", Buckets: lat},
			[]string{"model", "provider"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "attempt_duration_seconds", Help: "Duration of an attempt, successful or not.", Buckets: lat},
			[]string{"model", "provider"}),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "breaker_state", Help: "Circuit breaker state: 0 closed, 1 half-open, 2 open."},
			[]string{"model", "provider"}),
		defects: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "reply_defects_total", Help: "Engine reply defects read around instead of failing the turn (message_unreadable, action_dropped, actions_unreadable, safety_unreadable, display_unreadable, resource_salvaged, resource_unreadable, resources_filled)."},
			[]string{"model", "defect"}),
		classifier: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: "safety",
			Name: "classifier_total", Help: "Safety-slot classifier calls by outcome (ok, late, timeout, error, malformed, breaker_open, canceled)."},
			[]string{"model", "outcome"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.attempts, m.failures, m.skips, m.ttft, m.duration, m.breaker, m.defects, m.classifier} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("router: metrics already registered (one Router per registry): %w", err)
			}
			return nil, fmt.Errorf("router: register metrics: %w", err)
		}
	}
	return m, nil
}
