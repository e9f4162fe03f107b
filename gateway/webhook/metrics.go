package webhook

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts attempt outcomes as vera_webhook_attempts_total{result}:
// delivered, retry (failed, another attempt scheduled) and failed (given
// up). Labels carry no partner or URL.
type metrics struct {
	attempts *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "webhook",
		Name: "attempts_total", Help: "Webhook delivery attempts by result: delivered, retry, failed."}, []string{"result"})}
	if reg == nil {
		return m, nil
	}
	if err := reg.Register(m.attempts); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		m.attempts = are.ExistingCollector.(*prometheus.CounterVec)
	}
	return m, nil
}

func (m *metrics) inc(result string) { m.attempts.WithLabelValues(result).Inc() }
