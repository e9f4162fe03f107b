package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// Turn outcomes (loadReport.TurnOutcomes keys, turnLine.Outcome).
const (
	outcomeAnswered       = "answered"        // reply audio started
	outcomeBusy           = "busy"            // the spoken busy answer (notice kind busy): no recogniser was free
	outcomeNothingHeard   = "nothing_heard"   // input.nothing_heard, reason no_words
	outcomeNotTranscribed = "not_transcribed" // input.nothing_heard, reason not_transcribed
	outcomeInterrupted    = "interrupted"     // reply.interrupted before any reply audio
	outcomeUnanswered     = "unanswered"      // none of these before the session ended
)

// gatewayLatency is reply.audio_started's latency object (docs/events.md).
type gatewayLatency struct {
	EndOfTurnMS     float64 `json:"end_of_turn_ms"`
	TranscriptionMS float64 `json:"transcription_ms"`
	LLMTTFTMS       float64 `json:"llm_ttft_ms"`
	TTSTTFBMS       float64 `json:"tts_ttfb_ms"`
	FirstPacketMS   float64 `json:"first_packet_ms"`
	TotalMS         float64 `json:"total_ms"`
}

// segmentOrder names the segments of a turn's latency as the client
// reports them: the gateway's five, then what the client adds on top.
var segmentOrder = []string{"end_of_turn", "transcription", "llm_ttft", "tts_ttfb", "first_packet", "network"}

func (g *gatewayLatency) segments(total float64) map[string]float64 {
	return map[string]float64{"end_of_turn": g.EndOfTurnMS, "transcription": g.TranscriptionMS, "llm_ttft": g.LLMTTFTMS,
		"tts_ttfb": g.TTSTTFBMS, "first_packet": g.FirstPacketMS, "network": round3(total-g.TotalMS) + 0} // + 0: no "-0"
}

// turnRecord is what the client saw of one detected turn.
type turnRecord struct {
	id      string
	stopped time.Time // arrival of input.speech_stopped
	// eotMs is the event's end_of_turn_ms (-1: a gateway without it, so the
	// end of speech is taken as the event's arrival).
	eotMs       float64
	outcome     string
	started     time.Time // arrival of reply.audio_started
	latency     *gatewayLatency
	firstPacket time.Time // the reply's first packet (zero: none seen)
	busy        bool      // a busy notice answered the turn (its audio is the busy answer)
}

// speechEnd is the true end of speech the detector reported, on the
// client's clock: the event's arrival minus its end_of_turn_ms.
func (t turnRecord) speechEnd() time.Time {
	if t.eotMs < 0 {
		return t.stopped
	}
	return t.stopped.Add(-time.Duration(t.eotMs * float64(time.Millisecond)))
}

// totalMs is the reply's first packet from the true end of speech, or -1.
func (t turnRecord) totalMs() float64 {
	if t.firstPacket.IsZero() {
		return -1
	}
	return ms(t.firstPacket.Sub(t.speechEnd()))
}

type turnFields struct {
	TurnID      string          `json:"turn_id"`
	EndOfTurnMS *float64        `json:"end_of_turn_ms"`
	Reason      string          `json:"reason"`
	Kind        string          `json:"kind"`
	Latency     *gatewayLatency `json:"latency"`
}

// turnRecords follows every input.speech_stopped to its outcome. The
// reply's first packet is the first one that starts a talk spurt (RTP
// marker) after the turn ended, at most 200 ms before reply.audio_started
// arrived (the event and the packet race each other) and at most
// spurtAfter after it, or failing that the first packet from 20 ms before
// the event on: a source that follows another without a silent frame (a
// busy answer that stopped the disclosure) starts no new spurt, and the
// next marker belongs to a later source.
func turnRecords(events []fixtures.Event, audio []fixtures.ReceivedPacket) []turnRecord {
	var out []turnRecord
	idx := map[string]int{}
	for _, e := range events {
		var f turnFields
		_ = json.Unmarshal(e.Data, &f)
		if e.Type == fixtures.EventSpeechStopped {
			r := turnRecord{id: f.TurnID, stopped: e.At, eotMs: -1}
			if f.EndOfTurnMS != nil {
				r.eotMs = *f.EndOfTurnMS
			}
			idx[f.TurnID] = len(out)
			out = append(out, r)
			continue
		}
		i, ok := idx[f.TurnID]
		if !ok || out[i].outcome != "" {
			continue
		}
		r := &out[i]
		switch e.Type {
		case fixtures.EventNotice:
			r.busy = r.busy || f.Kind == "busy"
		case fixtures.EventAudioStarted:
			r.outcome, r.started, r.latency = outcomeAnswered, e.At, f.Latency
			if r.busy {
				r.outcome = outcomeBusy
			}
			r.firstPacket = replyPacket(audio, r.stopped, e.At)
		case fixtures.EventNothingHeard:
			r.outcome = outcomeNothingHeard
			if f.Reason == "not_transcribed" {
				r.outcome = outcomeNotTranscribed
			}
		case fixtures.EventInterrupted:
			r.outcome = outcomeInterrupted
		}
	}
	for i := range out {
		if out[i].outcome == "" {
			out[i].outcome = outcomeUnanswered
		}
	}
	return out
}

