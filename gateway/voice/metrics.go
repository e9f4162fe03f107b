package voice

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the voice pipeline's series. Turn latency segments use
// LiveKit's names so dashboards built for LiveKit agents read them as is:
// end_of_turn_delay (true end of speech → speech_stopped), transcription_delay
// (speech_stopped → final transcript), llm_ttft (transcript → first reply
// text), tts_ttfb (speak request → first audio), e2e_latency (true end of
// speech → first reply audio frame on the wire). These overlap and do not
// add up (tts_ttfb is per sentence); turn_segment_seconds{segment} splits
// each reply's e2e latency into contiguous segments that do: end_of_turn,
// transcription, llm_ttft (to the first reply text released), tts_ttfb (to
// the turn's first synthesised audio, queueing included) and first_packet.
// The same per-turn figures ride on the turn's reply.audio_started.
//
// frame_overruns_total counts inbound frames the media loop handled a whole
// frame period (20 ms) or more after they were due: the real-time path fell
// behind (CPU starvation), whatever each frame's own processing time.
//
// Capacity series: session_setup_seconds (offer received → ICE and DTLS
// connected and the events channel open), sessions_setup_failed_total
// (closed before that), playout_frames_total{source} (outbound 20 ms frames
// Opus-encoded by the session, "encoded", or played from a phrase encoded
// once for all sessions, "cached"), phrase_cache_total{result} and
// phrase_synthesis_seconds (the fixed phrases' cache), listen_wait_seconds
// (a turn's wait to open a recogniser, mostly for a pooled decoder),
// listen_busy_total (turns no recogniser was free for within
// voice.listen_wait_ms, answered busy), final_late_total (turns that got
// one whose final was not ready listen_wait_ms after the end of speech,
// answered busy then) and admission_refused_total (new
// voice sessions refused while the recogniser was saturated, or would be
// with one more). Admission's estimate (admit.go): talking_sessions,
// recogniser_hold_seconds, talk_duty, recogniser_turns_per_second,
// offered_turns_per_second and expected_listen_wait_seconds.
type Metrics struct {
	Frame              prometheus.Histogram
	FrameOverruns      prometheus.Counter
	TurnSegment        *prometheus.HistogramVec
	EndOfTurnDelay     prometheus.Histogram
	TranscriptionDelay prometheus.Histogram
	LLMTTFT            prometheus.Histogram
	TTSTTFB            prometheus.Histogram
	E2ELatency         prometheus.Histogram
	Sessions           prometheus.Gauge
	BargeIns           *prometheus.CounterVec
	RecordDropped      prometheus.Counter

	SessionSetup       prometheus.Histogram
	SessionSetupFailed prometheus.Counter
	PlayoutFrames      *prometheus.CounterVec
	PhraseCache        *prometheus.CounterVec
	PhraseSynthesis    prometheus.Histogram
	ListenWait         prometheus.Histogram
	ListenBusy         prometheus.Counter
	FinalLate          prometheus.Counter
	AdmissionRefused   prometheus.Counter

	LoadTalking, LoadHold, LoadDuty, LoadCapacity, LoadOffered, LoadWait prometheus.Gauge // admit.go

	framesEncoded, framesCached prometheus.Counter               // PlayoutFrames' children, resolved once
	segments                    [numSegments]prometheus.Observer // TurnSegment's children, in segmentNames order
}

// frameBuckets resolve 5 µs to 41 ms in doublings (a frame's work is tens of
// µs), then the overload range up to 1 s, so that a p99 over the 20 ms frame
// budget is a number rather than "past the last bucket".
func frameBuckets() []float64 {
	return append(prometheus.ExponentialBuckets(5e-6, 2, 14), .06, .08, .1, .15, .2, .25, .5, 1)
}

