package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-audio/audio"
	"github.com/go-audio/wav"

	"github.com/veraneural/vera-gateway/fixtures"
)

func TestAnalyseMatchesTurns(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	turns := []spokenTurn{
		{start: at(0), end: at(2000)},
		{start: at(10000), end: at(12000)},
		{start: at(20000), end: at(22000)}, // never detected
	}
	ev := func(ms int, typ string) fixtures.Event { return fixtures.Event{At: at(ms), Type: typ} }
	events := []fixtures.Event{
		ev(-50, "notice"),
		ev(1000, fixtures.EventSpeechStopped), // mid-turn: a split, counted extra
		ev(2600, fixtures.EventSpeechStopped),
		ev(2700, "safety.card"),
		ev(12700, fixtures.EventSpeechStopped),
		ev(30000, fixtures.EventSpeechStopped), // long after: extra
	}
	audio := []fixtures.ReceivedPacket{
		{Seq: 10, At: at(4000)}, {Seq: 11, At: at(4020)}, {Seq: 13, At: at(4060)}, // reply to turn 1; seq 12 lost
		{Seq: 14, At: at(12650)}, // still talking when turn 2 ended: queued
		{Seq: 15, At: at(13000)},
	}
	st := analyse(turns, events, audio, 3*time.Second, 500*time.Millisecond, time.Time{})
	if st.expected != 3 || st.matched != 2 || st.detected != 4 {
		t.Fatalf("expected %d matched %d detected %d", st.expected, st.matched, st.detected)
	}
	if len(st.eot) != 2 || st.eot[0] != 600 || st.eot[1] != 700 {
		t.Fatalf("eot %v", st.eot)
	}
	if len(st.firstAudio) != 1 || st.firstAudio[0] != 2000 || st.queued != 1 {
		t.Fatalf("first audio %v queued %d", st.firstAudio, st.queued)
	}
	if len(st.card) != 1 || st.card[0] != 700 {
		t.Fatalf("card %v", st.card)
	}
	if st.lost != 1 || st.received != 5 {
		t.Fatalf("lost %d received %d", st.lost, st.received)
	}
	// From 5 s on: the first turn and its events are outside the window.
	st = analyse(turns, events, audio, 3*time.Second, 500*time.Millisecond, at(5000))
	if st.expected != 2 || st.matched != 1 || st.detected != 2 || len(st.eot) != 1 || st.eot[0] != 700 || len(st.card) != 0 {
		t.Fatalf("windowed: %+v", st)
	}
}

func TestLostPacketsWraps(t *testing.T) {
	var a []fixtures.ReceivedPacket
	for _, s := range []uint16{65533, 65534, 65535, 1, 2, 2, 0} { // 0 late, 2 duplicated
		a = append(a, fixtures.ReceivedPacket{Seq: s})
	}
	if n := lostPackets(a); n != 0 {
		t.Fatalf("lost %d, want 0", n)
	}
	a = append(a, fixtures.ReceivedPacket{Seq: 5})
	if n := lostPackets(a); n != 2 {
		t.Fatalf("lost %d, want 2", n)
	}
}

func TestSummarize(t *testing.T) {
	if d := summarize(nil); d.N != 0 || d.P50 != nil {
		t.Fatalf("%+v", d)
	}
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(100 - i)
	}
	d := summarize(v)
	if *d.P50 != 50 || *d.P95 != 95 || *d.P99 != 99 || *d.Max != 100 || d.N != 100 {
		t.Fatalf("%s", d)
	}
}

const exposition = `# HELP process_cpu_seconds_total x
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total %CPU%
process_resident_memory_bytes 1.2e+08
go_goroutines 42
vera_voice_sessions 3
vera_voice_frame_seconds_bucket{le="0.001"} %A%
vera_voice_frame_seconds_bucket{le="0.002"} %B%
vera_voice_frame_seconds_bucket{le="0.004"} %C%
vera_voice_frame_seconds_bucket{le="+Inf"} %C%
vera_voice_frame_seconds_sum 1
vera_voice_frame_seconds_count %C%
`

