package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/schollz/progressbar/v3"

	"github.com/veraneural/vera-gateway/fixtures"
)

// loadReport is the -json object of a load run. Latencies are in ms from
// the true end of speech (the client's send time of a turn's last speech
// packet); CPU and memory of the gateway come from its /metrics, read when
// every session has connected and again just before the hang-ups, so they
// cover the steady window only.
type loadReport struct {
	Sessions       int            `json:"sessions"`
	SessionsOK     int            `json:"sessions_ok"`
	SessionsFailed int            `json:"sessions_failed"`
	Failures       map[string]int `json:"failures"` // reason → sessions

	Turns         int     `json:"turns"` // input.speech_stopped events received in the window
	TurnsExpected int     `json:"turns_expected"`
	TurnsMatched  int     `json:"turns_matched"`
	TurnsExtra    int     `json:"turns_extra"`
	TurnAccuracy  float64 `json:"turn_accuracy"` // matched / expected

	EOTDelayMs      dist `json:"eot_delay_ms"`
	EOTOverSilence  dist `json:"eot_over_silence_ms"` // eot_delay_ms − -merge-gap (the configured turn silence)
	FirstAudioMs    dist `json:"first_audio_ms"`
	FirstAudioQueue int  `json:"first_audio_queued"` // turns that ended while the gateway was talking (left out)
	SafetyCardMs    dist `json:"safety_card_ms"`

	// TurnOutcomes is what became of every detected turn of the run
	// (answered, nothing_heard, not_transcribed, interrupted, unanswered).
	TurnOutcomes map[string]int `json:"turn_outcomes"`
	// TurnsWindow counts the turns detected in the window, TurnsPrompt those
	// of them answered or told busy (outcome busy) with a first packet at
	// most -prompt-ms after the true end of speech; PromptMs is that first
	// packet's delay over the answered and busy ones.
	TurnsWindow int  `json:"turns_window"`
	TurnsPrompt int  `json:"turns_prompt"`
	PromptMs    dist `json:"prompt_ms"`
	// TurnLatencyMs is, per turn answered in the window, the first reply
	// packet after the true end of speech input.speech_stopped reports
	// (its arrival − end_of_turn_ms); SegmentsMs splits it per turn into
	// the gateway's segments (reply.audio_started's latency) and network,
	// the client-side rest, so that every turn's segments sum to its total
	// (and the means to the mean). Unlike first_audio_ms it keeps the
	// turns that queued behind playout (the wait shows in tts_ttfb).
	TurnLatencyMs segDist            `json:"turn_latency_ms"`
	SegmentsMs    map[string]segDist `json:"segments_ms"`
	// GatewaySegmentsMs is vera_voice_turn_segment_seconds over the window.
	GatewaySegmentsMs map[string]histDist `json:"gateway_segments_ms"`

	PacketsSent     int `json:"packets_sent"`
	PacketsReceived int `json:"packets_received"`
	PacketsLost     int `json:"packets_lost"` // gateway → client, from RTP sequence gaps
	// PacketsReceivedWindow is gateway audio that arrived in the measured
	// window: 0 in a listening-only run means no playout (AI notice or
	// reply) was encoded during it.
	PacketsReceivedWindow int `json:"packets_received_window"`

	WindowSeconds        float64  `json:"window_seconds"`
	ClientCPUSeconds     float64  `json:"client_cpu_seconds"`        // whole run (getrusage)
	ClientCPUWindow      float64  `json:"client_cpu_seconds_window"` // steady window
	ClientCPUPctPerSess  float64  `json:"client_cpu_pct_per_session"`
	GatewayCPUSeconds    *float64 `json:"gateway_cpu_seconds"` // steady window delta
	GatewayCPUPctPerSess *float64 `json:"gateway_cpu_pct_per_session"`
	GatewayRSSBytes      *float64 `json:"gateway_rss_bytes"`
	GatewayRSSStart      *float64 `json:"gateway_rss_bytes_start"`
	GatewayGoroutines    *float64 `json:"gateway_goroutines"`
	GatewaySessions      *float64 `json:"gateway_voice_sessions"`
	FrameP50Ms           *float64 `json:"frame_p50_ms"`
	FrameP99Ms           *float64 `json:"frame_p99_ms"`
	FrameP99Overflow     bool     `json:"frame_p99_overflow,omitempty"` // p99 is past the last finite bucket: frame_p99_ms is a lower bound
	Frames               float64  `json:"frames"`                       // frame observations in the window
	// FrameOverruns is vera_voice_frame_overruns_total over the window:
	// inbound frames the media loop handled a period or more late.
	FrameOverruns *float64 `json:"frame_overruns"`
	// ListenBusy and FinalLate are, over the window, the turns the gateway
	// answered busy because no recogniser was free in time
	// (vera_voice_listen_busy_total) and because one was but its final was
	// not ready voice.listen_wait_ms after the end of speech
	// (vera_voice_final_late_total).
	ListenBusy *float64 `json:"listen_busy,omitempty"`
	FinalLate  *float64 `json:"final_late,omitempty"`
	// FakesCPUSeconds is the fake providers' process CPU in the window
	// (-fakes), counted apart from the gateway's and the tool's.
	FakesCPUSeconds *float64 `json:"fakes_cpu_seconds,omitempty"`

	// From the gateway's capacity series, over the whole run (first read
	// before the first session, last at the end of the window): session
	// setup (offer → ready), sessions that closed before ready, outbound
	// frames Opus-encoded per session vs played from the shared phrase
	// cache. Listen wait (turn → recogniser open) is over the window.
	SetupMs             histDist `json:"setup_ms"`
	GatewaySetupFailed  *float64 `json:"gateway_sessions_setup_failed"`
	FramesEncoded       *float64 `json:"playout_frames_encoded"`
	FramesCached        *float64 `json:"playout_frames_cached"`
	FramesEncodedWindow *float64 `json:"playout_frames_encoded_window"`
	FramesCachedWindow  *float64 `json:"playout_frames_cached_window"`
	ListenWaitMs        histDist `json:"listen_wait_ms"`
	MetricsError        string   `json:"metrics_error,omitempty"`

	Soak *soakReport `json:"soak,omitempty"`
}

