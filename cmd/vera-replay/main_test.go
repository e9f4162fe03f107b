package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// turnSession is a scripted stand-in for the conversation layer: after every
// 50 packets (1 s of audio) it reports a turn, then plays a 10-frame reply
// framed by reply.audio_started / reply.audio_stopped / reply.done.
type turnSession struct {
	c    *rtc.Conn
	mu   sync.Mutex
	n    int
	seq  int
	turn int
}

func (s *turnSession) emit(typ string) {
	s.seq++
	b, _ := json.Marshal(map[string]any{"type": typ, "seq": s.seq, "session_id": s.c.ID(), "at": time.Now().UnixMilli(), "turn_id": fmt.Sprintf("v%d", s.turn)})
	_ = s.c.SendEvent(b)
}

type silenceFrames struct{ left int }

func (f *silenceFrames) ReadFrame(dst []int16) (int, error) {
	if f.left == 0 {
		return 0, io.EOF
	}
	f.left--
	return len(dst), nil
}

func (s *turnSession) OnRTP(rtc.Packet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.n%50 != 0 || s.turn >= 2 {
		return
	}
	s.turn++
	s.emit("input.speech_stopped")
	s.emit("reply.audio_started")
	s.c.Sender().PlayPCM(&silenceFrames{left: 10}, func(rtc.Playout) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.emit("reply.audio_stopped")
		s.emit("reply.done")
	})
}
func (s *turnSession) OnEvent(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(b, []byte(`"hello"`)) {
		s.emit("hello.ack")
	}
}
func (s *turnSession) Closed(error) {}

