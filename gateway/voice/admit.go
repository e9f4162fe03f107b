package voice

import (
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Admission by the recogniser's measured capacity, so that the sessions it
// admits are heard rather than told they were not. The embedded recogniser
// is a pool of c decoders (router.sphinx.pool, Deps.Recognisers) and a live
// turn holds one from its recogniser's open until its transcript: the
// speech itself, then the final decode, slower when the machine is busy.
// talkLoad keeps, from the voice sessions' own turns:
//
//   - hold: the seconds a turn held its decoder (EWMA), so the recogniser
//     answers at most c / hold turns a second;
//   - quiet: the seconds between one turn's end and the same session's
//     next turn (EWMA), so a talking session is in a turn a share
//     duty = hold / (hold + quiet) of the time;
//   - the talking sessions: those that have talked, and those too young to
//     tell, counted at the share of sessions that talked within their
//     first talkProbation (EWMA; 1 before any session has told: people
//     connect to talk). Sessions that stayed quiet past it (listening)
//     count nothing until they talk.
//
// A new session's turn finds each of the m others in a turn with
// probability duty (independent talkers: a binomial count k). When k ≥ c
// it queues behind k−c+1 releases, one every hold/c seconds on average:
//
//	expected wait = Σ_{k≥c} P(k) · (k−c+1) · hold/c
//
// Admission refuses the session (503 + Retry-After) when that wait would
// exceed voice.admit_listen_wait_ms, a share of voice.listen_wait_ms, past
// which turns start to be answered busy. It adds to the reactive rule (a
// turn that did wait that long refuses for admitHold). Not estimated, and
// never refusing, when the recogniser is not a bounded pool (Recognisers 0).
type talkLoad struct {
	decoders  int           // c; 0: no estimate
	admitWait time.Duration // 0: never refuse
	g         *Metrics      // the estimate's gauges

	mu      sync.Mutex // mu guards the fields below
	hold    ewma
	quiet   ewma
	share   ewma // of the sessions that told, the share that talked
	talkers map[*talker]struct{}
	pending []time.Time // admitted, not yet joined (the offer is being answered)
}

// talker is one voice session's talk, as talkLoad sees it.
type talker struct {
	joined  time.Time
	talked  bool
	told    bool      // counted in share (talked, or quiet past the probation)
	lastEnd time.Time // when its last turn ended; zero: none yet
}

// The estimate's priors, until turns are measured: a 5 s turn every 10 s
// (talking-load's mix; BENCHMARKS.md measured 6 s on 2 cores), and every
// new session a talker. Cautious on purpose: sessions arriving together
// before any turn are admitted as far as c decoders never make a turn wait
// (2 at once on 2 decoders), and further once their turns are measured.
const (
	priorHold  = 5.0
	priorQuiet = 5.0
	// talkProbation is how long a session that has not talked is presumed
	// to be about to.
	talkProbation = 15 * time.Second
	// pendingFor bounds how long an admitted session counts before it has
	// joined (its offer failed, or is very slow).
	pendingFor = 10 * time.Second
	ewmaWeight = 0.25
)

// ewma is an exponentially weighted mean over samples, from a prior.
type ewma struct{ v float64 }

func (e *ewma) add(x float64) { e.v += ewmaWeight * (x - e.v) }

func newTalkLoad(decoders int, admitWait time.Duration, m *Metrics) *talkLoad {
	return &talkLoad{decoders: decoders, admitWait: admitWait, g: m,
		hold: ewma{priorHold}, quiet: ewma{priorQuiet}, share: ewma{1}, talkers: map[*talker]struct{}{}}
}

// join registers a new session's talk at now, in place of its admission.
func (l *talkLoad) join(now time.Time) *talker {
	t := &talker{joined: now}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) > 0 {
		l.pending = l.pending[1:]
	}
	l.talkers[t] = struct{}{}
	return t
}

// leave forgets a closed session.
func (l *talkLoad) leave(t *talker) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.talkers, t)
}

// started: t's turn started at now.
func (l *talkLoad) started(t *talker, now time.Time) {
	if l == nil || t == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !t.told {
		t.told = true
		l.share.add(1)
	}
	if t.talked && !t.lastEnd.IsZero() && now.After(t.lastEnd) {
		l.quiet.add(now.Sub(t.lastEnd).Seconds())
	}
	t.talked = true
}

// ended: t's turn ended at now; held is how long it held a decoder (0: it
// got none, and was answered busy).
func (l *talkLoad) ended(t *talker, now time.Time, held time.Duration) {
	if l == nil || t == nil {
		return
	}
	l.mu.Lock()
	t.lastEnd = now
	if held > 0 {
		l.hold.add(held.Seconds())
	}
	l.mu.Unlock()
	l.estimate(now) // the gauges follow every turn
}

