package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/gatewaytest"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/voice"
)

// newGateway serves the real voice path on loopback: the rtc handler, the
// session manager with the local safety layer and glasses layout, the
// embedded router (pocketsphinx + espeak) and the voice factory, plus
// /metrics with the voice metrics and the process and Go collectors, as
// the gateway binary exposes them. It returns the session collection URL.
func newGateway(t *testing.T) string {
	t.Helper()
	return newGatewayWith(t, router.DefaultConfig())
}

// newGatewayWith is newGateway with the router configured by rcfg. The
// gateway's rtc and voice logs (info and up) are kept, and printed when the
// test fails: they say why a session closed.
func newGatewayWith(t *testing.T, rcfg router.Config) string {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway log (last 60 lines):\n%s", logs.tail(60))
		}
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	cfg := voice.DefaultConfig()
	// The -race build on a shared 2-core machine stalls the media loop for
	// hundreds of ms; let the jitter buffer ride that out (as the voice
	// package's own tests do) so turns are not lost to the test machine.
	cfg.Jitter.MaxDelayMs = 1000
	cfg.Jitter.Slots = 128
	// These tests check what the tool reports of answered turns; a recogniser
	// slowed by -race must not be answered busy (gateway/voice tests that).
	cfg.ListenWaitMs = 5000
	st := gatewaytest.NewStack(t, gatewaytest.Options{RouterConfig: &rcfg, Logger: log,
		Voice: func(gs *gatewaytest.Stack) (gatewaytest.Voice, error) {
			f, err := voice.NewFactory(cfg, voice.Deps{Listener: gs.Router, Speaker: gs.Router, Sessions: gs.Sessions,
				Metrics: voice.NewMetrics(reg), Logger: log,
				Owner: func(gateway.Principal) session.Owner { return session.Owner{PartnerID: gatewaytest.TestPartner} }})
			if err != nil {
				return gatewaytest.Voice{}, err
			}
			return gatewaytest.Voice{NewSession: f.New}, nil
		},
		Mux: func(mux *http.ServeMux) { mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})) }})
	return st.URL
}

