package voice

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/event"
)

// TestSpeechStoppedAndReplyLatency: a turn with no words (a cough: the VAD
// takes it for speech, the recogniser hears nothing) ends with
// input.nothing_heard and the client's default end condition moves on; a
// spoken turn's input.speech_stopped says how long after the true end of
// speech it came, and its reply.audio_started splits the latency into
// segments that sum to the total, which /metrics exports the same way.
func TestSpeechStoppedAndReplyLatency(t *testing.T) {
	// A fresh router: pooled decoders that adapted to other tests' speech
	// may hear words in the cough.
	st := newStack(t, stackOptions{freshRouter: true})
	a := concat(t, fixtures.Silence(16000, time.Second), fixture(t, "cough.16k.wav"), fixtures.Silence(16000, 1500*time.Millisecond),
		fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, time.Second))
	res := runScenario(t, st, encode(t, a), fixtures.RepliesComplete, 90*time.Second)
	evs := res.Events
	t.Logf("events:\n%s", dumpEvents(evs))

	stops := ofType(evs, "input.speech_stopped")
	if len(stops) != 2 {
		t.Fatalf("%d turns, want the cough and the words", len(stops))
	}
	var stopped []event.SpeechStopped
	for _, e := range stops {
		stopped = append(stopped, strict[event.SpeechStopped](t, e))
	}
	silence := int64(testConfig().Turn.SilenceDurationMs)
	for _, s := range stopped {
		// The detector waits its silence hangover after the true end,
		// plus the VAD's release; never less, and well under a second more.
		if s.EndOfTurnMS < silence || s.EndOfTurnMS > silence+1000 {
			t.Errorf("turn %s: end_of_turn_ms %d, want [%d, %d]", s.TurnID, s.EndOfTurnMS, silence, silence+1000)
		}
	}
	cough, words := stopped[0].TurnID, stopped[1].TurnID
	heard := ofType(evs, "input.nothing_heard")
	if len(heard) != 1 {
		t.Fatalf("%d input.nothing_heard, want 1 (the cough)", len(heard))
	}
	if nh := strict[event.NothingHeard](t, heard[0]); nh.TurnID != cough || nh.Reason != event.NothingHeardNoWords {
		t.Errorf("nothing heard %+v, want turn %s no_words", nh, cough)
	}
	for _, e := range evs {
		if e.Type == "transcript.final" && decode(t, e).TurnID == cough {
			t.Errorf("the cough got a transcript: %s", e.Data)
		}
	}

	var lat *event.TurnLatency
	for _, e := range ofType(evs, "reply.audio_started") {
		ra := strict[event.ReplyAudio](t, e)
		switch ra.TurnID {
		case words:
			lat = ra.Latency
		case "notice":
			if ra.Latency != nil {
				t.Errorf("the notice's audio carries a latency: %s", e.Data)
			}
		}
	}
	if lat == nil {
		t.Fatalf("no latency on the reply.audio_started of turn %s", words)
	}
	segs := []int64{lat.EndOfTurnMS, lat.TranscriptionMS, lat.LLMTTFTMS, lat.TTSTTFBMS, lat.FirstPacketMS}
	sum := int64(0)
	for _, v := range segs {
		if v < 0 {
			t.Errorf("negative segment in %+v", *lat)
		}
		sum += v
	}
	if sum != lat.TotalMS {
		t.Errorf("segments %v sum to %d, total %d", segs, sum, lat.TotalMS)
	}
	if d := lat.EndOfTurnMS - stopped[1].EndOfTurnMS; d < -1 || d > 1 {
		t.Errorf("latency end_of_turn_ms %d, input.speech_stopped said %d", lat.EndOfTurnMS, stopped[1].EndOfTurnMS)
	}
	// The reply queues behind the 12 s notice: the wait is in tts_ttfb.
	if lat.TranscriptionMS == 0 || lat.TTSTTFBMS == 0 {
		t.Errorf("a stage of %+v counted 0", *lat)
	}

	// /metrics: one observation per segment, summing to the e2e latency.
	var segSum float64
	for _, name := range segmentNames {
		h := histogram(t, st.metrics.TurnSegment.WithLabelValues(name).(interface{ Write(*dto.Metric) error }))
		if h.GetSampleCount() != 1 {
			t.Errorf("turn_segment_seconds{segment=%q}: %d observations, want 1", name, h.GetSampleCount())
		}
		segSum += h.GetSampleSum()
	}
	e2e := histogram(t, st.metrics.E2ELatency)
	if e2e.GetSampleCount() != 1 || diff(segSum, e2e.GetSampleSum()) > 1e-6 {
		t.Errorf("segments sum %.6f s, e2e %.6f s (%d)", segSum, e2e.GetSampleSum(), e2e.GetSampleCount())
	}
	if d := e2e.GetSampleSum()*1000 - float64(lat.TotalMS); d < -1 || d > 1 {
		t.Errorf("e2e %.1f ms, event total %d ms", e2e.GetSampleSum()*1000, lat.TotalMS)
	}
}

// strict decodes e's payload into T with no unknown field.
func strict[T any](t testing.TB, e fixtures.Event) T {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(e.Data, &fields); err != nil {
		t.Fatalf("%s: %v", e.Data, err)
	}
	for _, k := range []string{"type", "seq", "session_id", "at"} {
		delete(fields, k)
	}
	b, _ := json.Marshal(fields)
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", e.Data, err)
	}
	return v
}

func histogram(t testing.TB, h interface{ Write(*dto.Metric) error }) *dto.Histogram {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram()
}

func diff(a, b float64) float64 {
	if a > b {
		return a - b
	}
	return b - a
}
