package cluster

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are vera_cluster_*.
type metrics struct {
	entries      *prometheus.GaugeVec
	forwards     *prometheus.CounterVec
	received     *prometheus.CounterVec
	redisErrors  *prometheus.CounterVec
	redisLatency prometheus.Histogram
	heartbeatAge prometheus.GaugeFunc
	nodes        prometheus.Gauge
	ready        prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, heartbeatAge func() float64) (*metrics, error) {
	m := &metrics{
		entries: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "vera", Subsystem: "cluster", Name: "directory_entries",
			Help: "Directory entries this node owns (refreshed every heartbeat), by kind: session, voice, action."}, []string{"kind"}),
		forwards: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "cluster", Name: "forwards_total",
			Help: "Requests this node forwarded to the owner of their session, by kind and outcome (ok, dead_node, error)."}, []string{"kind", "outcome"}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "cluster", Name: "forwards_received_total",
			Help: "Forwarded requests this node received, by outcome (ok, forged, stale, replayed)."}, []string{"outcome"}),
		redisErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "cluster", Name: "redis_errors_total",
			Help: "Failed Redis round trips, by command (pipeline for a pipeline, dial for a connection)."}, []string{"op"}),
		redisLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "vera", Subsystem: "cluster", Name: "redis_duration_seconds",
			Help: "Time of one Redis round trip (a command, a script or a pipeline).", Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12)}),
		heartbeatAge: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "vera", Subsystem: "cluster", Name: "heartbeat_age_seconds",
			Help: "Time since this node's last successful heartbeat; past two heartbeats its entries have lapsed."}, heartbeatAge),
		nodes: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "vera", Subsystem: "cluster", Name: "nodes",
			Help: "Live nodes seen at the last heartbeat (this one included)."}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "vera", Subsystem: "cluster", Name: "ready",
			Help: "1 while this node reaches Redis and takes new sessions, 0 otherwise."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.entries, m.forwards, m.received, m.redisErrors, m.redisLatency, m.heartbeatAge, m.nodes, m.ready} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