func TestReplayPrintsEventsAndExitsAfterLastReply(t *testing.T) {
	eng, err := rtc.NewEngine(rtc.LoopbackConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := rtc.NewHandler(rtc.HandlerOptions{Engine: eng, NewSession: func(_ context.Context, _ rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
		s := &turnSession{c: c}
		s.emit("session.created")
		return s, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		srv.Close()
		_ = eng.Close()
	}()
	in := filepath.Join("..", "..", "testdata", "rtc", "hello16k.wav")
	if _, err := os.Stat(in); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"-url", srv.URL + rtc.DefaultBasePath, "-in", in, "-device", "phone", "-json", "-loopback", "-timeout", "30s", "-settle", "200ms"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var types, outcomes []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var l struct {
			ReceivedAt string          `json:"received_at"`
			TMs        *float64        `json:"t_ms"`
			Event      json.RawMessage `json:"event"`
			Turn       *turnSummary    `json:"turn"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.TMs == nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		if _, err := time.Parse(time.RFC3339Nano, l.ReceivedAt); err != nil {
			t.Fatalf("received_at: %v", err)
		}
		if l.Turn != nil { // the per-turn lines follow the events
			outcomes = append(outcomes, l.Turn.Outcome)
			continue
		}
		if len(outcomes) > 0 {
			t.Fatalf("event line %q after a turn line", sc.Text())
		}
		var ev struct{ Type string }
		_ = json.Unmarshal(l.Event, &ev)
		types = append(types, ev.Type)
	}
	got := strings.Join(types, ",")
	want := "session.created,hello.ack,input.speech_stopped,reply.audio_started,reply.audio_stopped,reply.done,input.speech_stopped,reply.audio_started,reply.audio_stopped,reply.done"
	if got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	// This scripted gateway sends no latency, and its audio starts with the
	// event: both turns answered, measured from the events' arrival.
	if strings.Join(outcomes, ",") != "answered,answered" {
		t.Errorf("turn outcomes %v", outcomes)
	}
	if !strings.Contains(errOut.String(), "2 turns") || !strings.Contains(errOut.String(), "20 audio packets received") {
		t.Fatalf("summary: %s", errOut.String())
	}
}

func TestReplayFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"-in", "x.wav", "-timeout", "0s"}, {"-in", "x.wav", "-hello", "{"}, {"-in", "x.wav", "-loss", "101"}, {"-in", "x.wav", "-burst", "0.5"}, {"-in", "x.wav", "-reorder", "-1"}} {
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != 64 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"-in", "/nonexistent.wav"}, &o, &e); code != 1 {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestReplayHelp: -h describes the tool and its modes and exits 0.
func TestReplayHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}, {"-in", "x.wav", "-h"}} {
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != 0 {
			t.Errorf("%v: exit %d", args, code)
		}
		for _, want := range []string{"vera-replay drives live voice sessions", "-sessions N", "-soak", "-serve-fakes", "base URL", "-url string"} {
			if !strings.Contains(e.String(), want) {
				t.Errorf("%v: help lacks %q:\n%s", args, want, e.String())
			}
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"-in", "x.wav", "stray"}, &o, &e); code != 64 || !strings.Contains(e.String(), `unexpected argument "stray"`) {
		t.Errorf("stray argument: exit %d %s", code, e.String())
	}
}

// TestReplayURL: -url takes the base URL or the collection URL, and a
// loopback host turns loopback ICE on unless -loopback says otherwise.
func TestReplayURL(t *testing.T) {
	for _, c := range []struct {
		in, want string
		loopback bool
	}{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/voice/sessions", true},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/voice/sessions", true},
		{"http://localhost:8080/v1/voice/sessions/", "http://localhost:8080/v1/voice/sessions", true},
		{"http://[::1]:18868/v1/voice/sessions", "http://[::1]:18868/v1/voice/sessions", true},
		{"https://gw.example.com", "https://gw.example.com/v1/voice/sessions", false},
		{"https://gw.example.com/vera/", "https://gw.example.com/vera/v1/voice/sessions", false},
		{"http://192.0.2.7:8080/v1/voice/sessions?device=phone", "http://192.0.2.7:8080/v1/voice/sessions?device=phone", false},
	} {
		got, loop, err := sessionsURL(c.in)
		if err != nil || got != c.want || loop != c.loopback {
			t.Errorf("%s: %q loopback %v (%v), want %q %v", c.in, got, loop, err, c.want, c.loopback)
		}
	}
	for _, bad := range []string{"127.0.0.1:8080", "ftp://127.0.0.1/", "http://", "://x"} {
		var o, e bytes.Buffer
		if code := run([]string{"-url", bad, "-in", "x.wav"}, &o, &e); code != 64 || !strings.Contains(e.String(), "-url") {
			t.Errorf("-url %q: exit %d %s", bad, code, e.String())
		}
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"-url", "http://127.0.0.1:8080"}, true},
		{[]string{"-url", "http://127.0.0.1:8080", "-loopback=false"}, false},
		{[]string{"-url", "https://gw.example.com"}, false},
		{[]string{"-url", "https://gw.example.com", "-loopback"}, true},
		{nil, true}, // the default URL is loopback
	} {
		o, err := parse(append(c.args, "-in", "x.wav"), io.Discard)
		if err != nil || o.loopback != c.want {
			t.Errorf("%v: loopback %v (%v), want %v", c.args, o.loopback, err, c.want)
		}
	}
}

// TestReplayReportsNothingHeard: against the real voice stack, a turn
// with no words (a cough) is reported as nothing heard and the tool moves
// on to the next, answered turn and exits 0 long before its timeout; the
// event lines keep their shape and each turn gets a line whose segments
// sum to its latency from the true end of speech.
func TestReplayReportsNothingHeard(t *testing.T) {
	url := newGateway(t)
	dir := t.TempDir()
	clip := filepath.Join(dir, "cough-then-words.wav")
	writeClip(t, clip, "cough.16k.wav", "gohome.16k.wav")
	var out, errOut bytes.Buffer
	code := run([]string{"-url", strings.TrimSuffix(url, rtc.DefaultBasePath), "-in", clip, "-json", "-timeout", "100s"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d (2: timed out waiting for a reply): %s\n%s", code, errOut.String(), out.String())
	}
	var turns []turnSummary
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var l map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		if l["received_at"] == nil || l["t_ms"] == nil || (l["event"] == nil) == (l["turn"] == nil) || len(l) != 3 {
			t.Fatalf("line shape %q", sc.Text())
		}
		if l["turn"] != nil {
			var s turnSummary
			if err := json.Unmarshal(l["turn"], &s); err != nil {
				t.Fatal(err)
			}
			turns = append(turns, s)
		}
	}
	if len(turns) != 2 || turns[0].Outcome != outcomeNothingHeard || turns[1].Outcome != outcomeAnswered {
		t.Fatalf("turns %+v, want nothing heard then answered\n%s", turns, out.String())
	}
	s := turns[1]
	if s.TotalMs == nil || s.EndOfTurnMs == nil || len(s.SegmentsMs) != len(segmentOrder) {
		t.Fatalf("answered turn %+v", s)
	}
	sum := 0.0
	for _, k := range segmentOrder {
		sum += s.SegmentsMs[k]
	}
	if d := sum - *s.TotalMs; d < -0.01 || d > 0.01 || s.SegmentsMs["end_of_turn"] != *s.EndOfTurnMs || *s.TotalMs <= *s.EndOfTurnMs {
		t.Errorf("segments %v sum to %.3f, total %.3f, end of turn %.0f", s.SegmentsMs, sum, *s.TotalMs, *s.EndOfTurnMs)
	}
	if !strings.Contains(errOut.String(), "2 turns (1 answered, 1 nothing heard)") {
		t.Errorf("summary: %s", errOut.String())
	}
}

// writeClip writes testdata/voice clips one after another, each after a
// second of silence, with a second of silence at the end.
func writeClip(t *testing.T, path string, names ...string) {
	t.Helper()
	var parts []*fixtures.Audio
	for _, n := range names {
		a, err := fixtures.LoadWAV(filepath.Join("..", "..", "testdata", "voice", n))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, fixtures.Silence(16000, time.Second), a)
	}
	parts = append(parts, fixtures.Silence(16000, time.Second))
	a, err := fixtures.Concat(parts...)
	if err != nil {
		t.Fatal(err)
	}
	samples := make([]int, len(a.Samples))
	for i, v := range a.Samples {
		samples[i] = int(v)
	}
	writeWAV(t, path, samples)
}
