package main

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// spokenTurn is one expected turn as the client played it.
type spokenTurn struct {
	start time.Time // send time of its first speech packet
	end   time.Time // send time of its last speech packet (true end of speech)
}

// sessionStats is what one session measured, from the client's clock.
type sessionStats struct {
	expected, matched, detected int
	eot, firstAudio, card       []float64 // ms
	queued                      int       // turns whose end found the gateway still talking
	sent, received, lost        int
	receivedInWindow            int // reply/notice packets that arrived at or after from

	outcomes map[string]int // every detected turn of the session, by outcome
	// turnTotal is, per answered turn in the window, the first reply packet
	// after the true end of speech the detector reported; segs its
	// segments by name (segmentOrder), which sum to it.
	turnTotal []float64
	segs      map[string][]float64
	// windowTurns counts the turns detected in the window; prompt has, per
	// such turn answered or told busy, its first packet after the true end
	// of speech (turns without one are in windowTurns only).
	windowTurns int
	prompt      []float64
}

// addTurns counts every detected turn's outcome, and the latency segments
// of those answered in the window (their speech_stopped at or after from).
func (st *sessionStats) addTurns(recs []turnRecord, from time.Time) {
	st.outcomes = map[string]int{}
	st.segs = map[string][]float64{}
	for _, r := range recs {
		st.outcomes[r.outcome]++
		tot := r.totalMs()
		if !r.stopped.Before(from) {
			st.windowTurns++
			if tot >= 0 && (r.outcome == outcomeAnswered || r.outcome == outcomeBusy) {
				st.prompt = append(st.prompt, tot)
			}
		}
		if r.stopped.Before(from) || tot < 0 || r.latency == nil {
			continue
		}
		st.turnTotal = append(st.turnTotal, tot)
		for k, v := range r.latency.segments(tot) {
			st.segs[k] = append(st.segs[k], v)
		}
	}
}

// segDist is a dist with the mean: the means of a turn's segments sum to
// the mean of its total (the quantiles do not).
type segDist struct {
	dist
	Mean *float64 `json:"mean"`
}

func summarizeMean(v []float64) segDist {
	d := segDist{dist: summarize(v)}
	if len(v) > 0 {
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		m := math.Round(sum/float64(len(v))*10) / 10
		d.Mean = &m
	}
	return d
}

// busyBefore is how recent a received packet must be for the gateway to
// count as talking when a turn ends (its reply then queues behind that audio
// and first_audio_ms would measure the queue, not the gateway).
const busyBefore = 100 * time.Millisecond

// analyse matches expected turns to input.speech_stopped events and derives
// the latencies. turns are sorted; a turn's event must arrive after its end
// of speech and before window passes or the next turn starts (+ mergeGap).
//
// Only turns that end at or after from are counted (the measured window);
// earlier turns still consume their events so they are not miscounted.
func analyse(turns []spokenTurn, events []fixtures.Event, audio []fixtures.ReceivedPacket, window, mergeGap time.Duration, from time.Time) sessionStats {
	var st sessionStats
	var stopped, cards []fixtures.Event
	for _, e := range events {
		switch e.Type {
		case fixtures.EventSpeechStopped:
			stopped = append(stopped, e)
		case "safety.card":
			cards = append(cards, e)
		}
	}
	for _, e := range stopped {
		if !e.At.Before(from) {
			st.detected++
		}
	}
	st.received = len(audio)
	for _, p := range audio {
		if !p.At.Before(from) {
			st.receivedInWindow++
		}
	}
	st.lost = lostPackets(audio)
	k := 0
	for j, t := range turns {
		counted := !t.end.Before(from)
		if counted {
			st.expected++
		}
		limit := t.end.Add(window)
		if j+1 < len(turns) {
			limit = minTime(limit, turns[j+1].start.Add(mergeGap))
		}
		for k < len(stopped) && stopped[k].At.Before(t.end) {
			k++ // an event before the end of speech: a split turn (counted as extra)
		}
		if k >= len(stopped) || !stopped[k].At.Before(limit) {
			continue
		}
		ev := stopped[k]
		k++
		if !counted {
			continue
		}
		st.matched++
		st.eot = append(st.eot, ms(ev.At.Sub(t.end)))
		next := limit
		if j+1 < len(turns) {
			next = turns[j+1].end
		} else {
			next = t.end.Add(time.Hour)
		}
		// First reply packet after the event, if the gateway was silent then.
		i := sort.Search(len(audio), func(i int) bool { return !audio[i].At.Before(ev.At) })
		if i > 0 && ev.At.Sub(audio[i-1].At) < busyBefore {
			st.queued++
		} else if i < len(audio) && audio[i].At.Before(next) {
			st.firstAudio = append(st.firstAudio, ms(audio[i].At.Sub(t.end)))
		}
		for _, c := range cards {
			if !c.At.Before(t.end) && c.At.Before(next) {
				st.card = append(st.card, ms(c.At.Sub(t.end)))
				break
			}
		}
	}
	return st
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// lostPackets counts the gateway's RTP sequence numbers that never arrived
// (16-bit wrap-around unrolled; duplicates ignored).
func lostPackets(audio []fixtures.ReceivedPacket) int {
	if len(audio) == 0 {
		return 0
	}
	seen := make(map[int64]struct{}, len(audio))
	var ext, lo, hi int64
	prev := audio[0].Seq
	ext = int64(prev)
	lo, hi = ext, ext
	for _, p := range audio {
		ext += int64(int16(p.Seq - prev))
		prev = p.Seq
		seen[ext] = struct{}{}
		lo, hi = min(lo, ext), max(hi, ext)
	}
	return int(hi-lo+1) - len(seen)
}

// dist is the p50/p95/p99 summary of a latency.
type dist struct {
	N   int      `json:"n"`
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
}

func summarize(v []float64) dist {
	d := dist{N: len(v)}
	if len(v) == 0 {
		return d
	}
	s := slices.Clone(v)
	slices.Sort(s)
	q := func(p float64) *float64 {
		// nearest rank
		i := int(math.Ceil(p*float64(len(s)))) - 1
		x := math.Round(s[max(0, i)]*10) / 10
		return &x
	}
	d.P50, d.P95, d.P99 = q(0.50), q(0.95), q(0.99)
	m := math.Round(s[len(s)-1]*10) / 10
	d.Max = &m
	return d
}

// MarshalJSON keeps null for absent quantiles (no samples).
func (d dist) String() string {
	b, _ := json.Marshal(d)
	return string(b)
}