// closeWait bounds one session's hang-up and peer close.
const closeWait = 15 * time.Second

// errCloseHung: the peer did not close within closeWait.
var errCloseHung = errors.New("peer close hung")

// sessionOutcome is one session's end state.
type sessionOutcome struct {
	err   string // "" when ok
	stats sessionStats
}

// failReason classifies a session failure for the report.
func failReason(err error, ice webrtc.ICEConnectionState) string {
	var he *fixtures.HTTPError
	if errors.As(err, &he) {
		var env struct {
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(he.Body), &env)
		if env.Error.Type == "" {
			env.Error.Type = "no envelope"
		}
		return fmt.Sprintf("HTTP %d %s", he.Status, env.Error.Type)
	}
	if ice == webrtc.ICEConnectionStateFailed {
		return "ICE failed"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		if ice == webrtc.ICEConnectionStateConnected || ice == webrtc.ICEConnectionStateCompleted {
			return "timeout (ICE connected, events channel not open)"
		}
		return fmt.Sprintf("timeout (ICE %s)", ice)
	}
	s := err.Error()
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// loadRun is the shared, read-only state of a load run.
type loadRun struct {
	o     options
	clips []*clip
	quiet *fixtures.Stream // 2 s of silence: the open mic while a session waits for answers
	hc    *http.Client
	stop  chan struct{} // closed: every session hangs up

	connected, failed, turns atomic.Int64
	replaced                 atomic.Int64 // soak: sessions that joined in place of a churned one
	// windowStart (unix ns) is when the measured window began; turns that
	// end before it are left out of the latency and accuracy figures.
	windowStart atomic.Int64
}

// runSession dials, plays the clips in a loop until stop, hangs up and
// analyses what it saw. ready is called once, when the session is up or has
// failed to come up.
func (lr *loadRun) runSession(ctx context.Context, idx int, ready func(), hangup <-chan struct{}) sessionOutcome {
	o := lr.o
	readyOnce := sync.OnceFunc(ready)
	defer readyOnce()
	cctx, cancel := context.WithTimeout(ctx, o.connectTimeout)
	defer cancel()
	c, err := fixtures.Start(cctx, fixtures.ClientOptions{URL: o.url, Token: o.token, Device: o.device, HTTPClient: lr.hc, LoopbackOnly: o.loopback,
		OnEvent: func(e fixtures.Event) {
			if e.Type == fixtures.EventSpeechStopped {
				lr.turns.Add(1)
			}
		}})
	if err != nil {
		lr.failed.Add(1)
		return sessionOutcome{err: failReason(err, webrtc.ICEConnectionStateNew)}
	}
	closeClient := func() error {
		// pion's GracefulClose can block for good on a peer whose DTLS or
		// SCTP handshake never finished; the run must not hang on it. A
		// close still running after closeWait is left behind (the process
		// is about to exit) and reported.
		done := make(chan error, 1)
		go func() {
			xctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done <- c.Close(xctx)
		}()
		t := time.NewTimer(closeWait)
		defer t.Stop()
		select {
		case err := <-done:
			return err
		case <-t.C:
			return errCloseHung
		}
	}
	if err := c.WaitReady(cctx); err != nil {
		reason := failReason(err, c.ICEState())
		lr.failed.Add(1)
		readyOnce()
		_ = closeClient()
		return sessionOutcome{err: reason}
	}
	lr.connected.Add(1)
	readyOnce()
	if o.device != "" || o.hello != "" {
		hello := []byte(o.hello)
		if o.hello == "" {
			hello, _ = json.Marshal(map[string]string{"type": "hello", "device": o.device})
		}
		_ = c.SendEvent(hello)
	}
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	go func() { // ends with pcancel (deferred), stop or this session's hang-up
		select {
		case <-lr.stop:
			pcancel()
		case <-hangup:
			pcancel()
		case <-pctx.Done():
		}
	}()

	turns, sent, at := lr.play(pctx, c, idx)
	ice := c.ICEState()
	lr.awaitEnd(ctx, c, turns, hangup, at)
	events, audio := c.Events(), c.Received()
	herr := closeClient()
	from := time.Unix(0, lr.windowStart.Load())
	st := analyse(turns, events, audio, o.window, o.mergeGap, from)
	st.addTurns(turnRecords(events, audio), from)
	st.sent = sent
	out := sessionOutcome{stats: st}
	switch {
	case ice == webrtc.ICEConnectionStateFailed || ice == webrtc.ICEConnectionStateClosed:
		out.err = "ICE " + ice.String() + " mid-session"
	case herr != nil:
		out.err = "hang-up: " + failReason(herr, ice)
	}
	if out.err != "" {
		lr.failed.Add(1)
	}
	return out
}

// micPos is where a session's outbound stream is: the next packet's
// sequence number and timestamp offsets.
type micPos struct {
	seq uint16
	ts  uint32
}

// advance moves past a pass of frames 20 ms frames.
func (m *micPos) advance(frames int) {
	m.seq += uint16(frames)
	m.ts += uint32(frames) * 960
}

// play loops the session's clips until pctx ends and returns the turns
// played to their last frame, the packets sent and where the stream is.
func (lr *loadRun) play(pctx context.Context, c *fixtures.Client, idx int) ([]spokenTurn, int, micPos) {
	o := lr.o
	var turns []spokenTurn
	var sent int
	var at micPos
	for k := 0; pctx.Err() == nil; k++ {
		cl := lr.clips[(idx+k)%len(lr.clips)]
		stream := cl.stream
		if o.loss > 0 || o.jitterMs > 0 || o.reorder > 0 || o.dup > 0 {
			stream = fixtures.Impair(stream, fixtures.Impairment{Seed: o.seed + uint64(idx)*7919 + uint64(k), LossPct: o.loss, BurstLen: o.burst,
				Jitter: time.Duration(o.jitterMs * float64(time.Millisecond)), ReorderPct: o.reorder, DupPct: o.dup})
		}
		pass := make([]spokenTurn, len(cl.turns))
		maxFrame := -1
		err := c.PlayShifted(pctx, stream, at.seq, at.ts, func(i int, at time.Time) {
			sent++
			f := stream.Packets[i].Frame
			maxFrame = max(maxFrame, f)
			if j := cl.frameTurn[f]; j >= 0 {
				if pass[j].start.IsZero() {
					pass[j].start = at
				}
				if at.After(pass[j].end) {
					pass[j].end = at
				}
			}
		})
		// Only turns played to their last frame are expected.
		for j, t := range cl.turns {
			if maxFrame > t.last && !pass[j].end.IsZero() {
				turns = append(turns, pass[j])
			}
		}
		at.advance(cl.frames)
		if err != nil {
			break
		}
	}
	return turns, sent, at
}

// openMic sends silence from at until ctx ends, as a phone's microphone
// does while the person waits for an answer: a session that stops sending
// would be closed by the gateway's idle timeout while its answers are due.
func (lr *loadRun) openMic(ctx context.Context, c *fixtures.Client, at micPos) {
	for ctx.Err() == nil {
		if c.PlayShifted(ctx, lr.quiet, at.seq, at.ts, nil) != nil {
			return
		}
		at.advance(len(lr.quiet.Packets))
	}
}

// awaitEnd gives the last turn its -eot-window, then waits up to
// -answer-wait for every detected turn's outcome — unless a soak's churn
// hung the session up: that is a person leaving. The mic stays open (at)
// meanwhile.
func (lr *loadRun) awaitEnd(ctx context.Context, c *fixtures.Client, turns []spokenTurn, hangup <-chan struct{}, at micPos) {
	o := lr.o
	mctx, mcancel := context.WithCancel(ctx)
	var mic sync.WaitGroup
	mic.Go(func() { lr.openMic(mctx, c, at) })
	defer mic.Wait()
	defer mcancel()
	if n := len(turns); n > 0 {
		if wait := time.Until(turns[n-1].end.Add(o.window)); wait > 0 && wait <= o.window {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
	select {
	case <-hangup:
		return
	default:
	}
	if o.answerWait > 0 && !turnsResolved(c.Events()) {
		actx, acancel := context.WithTimeout(ctx, o.answerWait)
		_, _ = c.WaitEvent(actx, func(fixtures.Event) bool { return turnsResolved(c.Events()) })
		acancel()
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runLoad is the -sessions mode: start N sessions at -ramp per second, keep
// them looping their clips for -duration after the last one connected, hang
// up, print the table (or one JSON object). Exit 1 when any session failed.
func runLoad(ctx context.Context, o options, stdout, stderr io.Writer, progress bool) int {
	clips, err := loadClips(o.in, o.period, 2*time.Second, o.mergeGap)
	if err != nil {
		fmt.Fprintln(stderr, "vera-replay:", err)
		return 1
	}
	murl := o.metrics
	if murl == "" {
		if murl, err = metricsURL(o.url); err != nil {
			fmt.Fprintln(stderr, "vera-replay: -url:", err)
			return 64
		}
	}
	// One pooled HTTP client for all sessions (signaling + /metrics).
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}
	defer hc.CloseIdleConnections()
	quiet, err := fixtures.Encode(fixtures.Silence(16000, 2*time.Second), fixtures.EncodeOptions{FEC: true})
	if err != nil {
		fmt.Fprintln(stderr, "vera-replay:", err)
		return 1
	}
	lr := &loadRun{o: o, clips: clips, quiet: quiet, hc: hc, stop: make(chan struct{})}
	cpu0 := cpuSeconds()
	sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
	mStart, mStartErr := scrapeMetrics(sctx, hc, murl)
	scancel()

	var bar *progressbar.ProgressBar
	if progress {
		bar = newBar(o, stderr)
	}
	started := time.Now()
	slots := make([]*slot, o.sessions)
	var wg sync.WaitGroup
	upd := time.NewTicker(time.Second)
	defer upd.Stop()
	refresh := func(phase string) {
		if bar == nil {
			return
		}
		bar.Describe(fmt.Sprintf("%-6s up %d failed %d turns %d", phase, lr.connected.Load(), lr.failed.Load(), lr.turns.Load()))
		_ = bar.Set64(int64(time.Since(started) / time.Second))
	}
	lr.startSessions(ctx, slots, &wg, upd.C, refresh)
	if o.warmup > 0 {
		waitPhase(ctx, o.warmup, upd.C, func() { refresh("warmup") })
	}
	// Steady window: all sessions up (or failed).
	lr.windowStart.Store(time.Now().UnixNano())
	m0, f0, m0err := scrapeAll(hc, murl, o.fakesURL)
	cpuW0 := cpuSeconds()
	profWait := func() error { return nil }
	if o.pprofOut != "" {
		// One second short of the window so the profile ends inside it.
		profWait = startProfile(ctx, hc, o.pprofURL, o.duration-time.Second, o.pprofOut)
	}
	var soak *soakRun
	var churn <-chan time.Time
	if o.soak {
		soak = newSoakRun(o, m0)
		ct := time.NewTicker(o.churn)
		defer ct.Stop()
		churn = ct.C
	}
	end := time.NewTimer(o.duration)
wait:
	for {
		select {
		case <-end.C:
			break wait
		case <-ctx.Done():
			break wait
		case <-upd.C:
			refresh("steady")
		case <-churn:
			soak.churn(ctx, hc, murl, slots)
			refresh("churn")
		}
	}
	end.Stop()
	m1, f1, m1err := scrapeAll(hc, murl, o.fakesURL)
	cpuW1 := cpuSeconds()
	close(lr.stop)
	refresh("hangup")
	wg.Wait()
	if err := profWait(); err != nil {
		fmt.Fprintln(stderr, "vera-replay:", err)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	rep := buildReport(o, collectOutcomes(slots), m0, m1, errors.Join(mStartErr, m0err, m1err))
	rep.addSeries(mStart, m0, m1, f0, f1)
	if soak != nil {
		rep.Soak = soak.finish(ctx, hc, murl, mStart, m1, int(lr.replaced.Load()))
	}
	rep.addCPU(cpuSeconds()-cpu0, cpuW1-cpuW0, m0, m1)
	return writeReport(stdout, o, rep)
}

// collectOutcomes is every session's outcomes, slot by slot.
func collectOutcomes(slots []*slot) []sessionOutcome {
	var out []sessionOutcome
	for _, sl := range slots {
		if sl != nil {
			out = append(out, sl.outcomes...)
		}
	}
	return out
}

// newBar is the progress bar of a run's whole length.
func newBar(o options, w io.Writer) *progressbar.ProgressBar {
	total := o.warmup + o.duration + time.Duration(float64(o.sessions)/o.ramp*float64(time.Second))
	return progressbar.NewOptions64(int64(total/time.Second), progressbar.OptionSetWriter(w), progressbar.OptionSetWidth(30),
		progressbar.OptionShowElapsedTimeOnFinish(), progressbar.OptionSetPredictTime(false), progressbar.OptionClearOnFinish())
}

// waitPhase waits d (or until ctx ends), calling tick on every update.
func waitPhase(ctx context.Context, d time.Duration, upd <-chan time.Time, tick func()) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return
		case <-ctx.Done():
			return
		case <-upd:
			tick()
		}
	}
}

// writeReport prints rep (JSON with -json, else the table) and returns the
// exit code: 1 when a session failed, none came up, or a soak was not flat.
func writeReport(stdout io.Writer, o options, rep loadReport) int {
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		printTable(stdout, rep)
	}
	if rep.SessionsFailed > 0 || rep.SessionsOK == 0 || (rep.Soak != nil && !rep.Soak.Flat) {
		return 1
	}
	return 0
}

// startSessions starts the sessions at -ramp per second, each in its slot
// on wg, and returns once every one is up or has failed (or ctx ended).
func (lr *loadRun) startSessions(ctx context.Context, slots []*slot, wg *sync.WaitGroup, upd <-chan time.Time, refresh func(string)) {
	n := len(slots)
	var readyWG sync.WaitGroup
	readyWG.Add(n)
	tick := time.NewTicker(time.Duration(float64(time.Second) / lr.o.ramp))
	defer tick.Stop()
ramp:
	for i := range n {
		if i > 0 {
			select {
			case <-tick.C:
			case <-upd:
				refresh("ramp")
				<-tick.C
			case <-ctx.Done():
				for range n - i {
					readyWG.Done()
				}
				break ramp
			}
		}
		slots[i] = newSlot()
		wg.Go(func() { slots[i].run(ctx, lr, i, readyWG.Done) })
	}
	allReady := make(chan struct{})
	go func() { readyWG.Wait(); close(allReady) }() // ends when every session is ready or failed
	select {
	case <-allReady:
	case <-ctx.Done():
	}
}

// outcomeLine is "12 answered, 1 nothing heard" in a fixed order.
func outcomeLine(n map[string]int) string {
	var parts []string
	for _, k := range []string{outcomeAnswered, outcomeBusy, outcomeNothingHeard, outcomeNotTranscribed, outcomeInterrupted, outcomeUnanswered} {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], strings.ReplaceAll(k, "_", " ")))
		}
	}
	if len(parts) == 0 {
		return "no turns"
	}
	return strings.Join(parts, ", ")
}

