package voice

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/converse"
	"github.com/veraneural/vera-gateway/gateway/gatewaytest"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

func noEnv(string) string { return "" }

// getShared is the test binary's shared embedded router and local safety
// layer (gatewaytest's; TestMain closes the router).
func getShared(t testing.TB) (*router.Router, *session.LocalSafety) {
	t.Helper()
	return gatewaytest.Shared(t), gatewaytest.SharedSafety(t)
}

func closeSharedRouter() { gatewaytest.CloseShared() }

// newConverser is the gateway's own converser (gateway/converse) on the
// shared router.
func newConverser(t testing.TB, r *router.Router) *converse.Converser {
	t.Helper()
	c, err := converse.New(r, router.DefaultConfig(), converse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testConfig is DefaultConfig with a jitter buffer that may hold a second:
// the shared 2-core CI machine stalls the media loop for hundreds of
// milliseconds under -race, which in production would be lost audio.
func testConfig() Config {
	c := DefaultConfig()
	c.Jitter.MaxDelayMs = 1000
	c.Jitter.Slots = 128
	// Finals under -race on a loaded machine can take seconds; the busy
	// answer for a late final has its own test (TestBusyAnswerWhenFinalIsLate).
	c.finalWait = 2 * time.Minute
	if os.Getenv("VOICE_NO_GUARD") != "" {
		c.EchoGuard = false
	}
	return c
}

// stack is the gateway's voice path over loopback: the rtc handler on an
// httptest server, a session manager with the real safety layer and
// glasses layout, the shared router and a voice factory.
type stack struct {
	URL      string
	metrics  *Metrics
	sessions *session.Manager
	handler  *rtc.Handler
	factory  *Factory
	// counters are the safety counters (cards shown, acknowledged, spoken).
	counters *safety.Counters
	// lastVoice is the newest voice session (for white-box checks).
	mu     sync.Mutex
	voices []*voiceSession
}

type stackOptions struct {
	// freshRouter gives the stack a router of its own, whose pooled
	// decoders have heard nothing yet (pocketsphinx adapts its cepstral
	// mean to what a decoder heard before, e.g. espeak's voice).
	freshRouter bool
	// routerCfg, when set, is the stack's own router's configuration
	// (with env its environment): a safety slot there becomes the
	// sessions' Classifier, with classifyBudget.
	routerCfg      *router.Config
	env            map[string]string
	classifyBudget time.Duration
	cfg            *Config
	sessCfg        *session.Config
	// rtcCfg replaces rtc.LoopbackConfig; engineOpts go to rtc.NewEngine
	// (an ICE-TCP listener, a clock for TURN credentials).
	rtcCfg     *rtc.Config
	engineOpts []rtc.EngineOption
	// router replaces the shared router (a pool of a given size); admit
	// wires the factory's admission hook into the rtc handler.
	router *router.Router
	admit  bool
	// recognisers sizes admission to that many decoders (Deps.Recognisers).
	recognisers int
}

// newStack is gatewaytest's stack with this package's voice factory: the
// real converser, the sessions' classifier on the stack's router, the
// safety counters, and every voice session kept for white-box checks.
func newStack(t testing.TB, o stackOptions) *stack {
	t.Helper()
	cfg := testConfig()
	if o.cfg != nil {
		cfg = *o.cfg
	}
	st := &stack{metrics: NewMetrics(prometheus.NewRegistry()), counters: safety.NewCounters(nil)}
	var log *slog.Logger
	if os.Getenv("VOICE_DEBUG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	gs := gatewaytest.NewStack(t, gatewaytest.Options{
		Router: o.router, FreshRouter: o.freshRouter, RouterConfig: o.routerCfg, Env: o.env,
		Session: o.sessCfg, RTC: o.rtcCfg, EngineOptions: o.engineOpts,
		Deps: func(gs *gatewaytest.Stack, d *session.Deps) {
			d.Counters = st.counters
			d.Classifier, d.ClassifyBudget = converse.NewClassifier(gs.Router), o.classifyBudget
		},
		Voice: func(gs *gatewaytest.Stack) (gatewaytest.Voice, error) {
			f, err := NewFactory(cfg, Deps{Listener: gs.Router, Speaker: gs.Router, Sessions: gs.Sessions, Metrics: st.metrics,
				Logger: log, Counters: st.counters, Recognisers: o.recognisers,
				Owner: func(gateway.Principal) session.Owner { return session.Owner{PartnerID: gatewaytest.TestPartner} }})
			if err != nil {
				return gatewaytest.Voice{}, err
			}
			st.factory = f
			v := gatewaytest.Voice{NewSession: func(ctx context.Context, info rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
				s, err := f.New(ctx, info, c)
				if err == nil {
					st.mu.Lock()
					st.voices = append(st.voices, s.(*voiceSession))
					st.mu.Unlock()
				}
				return s, err
			}}
			if o.admit {
				v.Admit = f.Admit
			}
			return v, nil
		}})
	st.URL, st.sessions, st.handler = gs.URL, gs.Sessions, gs.Handler
	return st
}

func (st *stack) bargeIns(outcome string) float64 {
	var m dto.Metric
	if err := st.metrics.BargeIns.WithLabelValues(outcome).Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

func loadWAV(t testing.TB, path string) *fixtures.Audio {
	t.Helper()
	a, err := fixtures.LoadWAV(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fixture loads testdata/voice/name.
func fixture(t testing.TB, name string) *fixtures.Audio {
	t.Helper()
	return loadWAV(t, filepath.Join(fixtures.RepoRoot(t), "testdata", "voice", name))
}

func concat(t testing.TB, parts ...*fixtures.Audio) *fixtures.Audio {
	t.Helper()
	a, err := fixtures.Concat(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func encode(t testing.TB, a *fixtures.Audio) *fixtures.Stream {
	t.Helper()
	s, err := fixtures.Encode(a, fixtures.EncodeOptions{FEC: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runScenario plays stream as one session and waits until every detected
// turn's reply has ended, the end condition holds or the hang guard fires.
func runScenario(t testing.TB, st *stack, s *fixtures.Stream, complete func([]fixtures.Event) bool, guard time.Duration) *fixtures.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if complete == nil {
		complete = repliesEnded(1)
	}
	res, err := fixtures.Run(ctx, fixtures.Scenario{
		Client: fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: "meta-rayban-display"},
		Stream: s, Complete: complete,
	})
	if err != nil {
		if res != nil {
			t.Logf("events so far:\n%s", dumpEvents(res.Events))
		}
		t.Fatalf("scenario: %v", err)
	}
	return res
}

// payload is the union of the event payload fields the tests read.
type payload struct {
	Type     string `json:"type"`
	Seq      int64  `json:"seq"`
	TurnID   string `json:"turn_id"`
	Text     string `json:"text"`
	Delta    string `json:"delta"`
	Reason   string `json:"reason"`
	Heard    string `json:"heard"`
	Kind     string `json:"kind"`
	Level    string `json:"level"`
	AudioMS  int64  `json:"audio_ms"`
	CardID   string `json:"card_id"`
	Resumed  bool   `json:"resumed"`
	Token    string `json:"resume_token"`
	Required bool   `json:"requires_ack"`
}

func decode(t testing.TB, e fixtures.Event) payload {
	t.Helper()
	var p payload
	if err := json.Unmarshal(e.Data, &p); err != nil {
		t.Fatalf("event %s: %v", e.Data, err)
	}
	return p
}

func dumpEvents(evs []fixtures.Event) string {
	var b strings.Builder
	var t0 time.Time
	for i, e := range evs {
		if i == 0 {
			t0 = e.At
		}
		d := string(e.Data)
		if len(d) > 300 {
			d = d[:300] + "…"
		}
		b.WriteString(e.At.Sub(t0).Round(time.Millisecond).String() + " " + d + "\n")
	}
	return b.String()
}

func ofType(evs []fixtures.Event, typ string) []fixtures.Event {
	var out []fixtures.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// transcripts returns the final transcripts in order.
func transcripts(t testing.TB, evs []fixtures.Event) []string {
	var out []string
	for _, e := range ofType(evs, "transcript.final") {
		out = append(out, decode(t, e).Text)
	}
	return out
}

// firstPacketAfter is the first received audio packet at or after at.
func firstPacketAfter(pk []fixtures.ReceivedPacket, at time.Time) (fixtures.ReceivedPacket, bool) {
	for _, p := range pk {
		if !p.At.Before(at) {
			return p, true
		}
	}
	return fixtures.ReceivedPacket{}, false
}

// repliesEnded: at least n turns were transcribed, each transcribed
// turn's reply audio has played out or been interrupted, and no reply
// audio is still playing. The disclosure notice's audio is not a reply
// (fixtures.RepliesComplete counts it as one, and so ends a session before
// the first transcript), and neither are spoken safety resources (turn
// "safety:<card>"): their end is not the end of a transcribed turn's reply.
func repliesEnded(n int) func([]fixtures.Event) bool {
	return func(evs []fixtures.Event) bool {
		finals, ended, playing := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, e := range evs {
			var p struct {
				TurnID string `json:"turn_id"`
			}
			_ = json.Unmarshal(e.Data, &p)
			switch e.Type {
			case "transcript.final":
				finals[p.TurnID] = true
			case "reply.interrupted":
				ended[p.TurnID] = true
				delete(playing, p.TurnID)
			case "reply.audio_started":
				playing[p.TurnID] = true
			case "reply.audio_stopped":
				delete(playing, p.TurnID)
				ended[p.TurnID] = true
			}
		}
		if len(finals) < n || len(playing) != 0 {
			return false
		}
		for id := range finals {
			if !ended[id] {
				return false
			}
		}
		return true
	}
}

// busyEnded: a turn was answered busy (notice kind "busy") and that answer
// has played out.
func busyEnded(evs []fixtures.Event) bool {
	busy := map[string]bool{}
	for _, e := range evs {
		var p payload
		_ = json.Unmarshal(e.Data, &p)
		switch {
		case e.Type == "notice" && p.Kind == "busy":
			busy[p.TurnID] = true
		case e.Type == "reply.audio_stopped" && busy[p.TurnID]:
			return true
		}
	}
	return false
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
