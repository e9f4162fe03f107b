package voice

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// onePoolRouter is a router whose embedded recogniser has a single
// decoder and no safety reserve.
func onePoolRouter(t *testing.T) *router.Router {
	t.Helper()
	_, local := getShared(t)
	cfg := router.DefaultConfig()
	cfg.Sphinx.Pool, cfg.Sphinx.SafetyReserve = 1, 0
	r, err := router.New(cfg, noEnv, router.Options{
		Assess: func(history []string, text string) safety.Assessment { return local.Assess(history, text, "") },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() }) // after the stack's cleanup (LIFO)
	return r
}

// holdRecogniser takes r's only decoder until the returned func is called.
func holdRecogniser(t *testing.T, r *router.Router) func() {
	t.Helper()
	ls, err := r.Listen(context.Background(), router.ListenRequest{Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	return func() { _ = ls.Close() }
}

// A turn that cannot get a recogniser within voice.listen_wait_ms is
// answered, spoken and shown, with the busy notice for that turn, instead
// of silence; the session gets no transcript for it.
func TestBusyAnswerWhenNoRecogniser(t *testing.T) {
	r := onePoolRouter(t)
	cfg := testConfig()
	cfg.ListenWaitMs, cfg.AdmitListenWaitMs = 300, 0
	st := newStack(t, stackOptions{router: r, cfg: &cfg})
	release := holdRecogniser(t, r)
	defer release()
	a := concat(t, fixtures.Silence(16000, 2*time.Second), fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, 1500*time.Millisecond))
	res := runScenario(t, st, encode(t, a), busyEnded, 90*time.Second)
	evs := res.Events
	var busy *payload
	for _, e := range ofType(evs, "notice") {
		if p := decode(t, e); p.Kind == "busy" {
			busy = &p
			break
		}
	}
	if busy == nil {
		t.Fatalf("no busy notice\n%s", dumpEvents(evs))
	}
	if busy.Text != busyText {
		t.Errorf("busy notice text %q, want %q", busy.Text, busyText)
	}
	stopped := ofType(evs, "input.speech_stopped")
	if len(stopped) == 0 || decode(t, stopped[0]).TurnID != busy.TurnID {
		t.Errorf("busy notice for turn %q, not the turn that stopped\n%s", busy.TurnID, dumpEvents(evs))
	}
	spoken := false
	for _, e := range ofType(evs, "reply.audio_started") {
		spoken = spoken || decode(t, e).TurnID == busy.TurnID
	}
	if !spoken {
		t.Errorf("the busy answer was not spoken\n%s", dumpEvents(evs))
	}
	if n := len(ofType(evs, "transcript.final")); n != 0 {
		t.Errorf("%d transcripts for a turn nobody recognised", n)
	}
	if got := counterValue(t, st.metrics.ListenBusy); got < 1 {
		t.Errorf("listen_busy_total %v, want at least 1", got)
	}
}

// A turn of a session whose safety level is raised is given the recogniser
// before an ordinary turn that queued first.
func TestRaisedTurnJumpsRecogniserQueue(t *testing.T) {
	r := onePoolRouter(t)
	release := holdRecogniser(t, r)
	ctx := context.Background()
	req := router.ListenRequest{Language: "en"}
	p := newPressure(0)
	normal := newFeeder(ctx, r, req, listenOptions{pressure: p})
	waitWaiting(t, p, 1)
	raised := newFeeder(ctx, r, req, listenOptions{priority: sphinx.PriorityRaised, pressure: p})
	waitWaiting(t, p, 2)
	release()
	raised.close()
	ls, err := raised.result()
	if err != nil {
		t.Fatalf("raised turn: %v", err)
	}
	select {
	case <-normal.done:
		t.Fatal("the ordinary turn got the recogniser before the raised one released it")
	default:
	}
	_ = ls.Close()
	normal.close()
	ls, err = normal.result()
	if err != nil {
		t.Fatalf("ordinary turn after the raised one: %v", err)
	}
	_ = ls.Close()
}

// waitWaiting polls until n turns wait for a recogniser (a hang guard).
func waitWaiting(t *testing.T, p *pressure, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.mu.Lock()
		got := len(p.waiting)
		p.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d turns waiting, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// The session's safety level, raised by a card, sets its turns' priority.
func TestSafetyCardRaisesListenPriority(t *testing.T) {
	st := newStack(t, stackOptions{})
	a := concat(t, fixtures.Silence(16000, 2*time.Second), fixture(t, "crisis_kill.16k.wav"), fixtures.Silence(16000, 1500*time.Millisecond))
	res := runScenario(t, st, encode(t, a), func(evs []fixtures.Event) bool { return len(ofType(evs, "safety.card")) > 0 }, 90*time.Second)
	if len(ofType(res.Events, "safety.card")) == 0 {
		t.Fatal("no safety card")
	}
	st.mu.Lock()
	vs := st.voices[0]
	st.mu.Unlock()
	if got := vs.listenOptions().priority; got != sphinx.PriorityRaised {
		t.Fatalf("listen priority after a crisis card: %v, want raised", got)
	}
}

// Admission refuses a new voice session with 503 and Retry-After while a
// turn has waited voice.admit_listen_wait_ms for a recogniser, and admits
// again once that is admitHold in the past.
func TestAdmissionRefusesWhileRecogniserSaturated(t *testing.T) {
	r := onePoolRouter(t)
	cfg := testConfig()
	cfg.ListenWaitMs, cfg.AdmitListenWaitMs = 10000, 100
	st := newStack(t, stackOptions{router: r, cfg: &cfg, admit: true})
	release := holdRecogniser(t, r)
	defer release()
	fctx, stop := context.WithCancel(context.Background())
	f := newFeeder(fctx, r, router.ListenRequest{Language: "en"}, st.factory.turnOptions(sphinx.PriorityNormal))
	defer func() { stop(); f.abort(); _, _ = f.result() }()
	waitWaiting(t, st.factory.pressure, 1)
	deadline := time.Now().Add(30 * time.Second)
	for st.factory.Admit() == nil { // until the turn has waited 100 ms
		if time.Now().After(deadline) {
			t.Fatal("admission never saw the waiting turn")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Admission answers before the offer is read.
	resp, err := http.Post(st.URL, "application/sdp", strings.NewReader("v=0\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "recogniser") {
		t.Fatalf("new session while the recogniser is saturated: %d %s, want 503 naming the recogniser", resp.StatusCode, body)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	if got := counterValue(t, st.metrics.AdmissionRefused); got < 1 {
		t.Errorf("admission_refused_total %v", got)
	}
}

// The hold: one slow wait keeps new sessions out for admitHold, then they
// are admitted again (fake clock).
func TestPressureHold(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	p := newPressure(500 * time.Millisecond)
	f := &feeder{}
	p.begin(f, clk.Now())
	if p.saturated(clk.Now()) {
		t.Fatal("saturated by a turn that has not waited yet")
	}
	clk.Advance(600 * time.Millisecond)
	if !p.saturated(clk.Now()) {
		t.Fatal("a turn waiting 600 ms does not saturate at 500")
	}
	p.end(f, clk.Now(), false)
	clk.Advance(admitHold - time.Second)
	if !p.saturated(clk.Now()) {
		t.Fatal("the slow wait no longer counts within the hold")
	}
	clk.Advance(2 * time.Second)
	if p.saturated(clk.Now()) {
		t.Fatal("still saturated after the hold")
	}
	q := newPressure(500 * time.Millisecond)
	q.begin(f, clk.Now())
	q.end(f, clk.Now(), false) // a quick wait
	if q.saturated(clk.Now()) {
		t.Fatal("a quick wait saturates")
	}
	q.begin(f, clk.Now())
	q.end(f, clk.Now(), true) // busy, however short
	if !q.saturated(clk.Now()) {
		t.Fatal("a busy answer does not saturate")
	}
	if newPressure(0).saturated(clk.Now()) {
		t.Fatal("admit_listen_wait_ms 0 refuses")
	}
}

// The busy answer is heard next, not after what the session was already
// playing: a turn that ends busy while the long spoken disclosure still
// plays (no barge-in pauses it here) stops the disclosure — on a display
// that shows it, it counts as given — and the busy answer follows at once.
func TestBusyAnswerPreemptsDisclosure(t *testing.T) {
	r := onePoolRouter(t)
	cfg := testConfig()
	cfg.ListenWaitMs, cfg.AdmitListenWaitMs = 300, 0
	cfg.Turn.BargeInMs, cfg.Turn.BackchannelMs = 10000, 10000 // the disclosure is never paused
	scfg := session.DefaultConfig()
	scfg.Disclosure = safety.DisclosureScreen // ~12 s spoken: still playing when the turn ends
	st := newStack(t, stackOptions{router: r, cfg: &cfg, sessCfg: &scfg})
	release := holdRecogniser(t, r)
	defer release()
	a := concat(t, fixtures.Silence(16000, time.Second), fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, 1500*time.Millisecond))
	res := runScenario(t, st, encode(t, a), busyEnded, 90*time.Second)
	evs := res.Events
	stopped, busy, cut, started := indexOf(evs, "input.speech_stopped"), -1, -1, -1
	for i, e := range evs {
		p := decode(t, e)
		switch {
		case e.Type == "notice" && p.Kind == "busy" && busy < 0:
			busy = i
		case e.Type == "reply.audio_stopped" && p.TurnID == noticeTurn && cut < 0:
			cut = i
		case e.Type == "reply.audio_started" && busy >= 0 && p.TurnID == decode(t, evs[busy]).TurnID && started < 0:
			started = i
		}
	}
	if stopped < 0 || busy < 0 || cut < stopped || started < max(busy, cut) {
		t.Fatalf("want the disclosure's audio stopped at the turn's end and the busy answer's audio next (stopped %d, busy %d, cut %d, started %d)\n%s",
			stopped, busy, cut, started, dumpEvents(evs))
	}
	if n := st.bargeIns("disclosure_shown"); n != 1 {
		t.Fatalf("disclosure cut short %v times, want 1: the busy answer queued behind it\n%s", n, dumpEvents(evs))
	}
}

// hogRecognisers keeps the embedded recogniser's worker threads busy until
// the returned func is called: n listen sessions of r decode speech as fast
// as the workers take it, so that a turn's own frames and final queue
// behind theirs, as on a machine whose recogniser cannot keep up.
func hogRecognisers(t *testing.T, r *router.Router, n int, speech []int16) func() {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		ls, err := r.Listen(context.Background(), router.ListenRequest{Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer func() { _ = ls.Close() }()
			for i := 0; ; i = (i + 320) % (len(speech) - 320) {
				select {
				case <-stop:
					return
				default:
				}
				if ls.Write(speech[i:i+320]) != nil {
					return
				}
			}
		})
	}
	return func() { close(stop); wg.Wait() }
}

// A turn that got a recogniser whose final transcript is not ready
// voice.listen_wait_ms after its end of speech is answered busy then, not
// seconds later with its transcript (or never): the busy notice for the
// turn, spoken, no transcript and no reply.
func TestBusyAnswerWhenFinalIsLate(t *testing.T) {
	_, local := getShared(t)
	rc := router.DefaultConfig()
	rc.Sphinx.Pool, rc.Sphinx.SafetyReserve = 4*runtime.GOMAXPROCS(0)+2, 0
	r, err := router.New(rc, noEnv, router.Options{
		Assess: func(history []string, text string) safety.Assessment { return local.Assess(history, text, "") },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	cfg := testConfig()
	cfg.ListenWaitMs, cfg.AdmitListenWaitMs = 700, 0 // the final is due 700 ms after the end of speech
	cfg.finalWait = 0                                // as configured, not testConfig's
	st := newStack(t, stackOptions{router: r, cfg: &cfg})
	speech := fixture(t, "gohome.16k.wav")
	// Once the turn has its recogniser, the workers are taken from it.
	quit, hogDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(hogDone)
		for {
			var m dto.Metric
			if err := st.metrics.ListenWait.Write(&m); err == nil && m.GetHistogram().GetSampleCount() > 0 {
				stop := hogRecognisers(t, r, 4*runtime.GOMAXPROCS(0), speech.Samples)
				<-quit
				stop()
				return
			}
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	defer func() { close(quit); <-hogDone }()
	a := concat(t, fixtures.Silence(16000, 2*time.Second), speech, fixtures.Silence(16000, 1500*time.Millisecond))
	res := runScenario(t, st, encode(t, a), busyEnded, 90*time.Second)
	evs := res.Events
	var busy *payload
	for _, e := range ofType(evs, "notice") {
		if p := decode(t, e); p.Kind == "busy" {
			busy = &p
			break
		}
	}
	if busy == nil {
		t.Fatalf("no busy notice for a turn whose final was late\n%s", dumpEvents(evs))
	}
	stopped := ofType(evs, "input.speech_stopped")
	if len(stopped) == 0 || decode(t, stopped[0]).TurnID != busy.TurnID {
		t.Errorf("busy notice for turn %q, not the turn that stopped\n%s", busy.TurnID, dumpEvents(evs))
	}
	for _, e := range ofType(evs, "transcript.final") {
		if decode(t, e).TurnID == busy.TurnID {
			t.Errorf("a transcript for the turn answered busy\n%s", dumpEvents(evs))
		}
	}
	// The busy answer's first packet is due listen_wait_ms after the true
	// end of speech (speech_stopped's arrival less end_of_turn_ms). Bounded
	// generously (a loaded machine under -race): this checks it is spoken
	// then, not seconds later; the exact deadline is TestFinalWaitAfterStop's.
	if len(stopped) > 0 {
		eot := strict[event.SpeechStopped](t, stopped[0])
		speechEnd := stopped[0].At.Add(-time.Duration(eot.EndOfTurnMS) * time.Millisecond)
		var first time.Time
		for _, p := range res.Audio {
			if p.Marker && p.At.After(stopped[0].At) { // the busy answer's talkspurt
				first = p.At
				break
			}
		}
		t.Logf("busy answer's first packet %v after the true end of speech (listen_wait_ms %d)", first.Sub(speechEnd), cfg.ListenWaitMs)
		due := speechEnd.Add(time.Duration(cfg.ListenWaitMs)*time.Millisecond + time.Second)
		if first.IsZero() || first.After(due) {
			t.Errorf("busy answer's first packet at %v after the end of speech, want by listen_wait_ms (%d ms) + 1 s slack",
				first.Sub(speechEnd), cfg.ListenWaitMs)
		}
	}
	if got := counterValue(t, st.metrics.FinalLate); got < 1 {
		t.Errorf("final_late_total %v, want at least 1 (listen_busy_total %v)", got, counterValue(t, st.metrics.ListenBusy))
	}
}

// The final's wait after input.speech_stopped: voice.listen_wait_ms from the
// true end of speech, the end of turn counted up to eotCounted, less busyLead so that
// the busy answer's first packet is due by listen_wait_ms; at least
// minFinalAfterStop, so that a patient session's recogniser is not given no
// time at all. The old rule (no lead) gives 1 s for the default silence and
// fails here.
func TestFinalWaitAfterStop(t *testing.T) {
	c := DefaultConfig() // listen_wait_ms 1500
	for _, tc := range []struct{ eot, want time.Duration }{
		{200 * time.Millisecond, 1150 * time.Millisecond}, // adaptive policy
		{500 * time.Millisecond, 850 * time.Millisecond},  // the default silence
		{1500 * time.Millisecond, 850 * time.Millisecond}, // hello.patience 3: pausing is not penalised
	} {
		if got := c.finalWaitAfterStop(tc.eot); got != tc.want {
			t.Errorf("end of turn %v: final wait %v after speech_stopped, want %v", tc.eot, got, tc.want)
		}
		if due := tc.eot + c.finalWaitAfterStop(tc.eot) + busyLead; tc.eot <= eotCounted && due > 1500*time.Millisecond {
			t.Errorf("end of turn %v: busy answer due %v after the end of speech, past listen_wait_ms", tc.eot, due)
		}
	}
	c.ListenWaitMs = 300
	if got := c.finalWaitAfterStop(500 * time.Millisecond); got != minFinalAfterStop {
		t.Errorf("listen_wait_ms 300, end of turn 500 ms: %v, want %v", got, minFinalAfterStop)
	}
}
