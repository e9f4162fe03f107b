package voice

import (
	"context"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/veraneural/vera-gateway/fixtures"
)

func TestExpectedWait(t *testing.T) {
	for _, c := range []struct {
		m, c        int
		duty, hold  float64
		want        float64
		explanation string
	}{
		{1, 2, 0.9, 6, 0, "fewer others than decoders never wait"},
		{2, 2, 0.5, 6, 0.75, "both others in a turn a quarter of the time: one release, 3 s apart"},
		{3, 1, 0.5, 2, 3.0, "k=1,2,3 with P 3/8, 3/8, 1/8, waiting 1, 2, 3 releases of 2 s"},
		{5, 2, 0, 6, 0, "nobody talks"},
		{4, 2, 1, 6, 9, "everyone always talks: 3 releases of 3 s"},
	} {
		if got := expectedWait(c.m, c.c, c.duty, c.hold); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("expectedWait(%d, %d, %v, %v) = %v, want %v (%s)", c.m, c.c, c.duty, c.hold, got, c.want, c.explanation)
		}
	}
	// Large counts stay finite (log-space binomial).
	if w := expectedWait(1000, 2, 0.5, 6); math.IsNaN(w) || math.IsInf(w, 0) || w < 1000 {
		t.Errorf("expectedWait(1000 …) = %v", w)
	}
}

// admitted admits and joins sessions at now until admission refuses one, at
// most limit, and returns them.
func admitted(l *talkLoad, now time.Time, limit int) []*talker {
	var out []*talker
	for len(out) < limit && l.admit(now) {
		out = append(out, l.join(now))
	}
	return out
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// Sessions arriving together are admitted only as far as the recogniser's
// decoders carry their talk (the priors before any turn), and further once
// their turns show they talk little; sessions that stay quiet past the
// probation stop counting, so listening sessions are admitted.
func TestTalkLoadSizesAdmission(t *testing.T) {
	m := NewMetrics(nil)
	l := newTalkLoad(2, 500*time.Millisecond, m)
	t0 := time.Unix(1_700_000_000, 0)
	first := admitted(l, t0, 100)
	// Priors: duty 1/2, hold 5 s; 1 other never makes a turn wait, 2 make
	// it wait 0.625 s on average (both in a turn a quarter of the time, one
	// release every 2.5 s).
	if len(first) != 2 {
		t.Fatalf("admitted %d sessions at once on 2 decoders, want 2", len(first))
	}
	if w := gaugeValue(t, m.LoadWait); w <= 0.5 {
		t.Errorf("expected wait gauge %v after a refusal, want > 0.5", w)
	}
	if c := gaugeValue(t, m.LoadCapacity); math.Abs(c-0.4) > 1e-9 {
		t.Errorf("capacity %v turns/s, want 2 decoders / 5 s", c)
	}
	// They talk: 1 s turns, 9 s apart.
	now := t0
	for i := 0; i < 30; i++ {
		for _, s := range first {
			l.started(s, now)
			l.ended(s, now.Add(time.Second), time.Second)
		}
		now = now.Add(10 * time.Second)
	}
	e := l.estimate(now)
	if math.Abs(e.Hold-1) > 0.01 || math.Abs(e.Duty-0.1) > 0.01 || math.Abs(e.Capacity-2) > 0.02 {
		t.Fatalf("estimate after 1 s turns every 10 s: %+v", e)
	}
	more := admitted(l, now, 100)
	if len(more) < 5 {
		t.Fatalf("admitted %d more sessions talking 10 %% of the time, want at least 5", len(more))
	}
	// The newcomers never talk: past the probation they count as listening,
	// and the share of sessions that talk falls.
	now = now.Add(talkProbation)
	before := l.estimate(now).Talking
	if before > float64(len(first))+0.5 {
		t.Fatalf("talking %v with %d talkers and %d quiet past the probation", before, len(first), len(more))
	}
	if l.share.v >= 1 {
		t.Fatalf("talk share %v after %d sessions stayed quiet", l.share.v, len(more))
	}
	if n := len(admitted(l, now, 100)); n == 0 {
		t.Fatal("nothing admitted once the young sessions showed they only listen")
	}
	// Leaving frees the estimate.
	for s := range l.talkers {
		l.leave(s)
	}
	if e := l.estimate(now.Add(pendingFor)); e.Talking != 0 || e.Wait != 0 {
		t.Fatalf("estimate with nobody left: %+v", e)
	}
}

// A busy answer ends a turn without a hold sample, and the quiet between a
// session's turns is measured from its last turn's end.
func TestTalkLoadSamples(t *testing.T) {
	l := newTalkLoad(1, 500*time.Millisecond, nil)
	t0 := time.Unix(1_700_000_000, 0)
	s := l.join(t0)
	l.started(s, t0)
	l.ended(s, t0.Add(time.Second), 0) // busy
	if l.hold.v != priorHold || l.quiet.v != priorQuiet {
		t.Fatalf("hold %v quiet %v after one busy turn, want the priors", l.hold.v, l.quiet.v)
	}
	l.started(s, t0.Add(5*time.Second))
	if want := priorQuiet + ewmaWeight*(4-priorQuiet); math.Abs(l.quiet.v-want) > 1e-9 {
		t.Fatalf("quiet %v, want %v (a 4 s gap)", l.quiet.v, want)
	}
	if newTalkLoad(0, time.Second, nil).admit(t0) != true || newTalkLoad(2, 0, nil).admit(t0) != true {
		t.Fatal("admission refuses with no bounded recogniser or admit_listen_wait_ms 0")
	}
}

// Against real peers: with one decoder, a second talking session arriving
// while the first is young is refused with 503 + Retry-After, before any
// turn has waited; once the first hangs up, sessions are admitted again.
func TestAdmissionSizedToRecogniser(t *testing.T) {
	r := onePoolRouter(t)
	cfg := testConfig()
	st := newStack(t, stackOptions{router: r, cfg: &cfg, admit: true, recognisers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := fixtures.Start(ctx, fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(st.URL, "application/sdp", strings.NewReader("v=0\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "recogniser") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second session on one decoder: %d %q Retry-After %q, want 503 naming the recogniser", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	if got := counterValue(t, st.metrics.AdmissionRefused); got != 1 {
		t.Errorf("admission_refused_total %v, want 1", got)
	}
	if w := gaugeValue(t, st.metrics.LoadWait); w <= 0.5 {
		t.Errorf("expected_listen_wait_seconds %v, want past 0.5", w)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for st.factory.Admit() != nil {
		if time.Now().After(deadline) {
			t.Fatal("still refused after the only session hung up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
