package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// slot is one of the run's N concurrent sessions. In soak mode churn hangs
// its session up and a new session joins in its place, so the count stays
// at N while sessions come and go.
type slot struct {
	mu     sync.Mutex // mu guards hangup
	hangup chan struct{}
	// outcomes are the slot's sessions in order; written by run only, read
	// after run returned.
	outcomes []sessionOutcome
}

func newSlot() *slot { return &slot{hangup: make(chan struct{})} }

// run plays sessions in the slot until the run stops. Only a session hung
// up by churn is replaced; one that failed or ended otherwise ends the slot.
// ready is called once, for the first session.
func (sl *slot) run(ctx context.Context, lr *loadRun, idx int, ready func()) {
	for k := 0; ; k++ {
		sl.mu.Lock()
		h := sl.hangup
		sl.mu.Unlock()
		r := ready
		if k > 0 {
			r = func() {}
		}
		sl.outcomes = append(sl.outcomes, lr.runSession(ctx, idx+k, r, h))
		select {
		case <-lr.stop:
			return
		case <-ctx.Done():
			return
		case <-h:
		default:
			return
		}
		sl.mu.Lock()
		sl.hangup = make(chan struct{})
		sl.mu.Unlock()
		lr.replaced.Add(1)
	}
}

// kick hangs the slot's current session up (once; no-op if already asked).
func (sl *slot) kick() {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	select {
	case <-sl.hangup:
	default:
		close(sl.hangup)
	}
}

// soakSample is one read of the gateway during the soak.
type soakSample struct {
	TSec       float64  `json:"t_s"` // since the soak window started
	Goroutines *float64 `json:"goroutines"`
	RSSBytes   *float64 `json:"rss_bytes"`
	Sessions   *float64 `json:"sessions"`
}

// soakPoints are a figure idle before the run, at the start and the end of
// the soak window (sessions live) and idle again after every session hung
// up.
type soakPoints struct {
	Before *float64 `json:"before"`
	Start  *float64 `json:"start"`
	End    *float64 `json:"end"`
	After  *float64 `json:"after"`
}

// soakReport is the -soak part of the -json object.
type soakReport struct {
	Churn         string     `json:"churn"`
	ChurnPerTick  int        `json:"churn_sessions_per_tick"`
	HangUps       int        `json:"churn_hangups"`     // sessions churn hung up
	Replaced      int        `json:"sessions_replaced"` // new sessions that joined in their place (the last hang-ups may see the run end first)
	Goroutines    soakPoints `json:"goroutines"`
	RSSBytes      soakPoints `json:"rss_bytes"`
	Sessions      soakPoints `json:"voice_sessions"`
	GoroutinesPer struct {
		Start *float64 `json:"start"`
		End   *float64 `json:"end"`
	} `json:"goroutines_per_session"`
	Samples []soakSample `json:"samples"`
	// Flat: goroutines per live session at the end within 5 % (+0.5) of the
	// start, RSS at the end within 25 % of the start, and idle goroutines
	// after the run within 10 of before it. Verdict says which failed.
	Flat    bool   `json:"flat"`
	Verdict string `json:"verdict"`
}

// Soak flatness bounds (see soakReport.Flat). RSS gets the widest margin:
// the Go heap grows to its GC target and is handed back to the OS lazily.
const (
	soakGoroutineRatio = 1.05
	soakGoroutineSlack = 0.5
	soakRSSRatio       = 1.25
	soakIdleSlack      = 10
	soakIdleWait       = 20 * time.Second
)

// soakRun is the churn and bookkeeping of a -soak run (main goroutine
// only, but for the samples).
type soakRun struct {
	o       options
	t0      time.Time
	start   *scrape // first read of the window
	next    int     // next slot to hang up, round robin
	perTick int
	rep     soakReport

	// A sample is read on a goroutine of its own (bounded by its 5 s
	// scrape deadline), joined by finish: on a busy machine a scrape can
	// take seconds, and churn must keep its schedule.
	sampling sync.WaitGroup
	mu       sync.Mutex // mu guards rep.Samples until finish
}

func newSoakRun(o options, start *scrape) *soakRun {
	per := max(1, int(math.Ceil(float64(o.sessions)*o.churnPct/100)))
	return &soakRun{o: o, t0: time.Now(), start: start, perTick: per,
		rep: soakReport{Churn: o.churn.String(), ChurnPerTick: per}}
}