func expo(cpu, a, b, c string) string {
	return strings.NewReplacer("%CPU%", cpu, "%A%", a, "%B%", b, "%C%", c).Replace(exposition)
}

func TestParseMetricsAndQuantile(t *testing.T) {
	m0, err := parseMetrics(strings.NewReader(expo("10", "100", "100", "100")), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Delta: 900 under 1 ms, 90 in (1,2] ms, 10 in (2,4] ms.
	m1, err := parseMetrics(strings.NewReader(expo("12.5", "1000", "1090", "1100")), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if m1.cpu-m0.cpu != 2.5 || m1.rss != 1.2e8 || m1.goroutines != 42 || m1.sessions != 3 || m1.count != 1100 {
		t.Fatalf("%+v", m1)
	}
	p99, n := histQuantile(m0, m1, 0.99)
	if n != 1000 || math.Abs(p99-0.002) > 1e-9 {
		t.Fatalf("p99 %v n %v", p99, n)
	}
	p50, _ := histQuantile(m0, m1, 0.50)
	if math.Abs(p50-0.0005*1000/900) > 1e-9 {
		t.Fatalf("p50 %v", p50)
	}
	p995, _ := histQuantile(m0, m1, 0.995)
	if math.Abs(p995-0.003) > 1e-9 {
		t.Fatalf("p99.5 %v", p995)
	}
	if q, n := histQuantile(m1, m1, 0.99); !math.IsNaN(q) || n != 0 {
		t.Fatalf("empty delta: %v %v", q, n)
	}
	none, err := parseMetrics(strings.NewReader("garbage line\nfoo{bar} x\n"), time.Now())
	if err != nil || !math.IsNaN(none.cpu) {
		t.Fatalf("%+v %v", none, err)
	}
}

func TestParseCapacitySeries(t *testing.T) {
	const a = `vera_voice_session_setup_seconds_bucket{le="0.1"} 1
vera_voice_session_setup_seconds_bucket{le="0.5"} 1
vera_voice_session_setup_seconds_bucket{le="+Inf"} 1
vera_voice_playout_frames_total{source="cached"} 10
vera_voice_playout_frames_total{source="encoded"} 5
other_total 3
`
	const b = `vera_voice_session_setup_seconds_bucket{le="0.1"} 3
vera_voice_session_setup_seconds_bucket{le="0.5"} 11
vera_voice_session_setup_seconds_bucket{le="+Inf"} 12
vera_voice_playout_frames_total{source="cached"} 610
vera_voice_playout_frames_total{source="encoded"} 5
vera_voice_sessions_setup_failed_total 2
`
	m0, err := parseMetrics(strings.NewReader(a), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m1, err := parseMetrics(strings.NewReader(b), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m0.values["other_total"]; ok {
		t.Fatal("non-vera series kept")
	}
	if d := delta(m0, m1, playoutFrames+`{source="cached"}`); d == nil || *d != 600 {
		t.Fatalf("cached delta %v", d)
	}
	if d := delta(m0, m1, playoutFrames+`{source="encoded"}`); d == nil || *d != 0 {
		t.Fatalf("encoded delta %v", d)
	}
	if d := delta(m0, m1, setupFailed); d != nil {
		t.Fatalf("a series missing from the first read has no delta, got %v", *d)
	}
	// Delta: 2 under 100 ms, 8 in (100, 500] ms, 1 above.
	h := histMs(m0, m1, setupHist)
	if h.N != 11 || h.P50 == nil || math.Abs(*h.P50-(100+400*(5.5-2)/8)) > 0.01 || !h.Overflow || *h.P99 != 500 {
		t.Fatalf("setup %+v p50 %v p99 %v", h, *h.P50, *h.P99)
	}
	if h := histMs(m0, m1, listenWaitHist); h.N != 0 || h.P50 != nil {
		t.Fatalf("absent histogram: %+v", h)
	}
	if h := histMs(nil, m1, setupHist); h.N != 0 {
		t.Fatalf("no first read: %+v", h)
	}
}

// TestParseLabelledHistograms: a histogram with labels besides le keeps
// one set of buckets per label set, so segments do not mix.
func TestParseLabelledHistograms(t *testing.T) {
	read := func(llm, tts string) *scrape {
		t.Helper()
		s, err := parseMetrics(strings.NewReader(`vera_voice_turn_segment_seconds_bucket{segment="llm_ttft",le="0.1"} `+llm+`
vera_voice_turn_segment_seconds_bucket{segment="llm_ttft",le="+Inf"} `+llm+`
vera_voice_turn_segment_seconds_bucket{segment="tts_ttfb",le="0.1"} 0
vera_voice_turn_segment_seconds_bucket{segment="tts_ttfb",le="1"} `+tts+`
vera_voice_turn_segment_seconds_bucket{segment="tts_ttfb",le="+Inf"} `+tts+`
vera_voice_frame_overruns_total 7
`), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	m0, m1 := read("1", "2"), read("5", "4")
	llm := histMs(m0, m1, turnSegmentHist+`{segment="llm_ttft"}`)
	tts := histMs(m0, m1, turnSegmentHist+`{segment="tts_ttfb"}`)
	if llm.N != 4 || *llm.P99 > 100 || tts.N != 2 || *tts.P50 <= 100 {
		t.Fatalf("llm %+v tts %+v", llm, tts)
	}
	if d := delta(m0, m1, frameOverruns); d == nil || *d != 0 {
		t.Fatalf("overruns delta %v", d)
	}
	if got := withoutLabel(`{le="0.1"}`, "le"); got != "" {
		t.Fatalf("withoutLabel %q", got)
	}
}

func TestJudgeSoak(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	base := func() *soakReport {
		r := &soakReport{}
		r.GoroutinesPer.Start, r.GoroutinesPer.End = f(30), f(30.5)
		r.RSSBytes = soakPoints{Start: f(400 << 20), End: f(480 << 20)}
		r.Goroutines = soakPoints{Before: f(13), After: f(20)}
		return r
	}
	for _, c := range []struct {
		name string
		mod  func(*soakReport)
		flat bool
		want string
	}{
		{"flat", func(*soakReport) {}, true, "flat"},
		{"goroutines grow", func(r *soakReport) { r.GoroutinesPer.End = f(33) }, false, "goroutines per session grew"},
		{"rss grows", func(r *soakReport) { r.RSSBytes.End = f(600 << 20) }, false, "RSS grew 400 → 600 MiB"},
		{"leak after", func(r *soakReport) { r.Goroutines.After = f(40) }, false, "idle goroutines 13 before, 40 after"},
		{"not measured", func(r *soakReport) { r.RSSBytes.End = nil }, false, "RSS not measured"},
	} {
		r := base()
		c.mod(r)
		flat, verdict := judgeSoak(r)
		if flat != c.flat || !strings.Contains(verdict, c.want) {
			t.Errorf("%s: %v %q, want %v %q", c.name, flat, verdict, c.flat, c.want)
		}
	}
}

func writeWAV(t *testing.T, path string, samples []int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := wav.NewEncoder(f, 16000, 16, 1, 1)
	if err := enc.Write(&audio.IntBuffer{Format: &audio.Format{NumChannels: 1, SampleRate: 16000}, Data: samples, SourceBitDepth: 16}); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadClipsLabelsAndPadding(t *testing.T) {
	dir := t.TempDir()
	// 3 s: loud 0.5–1.0 s and 2.0–2.5 s.
	s := make([]int, 48000)
	for i := range s {
		if (i >= 8000 && i < 16000) || (i >= 32000 && i < 40000) {
			s[i] = 8000 * (1 - 2*(i%2))
		}
	}
	writeWAV(t, filepath.Join(dir, "a.16k.wav"), s)
	writeWAV(t, filepath.Join(dir, "b.16k.wav"), s)
	// a: labels with a 300 ms gap (one turn at 500 ms merge gap) and a turn.
	if err := os.WriteFile(filepath.Join(dir, "a.segments.json"), []byte(`[{"start_ms":500,"end_ms":800},{"start_ms":1100,"end_ms":1500},{"start_ms":2000,"end_ms":2500}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	clips, err := loadClips(dir, 4*time.Second, 2*time.Second, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(clips) != 2 || clips[0].name != "a.16k.wav" {
		t.Fatalf("%d clips", len(clips))
	}
	a, b := clips[0], clips[1]
	// 3 s clip + 2 s minimum gap > 4 s period.
	if a.frames != 250 || a.labels != "segments.json" {
		t.Fatalf("a: %d frames, labels %s", a.frames, a.labels)
	}
	if len(a.turns) != 2 || a.turns[0] != (span{25, 74}) || a.turns[1] != (span{100, 124}) {
		t.Fatalf("a turns %v", a.turns)
	}
	if a.frameTurn[24] != -1 || a.frameTurn[25] != 0 || a.frameTurn[74] != 0 || a.frameTurn[100] != 1 || a.frameTurn[125] != -1 {
		t.Fatal("frameTurn")
	}
	// b: no labels, energy: 0.5 s … 2.5 s as one turn.
	if b.labels != "energy" || len(b.turns) != 1 || b.turns[0] != (span{25, 124}) {
		t.Fatalf("b: %s %v", b.labels, b.turns)
	}
	// An empty label list: no speech expected.
	if err := os.WriteFile(filepath.Join(dir, "b.segments.json"), []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadClip(filepath.Join(dir, "b.16k.wav"), 10*time.Second, 2*time.Second, 0)
	if err != nil || len(c.turns) != 0 || c.frames != 500 {
		t.Fatalf("%v %+v", err, c)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.segments.json"), []byte(`[{"start_ms":500,"end_ms":90000}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadClip(filepath.Join(dir, "b.16k.wav"), 4*time.Second, 2*time.Second, 0); err == nil {
		t.Fatal("label past the end accepted")
	}
}

// TestTurnRecords: every speech_stopped is followed to its outcome; the
// reply's first packet is the talk spurt's (marker) after the turn, and the
// total counts from the event's arrival less its end_of_turn_ms.
func TestTurnRecords(t *testing.T) {
	t0 := time.Unix(2000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ev := func(ms int, raw string) fixtures.Event {
		var h struct{ Type string }
		_ = json.Unmarshal([]byte(raw), &h)
		return fixtures.Event{At: at(ms), Type: h.Type, Data: json.RawMessage(raw)}
	}
	events := []fixtures.Event{
		ev(0, `{"type":"reply.audio_started","turn_id":"notice"}`),
		ev(1000, `{"type":"input.speech_stopped","turn_id":"v1","audio_ms":500,"end_of_turn_ms":500}`),
		ev(1300, `{"type":"input.nothing_heard","turn_id":"v1","reason":"no_words"}`),
		ev(3000, `{"type":"input.speech_stopped","turn_id":"v2","audio_ms":2500,"end_of_turn_ms":520}`),
		ev(4005, `{"type":"reply.audio_started","turn_id":"v2","latency":{"end_of_turn_ms":520,"transcription_ms":200,"llm_ttft_ms":300,"tts_ttfb_ms":490,"first_packet_ms":10,"total_ms":1520}}`),
		ev(6000, `{"type":"input.speech_stopped","turn_id":"v3","audio_ms":5500,"end_of_turn_ms":500}`),
		ev(6500, `{"type":"input.nothing_heard","turn_id":"v3","reason":"not_transcribed"}`),
		ev(8000, `{"type":"input.speech_stopped","turn_id":"v4","audio_ms":7500,"end_of_turn_ms":500}`),
	}
	audio := []fixtures.ReceivedPacket{
		{Seq: 1, At: at(20), Marker: true}, {Seq: 2, At: at(3850)}, // the notice's tail, no marker
		{Seq: 3, At: at(4000), Marker: true}, {Seq: 4, At: at(4020)},
	}
	recs := turnRecords(events, audio)
	var got []string
	for _, r := range recs {
		got = append(got, r.id+":"+r.outcome)
	}
	if strings.Join(got, ",") != "v1:nothing_heard,v2:answered,v3:not_transcribed,v4:unanswered" {
		t.Fatalf("outcomes %v", got)
	}
	v2 := recs[1]
	if !v2.firstPacket.Equal(at(4000)) || v2.totalMs() != 1520 || v2.latency == nil {
		t.Fatalf("v2 first packet %v total %v latency %v", v2.firstPacket.Sub(t0), v2.totalMs(), v2.latency)
	}
	segs := v2.latency.segments(v2.totalMs())
	if segs["network"] != 0 || segs["tts_ttfb"] != 490 || len(segs) != len(segmentOrder) {
		t.Fatalf("segments %v", segs)
	}
	if turnsResolved(events) {
		t.Fatal("v4 has no outcome yet, but the turns count as resolved")
	}
	if !turnsResolved(events[:7]) || turnsResolved(append(events[:7:7], ev(7000, `{"type":"input.speech_started","turn_id":"v4"}`))) {
		t.Fatal("resolved: wrong with every turn ended, or with speech open")
	}
	// Without end_of_turn_ms (an older gateway) the event's arrival stands
	// in for the end of speech; without a marker the packet from 20 ms
	// before the event on.
	old := turnRecords([]fixtures.Event{
		ev(1000, `{"type":"input.speech_stopped","turn_id":"v1","audio_ms":500}`),
		ev(2000, `{"type":"reply.audio_started","turn_id":"v1"}`),
	}, []fixtures.ReceivedPacket{{Seq: 1, At: at(1500)}, {Seq: 2, At: at(1990)}})
	if old[0].totalMs() != 990 || old[0].latency != nil {
		t.Fatalf("older gateway: total %v", old[0].totalMs())
	}
	line := summarizeTurn(recs[0], t0)
	if line.Turn.TotalMs != nil || line.Turn.Outcome != outcomeNothingHeard || line.TMs != 1000 || line.Turn.SpeechEndMs != 500 {
		t.Fatalf("nothing-heard line %+v", line)
	}
}

// A source that follows another without a silent frame (a busy answer that
// stopped the disclosure) has no marker: its first packet is the one at the
// event, not the next talk spurt seconds later.
func TestReplyPacketWithoutSpurt(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	var audio []fixtures.ReceivedPacket
	for i := 0; i < 300; i++ { // 6 s of the disclosure, then the busy answer, back to back
		audio = append(audio, fixtures.ReceivedPacket{At: t0.Add(time.Duration(i) * 20 * time.Millisecond), Marker: i == 0})
	}
	later := t0.Add(12 * time.Second)
	audio = append(audio, fixtures.ReceivedPacket{At: later, Marker: true})
	stopped, started := t0.Add(3*time.Second), t0.Add(3*time.Second+30*time.Millisecond)
	if got, want := replyPacket(audio, stopped, started), t0.Add(3020*time.Millisecond); !got.Equal(want) {
		t.Fatalf("first packet at %v after the turn's end, want %v (the one at the event)", got.Sub(stopped), want.Sub(stopped))
	}
	// A spurt that starts at the event is still preferred.
	audio = append(audio[:150:150], fixtures.ReceivedPacket{At: started.Add(40 * time.Millisecond), Marker: true}, fixtures.ReceivedPacket{At: later, Marker: true})
	if got := replyPacket(audio, stopped, started); !got.Equal(started.Add(40 * time.Millisecond)) {
		t.Fatalf("first packet %v, want the spurt at the event", got.Sub(stopped))
	}
}