// recogniserClosed: the turn of fd closed its recogniser now (its
// transcript is in, or it failed).
func (s *voiceSession) recogniserClosed(fd *feeder) {
	now := s.factory.clock.Now()
	s.factory.load.ended(s.talk, now, now.Sub(fd.opened))
}

// loadEstimate is talkLoad's view at one time (the /metrics gauges).
type loadEstimate struct {
	Talking  float64 // talking sessions (weighted), pending admissions included
	Hold     float64 // seconds a turn holds a decoder
	Duty     float64 // share of time a talking session is in a turn
	Capacity float64 // turns a second the recogniser answers at most: c / hold
	Offered  float64 // turns a second the talking sessions ask for
	Wait     float64 // seconds one more session's turns would wait on average
}

// estimate computes the view at now and sets the gauges.
func (l *talkLoad) estimate(now time.Time) loadEstimate {
	l.mu.Lock()
	for len(l.pending) > 0 && now.Sub(l.pending[0]) >= pendingFor {
		l.pending = l.pending[1:]
	}
	n := float64(len(l.pending)) * l.share.v
	for t := range l.talkers {
		switch {
		case t.talked:
			n++
		case t.told: // quiet past the probation: listening
		case now.Sub(t.joined) >= talkProbation:
			t.told = true
			l.share.add(0)
		default:
			n += l.share.v
		}
	}
	e := loadEstimate{Talking: n, Hold: l.hold.v, Duty: l.hold.v / (l.hold.v + l.quiet.v)}
	e.Offered = n / (l.hold.v + l.quiet.v)
	l.mu.Unlock()
	if l.decoders > 0 {
		e.Capacity = float64(l.decoders) / e.Hold
		e.Wait = expectedWait(int(math.Round(n)), l.decoders, e.Duty, e.Hold)
	}
	if l.g != nil {
		l.g.LoadTalking.Set(e.Talking)
		l.g.LoadHold.Set(e.Hold)
		l.g.LoadDuty.Set(e.Duty)
		l.g.LoadCapacity.Set(e.Capacity)
		l.g.LoadOffered.Set(e.Offered)
		l.g.LoadWait.Set(e.Wait)
	}
	return e
}

// admit reports whether one more session keeps the expected wait within
// admitWait, and if so counts it as pending until it joins.
func (l *talkLoad) admit(now time.Time) bool {
	if l.decoders <= 0 || l.admitWait <= 0 {
		return true
	}
	if l.estimate(now).Wait > l.admitWait.Seconds() {
		return false
	}
	l.mu.Lock()
	l.pending = append(l.pending, now)
	l.mu.Unlock()
	return true
}

// expectedWait is the mean wait for a decoder of a turn that m other
// talkers, each in a turn a share duty of the time, share with c decoders
// each held hold seconds (see talkLoad).
func expectedWait(m, c int, duty, hold float64) float64 {
	if m < c || duty <= 0 {
		return 0
	}
	if duty >= 1 {
		return float64(m-c+1) * hold / float64(c)
	}
	lm, _ := math.Lgamma(float64(m + 1))
	lp, lq := math.Log(duty), math.Log1p(-duty)
	w := 0.0
	for k := c; k <= m; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lmk, _ := math.Lgamma(float64(m - k + 1))
		p := math.Exp(lm - lk - lmk + float64(k)*lp + float64(m-k)*lq)
		w += p * float64(k-c+1)
	}
	return w * hold / float64(c)
}

// loadGauges are the estimate's series on /metrics.
func loadGauges() (talking, hold, duty, capacity, offered, wait prometheus.Gauge) {
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "vera", Subsystem: "voice", Name: name, Help: help})
	}
	return g("talking_sessions", "Voice sessions admission counts as talking: those that have talked, those too young to tell (weighted by the share of sessions that talked within their first 15 s) and those admitted but not yet connected."),
		g("recogniser_hold_seconds", "How long a turn holds a recogniser (EWMA of measured turns: its speech, then the final decode)."),
		g("talk_duty", "Share of time a talking session is in a turn: hold / (hold + the EWMA quiet between its turns)."),
		g("recogniser_turns_per_second", "Turns a second the embedded recogniser answers at most: its decoders (router.sphinx.pool) / recogniser_hold_seconds. 0 when the recogniser is not a bounded pool."),
		g("offered_turns_per_second", "Turns a second the talking sessions ask of the recogniser: talking_sessions / (hold + quiet)."),
		g("expected_listen_wait_seconds", "Expected wait for a recogniser of the turns of one more session; past voice.admit_listen_wait_ms new voice sessions are refused (503 + Retry-After).")
}