// spurtAfter bounds how long after reply.audio_started arrived its first
// packet may come: the event is emitted as the sender reads the source's
// first frame, one tick before the packet.
const spurtAfter = 500 * time.Millisecond

func replyPacket(audio []fixtures.ReceivedPacket, stopped, started time.Time) time.Time {
	from := started.Add(-200 * time.Millisecond)
	if from.Before(stopped) {
		from = stopped
	}
	until := started.Add(spurtAfter)
	var fallback time.Time
	for _, p := range audio {
		if p.At.Before(from) {
			continue
		}
		if p.At.After(until) && !fallback.IsZero() {
			break
		}
		if p.Marker && !p.At.After(until) {
			return p.At
		}
		if fallback.IsZero() && !p.At.Before(started.Add(-20*time.Millisecond)) {
			fallback = p.At
		}
	}
	return fallback
}

// turnsResolved: every detected turn has an outcome and no speech is open
// (input.speech_started without its input.speech_stopped).
func turnsResolved(events []fixtures.Event) bool {
	open := map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case fixtures.EventSpeechStarted:
			var f turnFields
			_ = json.Unmarshal(e.Data, &f)
			open[f.TurnID] = true
		case fixtures.EventSpeechStopped:
			var f turnFields
			_ = json.Unmarshal(e.Data, &f)
			delete(open, f.TurnID)
		}
	}
	if len(open) > 0 {
		return false
	}
	for _, r := range turnRecords(events, nil) {
		if r.outcome == outcomeUnanswered {
			return false
		}
	}
	return true
}

// turnLine is the -json line vera-replay prints per turn after the
// session's events: {"received_at","t_ms","turn":{…}} (event lines carry
// "event" instead). received_at/t_ms are the reply's first packet, or the
// turn's end when it got none.
type turnLine struct {
	ReceivedAt string      `json:"received_at"`
	TMs        float64     `json:"t_ms"`
	Turn       turnSummary `json:"turn"`
}

// turnSummary is one turn as the client measured it. TotalMs is the reply's
// first packet after the true end of speech (input.speech_stopped's arrival
// − its end_of_turn_ms); SegmentsMs splits it: the gateway's five
// segments (reply.audio_started's latency) and network, the rest (what the
// packet's way to the client added against the event's), so they sum to
// TotalMs.
type turnSummary struct {
	TurnID      string             `json:"turn_id"`
	Outcome     string             `json:"outcome"`
	SpeechEndMs float64            `json:"speech_end_t_ms"` // the true end of speech, t_ms clock
	EndOfTurnMs *float64           `json:"end_of_turn_ms"`  // as the gateway reported it
	TotalMs     *float64           `json:"total_ms"`
	SegmentsMs  map[string]float64 `json:"segments_ms,omitempty"`
}

func summarizeTurn(r turnRecord, t0 time.Time) turnLine {
	s := turnSummary{TurnID: r.id, Outcome: r.outcome, SpeechEndMs: ms(r.speechEnd().Sub(t0))}
	if r.eotMs >= 0 {
		v := r.eotMs
		s.EndOfTurnMs = &v
	}
	at := r.stopped
	if tot := r.totalMs(); tot >= 0 {
		v := round3(tot)
		s.TotalMs, at = &v, r.firstPacket
		if r.latency != nil {
			s.SegmentsMs = r.latency.segments(v)
		}
	}
	return turnLine{ReceivedAt: at.UTC().Format(time.RFC3339Nano), TMs: ms(at.Sub(t0)), Turn: s}
}

// outcomeCounts is "2 answered, 1 nothing heard" for the summary line.
func outcomeCounts(recs []turnRecord) string {
	n := map[string]int{}
	for _, r := range recs {
		n[r.outcome]++
	}
	return outcomeLine(n)
}

// printTurns prints one line per turn after the session's events: a turn
// line with -json, else a readable one.
func printTurns(w io.Writer, jsonOut bool, recs []turnRecord, t0 time.Time) {
	enc := json.NewEncoder(w)
	for _, r := range recs {
		l := summarizeTurn(r, t0)
		if jsonOut {
			_ = enc.Encode(l)
			continue
		}
		s := l.Turn
		text := strings.ReplaceAll(s.Outcome, "_", " ")
		if s.TotalMs != nil {
			text += fmt.Sprintf(": first reply packet %.0f ms after the end of speech", *s.TotalMs)
			if s.SegmentsMs != nil {
				var parts []string
				for _, k := range segmentOrder {
					parts = append(parts, fmt.Sprintf("%s %.0f", strings.ReplaceAll(k, "_", " "), s.SegmentsMs[k]))
				}
				text += " = " + strings.Join(parts, " + ")
			}
		}
		fmt.Fprintf(w, "%9.1f ms  %-24s %s\n", l.TMs, "turn "+s.TurnID, text)
	}
}