// addSeries fills the gateway's capacity series: over the whole run
// (mStart → m1) setup and playout frames, over the window (m0 → m1) the
// rest; f0/f1 are the fake providers' reads (nil: none).
func (rep *loadReport) addSeries(mStart, m0, m1, f0, f1 *scrape) {
	rep.SetupMs = histMs(mStart, m1, setupHist)
	rep.GatewaySetupFailed = delta(mStart, m1, setupFailed)
	rep.FramesEncoded = delta(mStart, m1, playoutFrames+`{source="encoded"}`)
	rep.FramesCached = delta(mStart, m1, playoutFrames+`{source="cached"}`)
	rep.FramesEncodedWindow = delta(m0, m1, playoutFrames+`{source="encoded"}`)
	rep.FramesCachedWindow = delta(m0, m1, playoutFrames+`{source="cached"}`)
	rep.ListenWaitMs = histMs(m0, m1, listenWaitHist)
	if f0 != nil && f1 != nil {
		rep.FakesCPUSeconds = ptr(f1.cpu - f0.cpu)
	}
}

// addCPU sets the tool's CPU (whole run and window) and both sides' CPU
// per session over the window.
func (rep *loadReport) addCPU(client, clientWindow float64, m0, m1 *scrape) {
	rep.ClientCPUSeconds = round3(client)
	rep.ClientCPUWindow = round3(clientWindow)
	if m0 != nil && m1 != nil {
		rep.WindowSeconds = round3(m1.at.Sub(m0.at).Seconds())
	}
	if rep.WindowSeconds > 0 && rep.SessionsOK > 0 {
		rep.ClientCPUPctPerSess = round3(100 * rep.ClientCPUWindow / rep.WindowSeconds / float64(rep.SessionsOK))
		if rep.GatewayCPUSeconds != nil {
			v := round3(100 * *rep.GatewayCPUSeconds / rep.WindowSeconds / float64(rep.SessionsOK))
			rep.GatewayCPUPctPerSess = &v
		}
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = round3(v)
	return &v
}

func buildReport(o options, outs []sessionOutcome, m0, m1 *scrape, merr error) loadReport {
	rep := loadReport{Sessions: len(outs), Failures: map[string]int{}, TurnOutcomes: map[string]int{}, SegmentsMs: map[string]segDist{}}
	var eot, fa, card, total, prompt []float64
	segs := map[string][]float64{}
	for _, oc := range outs {
		if oc.err != "" {
			rep.SessionsFailed++
			rep.Failures[oc.err]++
		} else {
			rep.SessionsOK++
		}
		s := oc.stats
		rep.Turns += s.detected
		rep.TurnsExpected += s.expected
		rep.TurnsMatched += s.matched
		rep.FirstAudioQueue += s.queued
		rep.PacketsSent += s.sent
		rep.PacketsReceived += s.received
		rep.PacketsLost += s.lost
		rep.PacketsReceivedWindow += s.receivedInWindow
		eot = append(eot, s.eot...)
		fa = append(fa, s.firstAudio...)
		card = append(card, s.card...)
		total = append(total, s.turnTotal...)
		rep.TurnsWindow += s.windowTurns
		prompt = append(prompt, s.prompt...)
		for _, v := range s.prompt {
			if v <= ms(o.promptWithin) {
				rep.TurnsPrompt++
			}
		}
		for k, n := range s.outcomes {
			rep.TurnOutcomes[k] += n
		}
		for k, v := range s.segs {
			segs[k] = append(segs[k], v...)
		}
	}
	rep.TurnLatencyMs = summarizeMean(total)
	rep.PromptMs = summarize(prompt)
	for _, k := range segmentOrder {
		rep.SegmentsMs[k] = summarizeMean(segs[k])
	}
	rep.TurnsExtra = rep.Turns - rep.TurnsMatched
	if rep.TurnsExpected > 0 {
		rep.TurnAccuracy = round3(float64(rep.TurnsMatched) / float64(rep.TurnsExpected))
	}
	over := make([]float64, len(eot))
	for i, v := range eot {
		over[i] = v - ms(o.mergeGap)
	}
	rep.EOTOverSilence = summarize(over)
	rep.EOTDelayMs, rep.FirstAudioMs, rep.SafetyCardMs = summarize(eot), summarize(fa), summarize(card)
	if merr != nil {
		rep.MetricsError = merr.Error()
	}
	if m0 != nil && m1 != nil {
		rep.GatewayCPUSeconds = ptr(m1.cpu - m0.cpu)
		rep.GatewayRSSBytes, rep.GatewayRSSStart = ptr(m1.rss), ptr(m0.rss)
		rep.GatewayGoroutines, rep.GatewaySessions = ptr(m1.goroutines), ptr(m1.sessions)
		p50, n := histQuantile(m0, m1, 0.50)
		p99, _ := histQuantile(m0, m1, 0.99)
		rep.FrameP50Ms, rep.FrameP99Ms, rep.Frames = ptr(p50*1000), ptr(p99*1000), n
		rep.FrameP99Overflow = n > 0 && p99 >= lastFinite(m1)
		rep.FrameOverruns = delta(m0, m1, frameOverruns)
		rep.ListenBusy, rep.FinalLate = delta(m0, m1, listenBusy), delta(m0, m1, finalLate)
		rep.GatewaySegmentsMs = map[string]histDist{}
		for _, k := range segmentOrder[:5] {
			rep.GatewaySegmentsMs[k] = histMs(m0, m1, turnSegmentHist+`{segment="`+k+`"}`)
		}
	}
	return rep
}

func printTable(w io.Writer, r loadReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	f := func(p *float64, unit string) string {
		if p == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.2f%s", *p, unit)
	}
	d := func(x dist) string {
		if x.N == 0 {
			return "n/a (0 samples)"
		}
		return fmt.Sprintf("p50 %.1f  p95 %.1f  p99 %.1f  max %.1f  (n=%d)", *x.P50, *x.P95, *x.P99, *x.Max, x.N)
	}
	fmt.Fprintf(tw, "sessions\t%d ok, %d failed of %d\n", r.SessionsOK, r.SessionsFailed, r.Sessions)
	reasons := make([]string, 0, len(r.Failures))
	for k := range r.Failures {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		fmt.Fprintf(tw, "  failed\t%d × %s\n", r.Failures[k], k)
	}
	fmt.Fprintf(tw, "turns\t%d detected, %d of %d expected matched (accuracy %.3f), %d extra\n", r.Turns, r.TurnsMatched, r.TurnsExpected, r.TurnAccuracy, r.TurnsExtra)
	fmt.Fprintf(tw, "eot delay ms\t%s\n", d(r.EOTDelayMs))
	fmt.Fprintf(tw, "  over silence\t%s\n", d(r.EOTOverSilence))
	fmt.Fprintf(tw, "first audio ms\t%s; %d queued behind playout\n", d(r.FirstAudioMs), r.FirstAudioQueue)
	fmt.Fprintf(tw, "safety card ms\t%s\n", d(r.SafetyCardMs))
	fmt.Fprintf(tw, "turn outcomes\t%s\n", outcomeLine(r.TurnOutcomes))
	fmt.Fprintf(tw, "answered or busy in time\t%d of %d turns in the window; first packet %s\n", r.TurnsPrompt, r.TurnsWindow, d(r.PromptMs))
	fmt.Fprintf(tw, "reply latency ms\t%s (from the end of speech input.speech_stopped reports)\n", d(r.TurnLatencyMs.dist))
	if r.TurnLatencyMs.Mean != nil {
		var parts []string
		for _, k := range segmentOrder {
			if m := r.SegmentsMs[k].Mean; m != nil {
				parts = append(parts, fmt.Sprintf("%s %.1f", strings.ReplaceAll(k, "_", " "), *m))
			}
		}
		fmt.Fprintf(tw, "  mean segments\t%.1f = %s\n", *r.TurnLatencyMs.Mean, strings.Join(parts, " + "))
	}
	fmt.Fprintf(tw, "packets\t%d sent, %d received (%d in window), %d lost (gateway → client)\n", r.PacketsSent, r.PacketsReceived, r.PacketsReceivedWindow, r.PacketsLost)
	fmt.Fprintf(tw, "window\t%.1f s\n", r.WindowSeconds)
	fmt.Fprintf(tw, "gateway cpu\t%s in window, %s of one core per session\n", f(r.GatewayCPUSeconds, " s"), f(r.GatewayCPUPctPerSess, " %"))
	rss := func(p *float64) string {
		if p == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.0f MiB", *p/(1<<20))
	}
	fmt.Fprintf(tw, "gateway rss\t%s (start of window %s), goroutines %s, voice sessions %s\n", rss(r.GatewayRSSBytes), rss(r.GatewayRSSStart), f(r.GatewayGoroutines, ""), f(r.GatewaySessions, ""))
	over := ""
	if r.FrameP99Overflow {
		over = " or more (past the last bucket)"
	}
	fmt.Fprintf(tw, "frame ms\tp50 %s  p99 %s%s  (%.0f frames), %s overruns\n", f(r.FrameP50Ms, ""), f(r.FrameP99Ms, ""), over, r.Frames, f(r.FrameOverruns, ""))
	hd := func(h histDist) string {
		if h.N == 0 {
			return "n/a (0 samples)"
		}
		over := ""
		if h.Overflow {
			over = " or more"
		}
		return fmt.Sprintf("p50 %s  p95 %s  p99 %s%s  (n=%.0f)", f(h.P50, ""), f(h.P95, ""), f(h.P99, ""), over, h.N)
	}
	fmt.Fprintf(tw, "setup ms\t%s; %s closed before ready (gateway)\n", hd(r.SetupMs), f(r.GatewaySetupFailed, ""))
	fmt.Fprintf(tw, "playout frames\t%s encoded, %s cached (run); %s encoded, %s cached (window)\n",
		f(r.FramesEncoded, ""), f(r.FramesCached, ""), f(r.FramesEncodedWindow, ""), f(r.FramesCachedWindow, ""))
	fmt.Fprintf(tw, "listen wait ms\t%s\n", hd(r.ListenWaitMs))
	fmt.Fprintf(tw, "client cpu\t%.2f s total, %.2f s in window, %.3f %% of one core per session\n", r.ClientCPUSeconds, r.ClientCPUWindow, r.ClientCPUPctPerSess)
	if r.FakesCPUSeconds != nil {
		fmt.Fprintf(tw, "fake providers cpu\t%.2f s in window\n", *r.FakesCPUSeconds)
	}
	if r.MetricsError != "" {
		fmt.Fprintf(tw, "metrics\t%s\n", strings.ReplaceAll(r.MetricsError, "\n", "; "))
	}
	if s := r.Soak; s != nil {
		p := func(x soakPoints, scale float64) string {
			g := func(v *float64) string {
				if v == nil {
					return "n/a"
				}
				return fmt.Sprintf("%.0f", *v/scale)
			}
			return fmt.Sprintf("before %s, start %s, end %s, after %s", g(x.Before), g(x.Start), g(x.End), g(x.After))
		}
		fmt.Fprintf(tw, "soak\tchurn %s × %d sessions: %d hung up, %d replaced\n", s.Churn, s.ChurnPerTick, s.HangUps, s.Replaced)
		fmt.Fprintf(tw, "  goroutines\t%s\n", p(s.Goroutines, 1))
		fmt.Fprintf(tw, "  rss MiB\t%s\n", p(s.RSSBytes, 1<<20))
		fmt.Fprintf(tw, "  verdict\t%s\n", s.Verdict)
	}
	_ = tw.Flush()
}
