package voice

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the voice pipeline's series. Turn latency segments use
// LiveKit's names so dashboards built for LiveKit agents read them as is:
// end_of_turn_delay (true end of speech → speech_stopped), transcription_delay
// (speech_stopped → final transcript), llm_ttft (transcript → first reply
// text), tts_ttfb (speak request → first audio), e2e_latency (true end of
// speech → first reply audio frame on the wire).
type Metrics struct {
	Frame              prometheus.Histogram
	EndOfTurnDelay     prometheus.Histogram
	TranscriptionDelay prometheus.Histogram
	LLMTTFT            prometheus.Histogram
	TTSTTFB            prometheus.Histogram
	E2ELatency         prometheus.Histogram
	Sessions           prometheus.Gauge
	BargeIns           *prometheus.CounterVec
	RecordDropped      prometheus.Counter
}

// NewMetrics creates the series and registers them with reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	lat := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "vera", Subsystem: "voice", Name: name + "_seconds",
			Help: help, Buckets: []float64{.005, .01, .02, .05, .1, .2, .3, .5, .75, 1, 1.5, 2, 3, 5, 10}})
	}
	m := &Metrics{
		Frame: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "vera", Subsystem: "voice", Name: "frame_seconds",
			Help:    "Processing time of one inbound 20 ms frame: jitter buffer, Opus decode, VAD and turn detector.",
			Buckets: prometheus.ExponentialBuckets(5e-6, 2, 14)}),
		EndOfTurnDelay:     lat("end_of_turn_delay", "True end of speech to input.speech_stopped (includes the configured silence)."),
		TranscriptionDelay: lat("transcription_delay", "input.speech_stopped to the final transcript."),
		LLMTTFT:            lat("llm_ttft", "Final transcript to the first reply text released to the client."),
		TTSTTFB:            lat("tts_ttfb", "Speak request to the first synthesised audio."),
		E2ELatency:         lat("e2e_latency", "True end of user speech to the first reply audio frame on the wire."),
		Sessions: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "vera", Subsystem: "voice", Name: "sessions",
			Help: "Live voice sessions."}),
		BargeIns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "barge_ins_total",
			Help: "Speech over playout, by outcome: interrupted, resumed (false interruption), echo (stretches suppressed as our own voice), protected (over the disclosure or spoken safety resources, not paused)."},
			[]string{"outcome"}),
		RecordDropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "record_dropped_total",
			Help: "Packets and events record mode dropped because its writer fell behind (audio never waits for it)."}),
	}
	if reg != nil {
		reg.MustRegister(m.Frame, m.EndOfTurnDelay, m.TranscriptionDelay, m.LLMTTFT, m.TTSTTFB, m.E2ELatency, m.Sessions, m.BargeIns, m.RecordDropped)
	}
	return m
}
