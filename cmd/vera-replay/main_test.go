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
	var types []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var l struct {
			ReceivedAt string          `json:"received_at"`
			TMs        *float64        `json:"t_ms"`
			Event      json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.TMs == nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		if _, err := time.Parse(time.RFC3339Nano, l.ReceivedAt); err != nil {
			t.Fatalf("received_at: %v", err)
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
