package main

// Running a policy on the decision points. Each point is played on its own
// (as eot-bench scores a span): a fresh inbound pipeline (real VAD, the
// detector with the policy under test, no echo guard) hears 0.5 s of the
// clip's room tone, up to contextMs of the clip before the silence, then the
// silence: for a hold, the real audio until the speaker goes on (and a
// little after); for an end, the real silence and then room tone, so the
// policy may take as long as it likes. The recogniser's partials reach the
// detector when they would have: every 200 ms of audio it has heard, plus
// the lag, from a recogniser that has heard the clip from its start.
//
// A hold is cut off when the detector ends the turn inside the silence (or
// in the 100 ms the VAD needs to hear the speech resume); an end's latency
// is the time from the labelled end of speech to the detector's decision
// (0 if it decided earlier; the whole tail if it never did).

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
)

const (
	leadMs = 500
	// resumeGraceMs: a decision this soon after the speech resumes was
	// made before the VAD could hear it: still a cut-off.
	resumeGraceMs = 100
	// holdAfterMs of the resumed speech are played after a hold.
	holdAfterMs = 500
)

// partial is a transcript that reaches the detector at sample time at (of
// the clip, or of the stream once placed).
type partial struct {
	at    int64
	text  string
	heard int64 // the audio it has heard, up to this sample time (at − the lag)
}

// eotStream is one decision point, ready to play.
type eotStream struct {
	clip     string
	at       int64 // the pause's start in the clip (samples)
	pcm      []int16
	s, e     int64 // the silence in stream samples
	end      bool
	kind     string // eot.json's kind of pause, when given
	partials []partial
}

// buildStream places point p of clip c in its own stream; parts are the
// partials in clip time (nil: none).
func buildStream(c *eotClip, p eotPoint, tone []int16, parts []partial, contextMs, tailMs int) eotStream {
	lead := int64(leadMs * msSamples)
	ctx := max(0, p.S-int64(contextMs*msSamples))
	n := int64(len(c.pcm))
	pcm := appendTone(make([]int16, 0, lead+p.S-ctx+int64(tailMs*msSamples)+int64(holdAfterMs*msSamples)), tone, int(lead))
	pcm = append(pcm, c.pcm[ctx:p.S]...)
	off := lead - ctx // stream time = clip time + off
	st := eotStream{clip: c.name, at: p.S, s: p.S + off, e: p.E + off, end: p.End, kind: p.Kind}
	var limit int64 // clip time up to which partials are the clip's own
	if !p.End {
		stop := min(p.E+int64(holdAfterMs*msSamples), n)
		pcm = append(pcm, c.pcm[p.S:stop]...)
		limit = stop
	} else {
		stop := p.E
		if !p.Next {
			stop = min(n, p.S+int64(tailMs*msSamples))
		}
		pcm = append(pcm, c.pcm[p.S:stop]...)
		want := int(st.s + int64(tailMs*msSamples) - int64(len(pcm)))
		if want > 0 {
			pcm = appendTone(pcm, tone, want)
		}
		limit = stop
		if !p.Next {
			limit = p.S + int64(tailMs*msSamples) // the clip's timeline runs on into its own tone
		}
	}
	st.pcm = pcm
	for _, pt := range parts {
		if pt.at >= ctx && pt.at <= limit {
			st.partials = append(st.partials, partial{pt.at + off, pt.text, pt.heard + off})
		}
	}
	return st
}

// outcome is what one setting did at one point.
type outcome struct {
	cut     bool  // hold: ended inside the silence
	latency int64 // end: samples from the end of speech to the decision
	missed  bool  // end: no decision by the end of the tail
	inTurn  bool  // the detector was in a turn when the silence began
}

// runStream plays st through a fresh inbound pipeline with turn config tc.
func runStream(st *eotStream, tc turn.Config) (outcome, error) {
	pc := pipeline.DefaultConfig()
	pc.Turn, pc.EchoGuard = tc, false
	in, err := pipeline.New(pc)
	if err != nil {
		return outcome{}, err
	}
	type stop struct{ at, speechEnd int64 }
	var stops []stop
	speaking := false
	var o outcome
	emit := func(e *turn.Event) {
		switch e.Type {
		case turn.SpeechStarted:
			speaking = true
		case turn.SpeechStopped:
			speaking = false
			stops = append(stops, stop{e.At, e.SpeechEnd})
		}
	}
	const chunk = audio.Frame20
	pi := 0
	for k := int64(0); k+chunk <= int64(len(st.pcm)); k += chunk {
		for pi < len(st.partials) && st.partials[pi].at <= k {
			in.SetTranscriptHeard(st.partials[pi].text, st.partials[pi].heard)
			pi++
		}
		if k <= st.s && st.s < k+chunk {
			o.inTurn = speaking
		}
		in.Analyse(st.pcm[k:k+chunk], k, false, emit)
	}
	// The first decision about this silence: one whose speech ended near
	// its start (not an earlier pause of the context).
	near := st.s - 300*msSamples
	grace := int64(resumeGraceMs * msSamples)
	for _, s := range stops {
		if s.speechEnd < near || s.at < st.s-int64(300*msSamples) {
			continue
		}
		if !st.end {
			o.cut = s.at < st.e+grace && s.speechEnd <= st.e
			return o, nil
		}
		o.latency = max(s.at-st.s, 0)
		return o, nil
	}
	if st.end {
		o.latency, o.missed = int64(len(st.pcm))-st.s, true
	}
	return o, nil
}