// syncBuffer is a log sink safe for the gateway's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// tail is the last n lines.
func (w *syncBuffer) tail(n int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := strings.Split(strings.TrimRight(w.b.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestLoadAgainstGateway runs the load mode against the real voice stack:
// 3 sessions loop an espeak turn every 4 s for 9 s of steady window. Every
// session must come up and hang up cleanly and every played turn must be
// detected; the JSON object carries the client and gateway figures.
func TestLoadAgainstGateway(t *testing.T) {
	url := newGateway(t)
	in := filepath.Join("..", "..", "testdata", "voice", "gohome.16k.wav")
	var out, errOut bytes.Buffer
	code := run([]string{"-url", url, "-in", in, "-loopback", "-sessions", "3", "-ramp", "10", "-duration", "9s", "-period", "4s", "-json"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out.String(), errOut.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out.String())
	}
	num := func(k string) float64 {
		v, ok := rep[k].(float64)
		if !ok {
			t.Fatalf("%s: %v (%T), want a number", k, rep[k], rep[k])
		}
		return v
	}
	if ok, failed := num("sessions_ok"), num("sessions_failed"); ok != 3 || failed != 0 {
		t.Fatalf("sessions ok %v failed %v: %v", ok, failed, rep["failures"])
	}
	// ≥ 9 s of steady window at one pass per 4 s: at least 2 turns each.
	expected, matched, turns := num("turns_expected"), num("turns_matched"), num("turns")
	if expected < 6 || matched != expected || turns < expected {
		t.Fatalf("turns: expected %v matched %v detected %v", expected, matched, turns)
	}
	eot, ok := rep["eot_delay_ms"].(map[string]any)
	if !ok {
		t.Fatalf("eot_delay_ms: %v", rep["eot_delay_ms"])
	}
	for _, q := range []string{"p50", "p95", "p99"} {
		v, ok := eot[q].(float64)
		// The turn detector waits for its configured silence (500 ms).
		if !ok || v < 400 {
			t.Fatalf("eot_delay_ms.%s = %v", q, eot[q])
		}
	}
	if eot["n"].(float64) != matched {
		t.Fatalf("eot samples %v != matched turns %v", eot["n"], matched)
	}
	for _, k := range []string{"first_audio_ms", "safety_card_ms"} {
		if _, ok := rep[k].(map[string]any); !ok {
			t.Fatalf("%s missing: %v", k, rep[k])
		}
	}
	if num("packets_sent") < 3*9*50*0.9 {
		t.Fatalf("packets_sent %v", rep["packets_sent"])
	}
	_ = num("packets_lost")
	if num("client_cpu_seconds") <= 0 || num("gateway_cpu_seconds") <= 0 || num("gateway_rss_bytes") <= 0 {
		t.Fatalf("cpu/rss: %v %v %v", rep["client_cpu_seconds"], rep["gateway_cpu_seconds"], rep["gateway_rss_bytes"])
	}
	if num("frames") < 3*8*50 || num("frame_p99_ms") <= 0 || num("frame_p99_ms") < num("frame_p50_ms") {
		t.Fatalf("frames %v p50 %v p99 %v", rep["frames"], rep["frame_p50_ms"], rep["frame_p99_ms"])
	}
	if num("gateway_voice_sessions") != 3 {
		t.Fatalf("gateway_voice_sessions %v", rep["gateway_voice_sessions"])
	}
	// The gateway's capacity series: every session's setup, the notice
	// played from the shared phrase cache (the replies queue behind its
	// 12 s, so few or none are encoded in this short run), a recogniser
	// opened for each turn in the window.
	hist := func(k string) map[string]any {
		h, ok := rep[k].(map[string]any)
		if !ok {
			t.Fatalf("%s: %v", k, rep[k])
		}
		return h
	}
	if setup := hist("setup_ms"); setup["n"] != 3.0 || setup["p50"] == nil || setup["p99"].(float64) < setup["p50"].(float64) {
		t.Fatalf("setup_ms %v, want 3 sessions", setup)
	}
	if num("playout_frames_cached") < 3*50 || num("playout_frames_encoded") < 0 {
		t.Fatalf("playout frames cached %v encoded %v: want the notice cached for all 3",
			rep["playout_frames_cached"], rep["playout_frames_encoded"])
	}
	if lw := hist("listen_wait_ms"); lw["n"].(float64) < 1 {
		t.Fatalf("listen_wait_ms %v, want the window's turns", lw)
	}
	if num("gateway_sessions_setup_failed") != 0 {
		t.Fatalf("gateway_sessions_setup_failed %v", rep["gateway_sessions_setup_failed"])
	}
}

// TestSoakAgainstGateway: a tiny soak against the real voice stack: 3
// sessions, one replaced every 2 s for 7 s. Every session (the first three
// and their replacements) comes up and hangs up cleanly, the report carries
// goroutines and RSS before, at the start and end of the window and after,
// the samples, and a verdict that matches them; and once every session has
// hung up the process is back to its idle goroutine count.
func TestSoakAgainstGateway(t *testing.T) {
	url := newGateway(t)
	in := filepath.Join("..", "..", "testdata", "voice", "gohome.16k.wav")
	var out, errOut bytes.Buffer
	code := run([]string{"-url", url, "-in", in, "-loopback", "-soak", "-sessions", "3", "-ramp", "10", "-duration", "7s",
		"-churn", "2s", "-churn-pct", "30", "-period", "4s", "-json"}, &out, &errOut)
	var rep struct {
		SessionsOK     int            `json:"sessions_ok"`
		SessionsFailed int            `json:"sessions_failed"`
		Failures       map[string]int `json:"failures"`
		Soak           *soakReport    `json:"soak"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Soak == nil {
		t.Fatalf("exit %d, not a soak report (%v):\n%s\n%s", code, err, out.String(), errOut.String())
	}
	s := rep.Soak
	if s.HangUps < 3 || s.Replaced < 2 || s.Replaced > s.HangUps || s.ChurnPerTick != 1 || len(s.Samples) < 3 {
		t.Fatalf("hung up %d replaced %d per tick %d samples %d, want ≥ 3, ≥ 2 (≤ hung up), 1, ≥ 3", s.HangUps, s.Replaced, s.ChurnPerTick, len(s.Samples))
	}
	if rep.SessionsFailed != 0 || rep.SessionsOK != 3+s.Replaced {
		t.Fatalf("sessions ok %d failed %d (%v), want %d ok", rep.SessionsOK, rep.SessionsFailed, rep.Failures, 3+s.Replaced)
	}
	for name, p := range map[string]soakPoints{"goroutines": s.Goroutines, "rss": s.RSSBytes} {
		if p.Before == nil || p.Start == nil || p.End == nil || p.After == nil || *p.Start <= 0 {
			t.Fatalf("%s points %+v", name, p)
		}
	}
	if *s.Sessions.Start != 3 || *s.Sessions.After != 0 {
		t.Fatalf("voice sessions at start %v after %v, want 3 and 0", *s.Sessions.Start, *s.Sessions.After)
	}
	if *s.Goroutines.After > *s.Goroutines.Before+soakIdleSlack {
		t.Fatalf("goroutines %v before the run, %v after it: sessions left goroutines behind", *s.Goroutines.Before, *s.Goroutines.After)
	}
	flat, verdict := judgeSoak(s)
	if flat != s.Flat || verdict != s.Verdict || (code == 0) != s.Flat {
		t.Fatalf("exit %d flat %v %q, judged again %v %q", code, s.Flat, s.Verdict, flat, verdict)
	}
	t.Logf("soak verdict: %s (goroutines per session %v → %v)", s.Verdict, *s.GoroutinesPer.Start, *s.GoroutinesPer.End)
}

// TestLoadReportsRefusals: sessions the gateway refuses fail with the
// status and the envelope's type, and the exit status says so.
func TestLoadReportsRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			_, _ = w.Write([]byte("process_cpu_seconds_total 1\n"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"type":"overloaded","message":"at capacity","request_id":"r1"}}`))
	}))
	defer srv.Close()
	in := filepath.Join("..", "..", "testdata", "voice", "gohome.16k.wav")
	var out, errOut bytes.Buffer
	code := run([]string{"-url", srv.URL + rtc.DefaultBasePath, "-in", in, "-loopback", "-sessions", "2", "-ramp", "50", "-duration", "100ms"}, &out, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s %s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "2 × HTTP 503 overloaded") || !strings.Contains(out.String(), "0 ok, 2 failed of 2") {
		t.Fatalf("table:\n%s", out.String())
	}
}

func TestLoadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-in", "x.wav", "-sessions", "-1"},
		{"-in", "x.wav", "-sessions", "2"}, // no -duration
		{"-in", "x.wav", "-duration", "5s", "-ramp", "0"},
		{"-in", "x.wav", "-duration", "5s", "-period", "10ms"},
	} {
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != 64 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"-in", filepath.Join(t.TempDir(), "none"), "-duration", "1s"}, &o, &e); code != 1 {
		t.Errorf("missing input: exit %d", code)
	}
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "readme.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"-in", empty, "-duration", "1s"}, &o, &e); code != 1 || !strings.Contains(e.String(), "no NAME.16k.wav") {
		t.Errorf("empty dir: exit %d %s", code, e.String())
	}
}

// TestTalkingLoadWithFakes is the bounded talking load: N sessions against
// the real voice stack with the fake remote providers (no pacing), one
// spoken turn per 8 s each, for 10 s after the last one connected. It
// checks function only, no timing: every session comes up and hangs up
// cleanly; every detected turn gets an outcome — answered, reported as not
// heard or not transcribed, or superseded by the person's next turn — and
// none is left unanswered; every session hears answers; and the report's
// per-turn segments add up to its latency. N is 4 beside other packages'
// tests (at 8, a -race build on 2 cores shared with other work starved:
// transcripts took seconds, a session's ICE gave up); `make test` runs it
// alone with VERA_TALKING_SESSIONS=30.
func TestTalkingLoadWithFakes(t *testing.T) {
	n := 4
	if v, err := strconv.Atoi(os.Getenv("VERA_TALKING_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	if testing.Short() {
		n = 2
	}
	fakes := startFakesServer(t, defaultPace().scaled(0))
	base := fakes.URL
	url := newGatewayWith(t, fakesRouterConfig(base+"/v1"))
	// The fakes' keep-alive connections end before the stack's leak guard
	// looks (their first Close runs after it).
	t.Cleanup(fakes.Close)
	dir := t.TempDir()
	for _, n := range []string{"gohome", "lights", "barge"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "voice", n+".16k.wav"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n+".16k.wav"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	// A gentle ramp and a long connect deadline: what is checked is
	// talking, not how fast a -race build sets sessions up.
	code := run([]string{"-url", url, "-in", dir, "-sessions", strconv.Itoa(n), "-ramp", "5", "-connect-timeout", "60s",
		"-duration", "10s", "-period", "8s", "-answer-wait", "90s", "-fakes", base, "-json"}, &out, &errOut)
	var rep loadReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, not a report (%v):\n%s\n%s", code, err, out.String(), errOut.String())
	}
	t.Logf("sessions %d/%d, turns %d (expected %d, matched %d), outcomes %v, reply latency %v, frame p99 %v ms, overruns %v",
		rep.SessionsOK, rep.Sessions, rep.Turns, rep.TurnsExpected, rep.TurnsMatched, rep.TurnOutcomes, rep.TurnLatencyMs, deref(rep.FrameP99Ms), deref(rep.FrameOverruns))
	for _, k := range segmentOrder {
		t.Logf("segment %s: %v mean %v", k, rep.SegmentsMs[k].dist, deref(rep.SegmentsMs[k].Mean))
	}
	if code != 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	if code != 0 || rep.SessionsOK != n || rep.SessionsFailed != 0 {
		t.Fatalf("exit %d, sessions ok %d failed %d: %v", code, rep.SessionsOK, rep.SessionsFailed, rep.Failures)
	}
	detected := 0
	for _, n := range rep.TurnOutcomes {
		detected += n
	}
	if rep.TurnOutcomes[outcomeUnanswered] != 0 || rep.TurnOutcomes[outcomeAnswered] < n || detected < rep.TurnsExpected {
		t.Fatalf("turn outcomes %v of %d detected, %d turns played", rep.TurnOutcomes, detected, rep.TurnsExpected)
	}
	if rep.TurnLatencyMs.N == 0 || rep.TurnLatencyMs.Mean == nil {
		t.Fatalf("no reply latency: %+v", rep.TurnLatencyMs)
	}
	sum := 0.0
	for _, k := range segmentOrder {
		sd := rep.SegmentsMs[k]
		if sd.N != rep.TurnLatencyMs.N || sd.Mean == nil {
			t.Fatalf("segment %s: %+v, want %d samples", k, sd, rep.TurnLatencyMs.N)
		}
		sum += *sd.Mean
	}
	if d := sum - *rep.TurnLatencyMs.Mean; d < -0.5 || d > 0.5 { // means rounded to 0.1 ms each
		t.Errorf("segment means sum to %.1f, reply latency mean %.1f", sum, *rep.TurnLatencyMs.Mean)
	}
	if rep.FrameOverruns == nil || rep.FakesCPUSeconds == nil || *rep.FakesCPUSeconds <= 0 {
		t.Errorf("frame overruns %v, fakes cpu %v: want both read", rep.FrameOverruns, rep.FakesCPUSeconds)
	}
	// The gateway's own segment histograms, over the window (replies that
	// queued behind the notice may fall after it).
	for _, k := range segmentOrder[:5] {
		if _, ok := rep.GatewaySegmentsMs[k]; !ok {
			t.Errorf("gateway segments %v lack %s", rep.GatewaySegmentsMs, k)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