// NewMetrics creates the series and registers them with reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	latBuckets := []float64{.005, .01, .02, .05, .1, .2, .3, .5, .75, 1, 1.5, 2, 3, 5, 10}
	lat := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "vera", Subsystem: "voice", Name: name + "_seconds",
			Help: help, Buckets: latBuckets})
	}
	m := &Metrics{
		Frame: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "vera", Subsystem: "voice", Name: "frame_seconds",
			Help:    "Processing time of one inbound 20 ms frame: jitter buffer, Opus decode, VAD and turn detector.",
			Buckets: frameBuckets()}),
		FrameOverruns: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "frame_overruns_total",
			Help: "Inbound 20 ms frames handled 20 ms or more after they were due (or skipped): the media loop fell behind real time."}),
		TurnSegment: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "vera", Subsystem: "voice", Name: "turn_segment_seconds",
			Help:    "A spoken reply's latency from the true end of speech to its first packet, in contiguous segments that sum to it: end_of_turn, transcription, llm_ttft, tts_ttfb, first_packet.",
			Buckets: latBuckets}, []string{"segment"}),
		EndOfTurnDelay:     lat("end_of_turn_delay", "True end of speech to input.speech_stopped (includes the configured silence)."),
		TranscriptionDelay: lat("transcription_delay", "input.speech_stopped to the final transcript."),
		LLMTTFT:            lat("llm_ttft", "Final transcript to the first reply text released to the client."),
		TTSTTFB:            lat("tts_ttfb", "Speak request to the first synthesised audio."),
		E2ELatency:         lat("e2e_latency", "True end of user speech to the first reply audio frame on the wire."),
		Sessions: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "vera", Subsystem: "voice", Name: "sessions",
			Help: "Live voice sessions."}),
		BargeIns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "barge_ins_total",
			Help: "Speech over playout, by outcome: interrupted, resumed (false interruption), ducked (a backchannel: the reply was ducked under it and went on), echo (stretches suppressed as our own voice), protected (over spoken safety resources, not paused), disclosure_shown and disclosure_owed (the spoken AI disclosure cut short: shown on the display, or to be spoken again), busy (a reply cut short or dropped for a busy answer to a later turn)."},
			[]string{"outcome"}),
		RecordDropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "record_dropped_total",
			Help: "Packets and events record mode dropped because its writer fell behind (audio never waits for it)."}),
		SessionSetup: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "vera", Subsystem: "voice", Name: "session_setup_seconds",
			Help:    "Offer received to the connection ready for media and events (ICE and DTLS connected, events channel open).",
			Buckets: []float64{.05, .1, .2, .3, .5, .75, 1, 1.5, 2, 3, 5, 10, 20, 30}}),
		SessionSetupFailed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "sessions_setup_failed_total",
			Help: "Voice sessions that closed before the connection was ready (ICE failed, DTLS, events channel never opened, idle timeout)."}),
		PlayoutFrames: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "playout_frames_total",
			Help: "Outbound 20 ms frames by source: encoded (Opus-encoded by the session's sender) or cached (a fixed phrase encoded once and shared)."},
			[]string{"source"}),
		PhraseCache: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "phrase_cache_total",
			Help: "Requests for a fixed phrase (the spoken AI disclosure, the busy answer): hit (already encoded, or being encoded by another session), miss (synthesised and encoded now) or warm (the busy answer cached at a session's start, before any turn needs it)."},
			[]string{"result"}),
		PhraseSynthesis: lat("phrase_synthesis", "Synthesis and Opus encoding of one fixed phrase for the cache."),
		ListenWait:      lat("listen_wait", "Speech start to the turn's recogniser open (includes waiting for a pooled decoder)."),
		ListenBusy: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "listen_busy_total",
			Help: "Voice turns no recogniser was free for within voice.listen_wait_ms; answered busy (notice kind busy, spoken)."}),
		FinalLate: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "final_late_total",
			Help: "Voice turns whose recogniser's final transcript was not ready voice.listen_wait_ms after the end of speech; answered busy then (notice kind busy, spoken)."}),
		AdmissionRefused: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "vera", Subsystem: "voice", Name: "admission_refused_total",
			Help: "New voice sessions refused (503) while turns queued for a recogniser, or when one more session would make them (voice.admit_listen_wait_ms)."}),
	}
	m.LoadTalking, m.LoadHold, m.LoadDuty, m.LoadCapacity, m.LoadOffered, m.LoadWait = loadGauges()
	m.framesEncoded = m.PlayoutFrames.WithLabelValues("encoded")
	m.framesCached = m.PlayoutFrames.WithLabelValues("cached")
	for i, name := range segmentNames {
		m.segments[i] = m.TurnSegment.WithLabelValues(name)
	}
	if reg != nil {
		reg.MustRegister(m.Frame, m.FrameOverruns, m.TurnSegment, m.EndOfTurnDelay, m.TranscriptionDelay, m.LLMTTFT, m.TTSTTFB, m.E2ELatency, m.Sessions, m.BargeIns, m.RecordDropped,
			m.SessionSetup, m.SessionSetupFailed, m.PlayoutFrames, m.PhraseCache, m.PhraseSynthesis, m.ListenWait,
			m.ListenBusy, m.FinalLate, m.AdmissionRefused, m.LoadTalking, m.LoadHold, m.LoadDuty, m.LoadCapacity, m.LoadOffered, m.LoadWait)
	}
	return m
}