// churn hangs up the next perTick sessions (each slot then starts a new
// one) and samples the gateway.
func (r *soakRun) churn(ctx context.Context, hc *http.Client, murl string, slots []*slot) {
	for range r.perTick {
		if sl := slots[r.next%len(slots)]; sl != nil {
			sl.kick()
			r.rep.HangUps++
		}
		r.next++
	}
	r.sampling.Go(func() { r.sample(ctx, hc, murl) })
}

func (r *soakRun) sample(ctx context.Context, hc *http.Client, murl string) {
	at := round3(time.Since(r.t0).Seconds())
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := scrapeMetrics(sctx, hc, murl)
	if err != nil {
		return // a missed sample; start and end decide
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Samples = append(r.rep.Samples, soakSample{TSec: at,
		Goroutines: ptr(m.goroutines), RSSBytes: ptr(m.rss), Sessions: ptr(m.sessions)})
}

// finish reads the gateway idle again after every session hung up (waiting
// up to soakIdleWait for its goroutines to wind down) and judges flatness.
// before is the read from before the first session, end the one at the end
// of the window.
func (r *soakRun) finish(ctx context.Context, hc *http.Client, murl string, before, end *scrape, replaced int) *soakReport {
	r.sampling.Wait()
	slices.SortFunc(r.rep.Samples, func(a, b soakSample) int { return cmp.Compare(a.TSec, b.TSec) })
	r.rep.Replaced = replaced
	// The run's pooled keep-alive connections each hold gateway goroutines
	// that are not the sessions'.
	hc.CloseIdleConnections()
	var after *scrape
	deadline := time.Now().Add(soakIdleWait)
	for {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := scrapeMetrics(sctx, hc, murl)
		cancel()
		if err == nil {
			after = m
		}
		idle := after != nil && before != nil && after.sessions == 0 && after.goroutines <= before.goroutines+soakIdleSlack
		if idle || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		t := time.NewTimer(time.Second)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	pts := func(f func(*scrape) float64) soakPoints {
		get := func(s *scrape) *float64 {
			if s == nil {
				return nil
			}
			return ptr(f(s))
		}
		return soakPoints{Before: get(before), Start: get(r.start), End: get(end), After: get(after)}
	}
	rep := &r.rep
	rep.Goroutines = pts(func(s *scrape) float64 { return s.goroutines })
	rep.RSSBytes = pts(func(s *scrape) float64 { return s.rss })
	rep.Sessions = pts(func(s *scrape) float64 { return s.sessions })
	perSession := func(s *scrape) *float64 {
		if s == nil || before == nil || s.sessions <= 0 {
			return nil
		}
		return ptr((s.goroutines - before.goroutines) / s.sessions)
	}
	rep.GoroutinesPer.Start, rep.GoroutinesPer.End = perSession(r.start), perSession(end)
	rep.Flat, rep.Verdict = judgeSoak(rep)
	return rep
}

// judgeSoak applies the flatness bounds; missing figures are not flat.
func judgeSoak(r *soakReport) (bool, string) {
	var bad []string
	gs, ge := r.GoroutinesPer.Start, r.GoroutinesPer.End
	switch {
	case gs == nil || ge == nil:
		bad = append(bad, "goroutines per session not measured")
	case *ge > *gs*soakGoroutineRatio+soakGoroutineSlack:
		bad = append(bad, fmt.Sprintf("goroutines per session grew %.2f → %.2f", *gs, *ge))
	}
	rs, re := r.RSSBytes.Start, r.RSSBytes.End
	switch {
	case rs == nil || re == nil:
		bad = append(bad, "RSS not measured")
	case *re > *rs*soakRSSRatio:
		bad = append(bad, fmt.Sprintf("RSS grew %.0f → %.0f MiB", *rs/(1<<20), *re/(1<<20)))
	}
	gb, ga := r.Goroutines.Before, r.Goroutines.After
	switch {
	case gb == nil || ga == nil:
		bad = append(bad, "idle goroutines not measured")
	case *ga > *gb+soakIdleSlack:
		bad = append(bad, fmt.Sprintf("idle goroutines %.0f before, %.0f after", *gb, *ga))
	}
	if len(bad) > 0 {
		return false, "not flat: " + strings.Join(bad, "; ")
	}
	return true, "flat"
}