// setting is one point of a policy's sweep.
type setting struct {
	policy string
	params string
	cfg    turn.Config
}

// eotResult is a setting's score over every point.
type eotResult struct {
	Params    string  `json:"params"`
	FCR       float64 `json:"fcr"`
	LatencyMs float64 `json:"latency_ms"`
	P50Ms     float64 `json:"latency_p50_ms"`
	Cut       int     `json:"cut"`
	Missed    int     `json:"missed"`
	NotInTurn int     `json:"not_in_turn"`
	policy    string
	lat       []float64
}

// score runs every setting on every stream, on workers goroutines.
func score(streams []eotStream, settings []setting, workers int) ([]eotResult, error) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	type job struct{ si, pi int }
	outs := make([][]outcome, len(settings))
	for i := range outs {
		outs[i] = make([]outcome, len(streams))
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				o, err := runStream(&streams[j.pi], settings[j.si].cfg)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s %s: %w", settings[j.si].policy, settings[j.si].params, err)
					}
					mu.Unlock()
					continue
				}
				outs[j.si][j.pi] = o
			}
		}()
	}
	for si := range settings {
		for pi := range streams {
			jobs <- job{si, pi}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	res := make([]eotResult, len(settings))
	for si, set := range settings {
		res[si] = tally(set, streams, outs[si])
	}
	return res, nil
}

func tally(set setting, streams []eotStream, outs []outcome) eotResult {
	r := eotResult{Params: set.params, policy: set.policy}
	holds := 0
	for i, o := range outs {
		if !o.inTurn {
			r.NotInTurn++
		}
		if !streams[i].end {
			holds++
			if o.cut {
				r.Cut++
			}
			continue
		}
		if o.missed {
			r.Missed++
		}
		r.lat = append(r.lat, float64(o.latency)/msSamples)
	}
	if holds > 0 {
		r.FCR = float64(r.Cut) / float64(holds)
	}
	if len(r.lat) > 0 {
		var sum float64
		for _, l := range r.lat {
			sum += l
		}
		r.LatencyMs = sum / float64(len(r.lat))
		s := append([]float64(nil), r.lat...)
		sort.Float64s(s)
		r.P50Ms = percentile(s, 50)
	}
	return r
}

// operating is a policy's row: the best false-cutoff rate within a latency
// budget and the best mean latency within a cutoff budget (nil: no setting
// reaches the budget).
type operating struct {
	Name    string      `json:"name"`
	FCR300  *float64    `json:"fcr_300"`
	FCR600  *float64    `json:"fcr_600"`
	Lat5    *float64    `json:"latency_ms_at_5"`
	Lat10   *float64    `json:"latency_ms_at_10"`
	Pareto  []eotResult `json:"pareto"`
	Swept   int         `json:"settings"`
	Default *eotResult  `json:"default,omitempty"`
}

func operatingPoints(name string, rs []eotResult) operating {
	op := operating{Name: name, Swept: len(rs)}
	best := func(keep func(eotResult) bool, val func(eotResult) float64) *float64 {
		var b *float64
		for _, r := range rs {
			if keep(r) {
				v := val(r)
				if b == nil || v < *b {
					b = &v
				}
			}
		}
		return b
	}
	fcr := func(r eotResult) float64 { return r.FCR }
	lat := func(r eotResult) float64 { return r.LatencyMs }
	op.FCR300 = best(func(r eotResult) bool { return r.LatencyMs <= 300 }, fcr)
	op.FCR600 = best(func(r eotResult) bool { return r.LatencyMs <= 600 }, fcr)
	op.Lat5 = best(func(r eotResult) bool { return r.FCR <= 0.05 }, lat)
	op.Lat10 = best(func(r eotResult) bool { return r.FCR <= 0.10 }, lat)
	op.Pareto = pareto(rs)
	return op
}

// pareto is the settings no other setting beats on both cutoffs and
// latency, by latency.
func pareto(rs []eotResult) []eotResult {
	s := append([]eotResult(nil), rs...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].LatencyMs != s[j].LatencyMs {
			return s[i].LatencyMs < s[j].LatencyMs
		}
		return s[i].FCR < s[j].FCR
	})
	var out []eotResult
	bestFCR := 2.0
	for _, r := range s {
		if r.FCR < bestFCR {
			out = append(out, r)
			bestFCR = r.FCR
		}
	}
	return out
}
