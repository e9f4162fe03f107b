package rtc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hraban/opus"
	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// speechStream is the committed espeak-ng fixture as a 20 ms Opus stream.
func speechStream(t testing.TB) *fixtures.Stream {
	t.Helper()
	a, err := fixtures.LoadWAV(filepath.Join(fixtures.RepoRoot(t), "testdata", "rtc", "hello16k.wav"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := fixtures.Encode(a, fixtures.EncodeOptions{FEC: true, FirstSeq: 65000, FirstTS: 123456})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// decodeSession is a test Session: it decodes every packet at 16 kHz (PLC
// for sequence gaps), echoes events back and records how it ended.
type decodeSession struct {
	conn *rtc.Conn
	dec  *opus.Decoder
	pcm  []int16

	mu        sync.Mutex
	seqs      map[uint16]int
	packets   int
	samples   int
	decErrs   int
	events    [][]byte
	closedErr error
	pcmOut    []int16 // every decoded sample in arrival order
	closed    chan struct{}
	got       chan struct{} // kicked on every packet
}

func newDecodeSession(c *rtc.Conn) (*decodeSession, error) {
	dec, err := opus.NewDecoder(16000, 1)
	if err != nil {
		return nil, err
	}
	return &decodeSession{conn: c, dec: dec, pcm: make([]int16, 320), seqs: map[uint16]int{}, closed: make(chan struct{}), got: make(chan struct{}, 1)}, nil
}

func (s *decodeSession) OnRTP(p rtc.Packet) {
	s.mu.Lock()
	s.packets++
	s.seqs[p.SequenceNumber]++
	n, err := s.dec.Decode(p.Payload, s.pcm[:320:320])
	if err != nil {
		s.decErrs++
	}
	s.samples += n
	s.pcmOut = append(s.pcmOut, s.pcm[:n]...)
	s.mu.Unlock()
	select {
	case s.got <- struct{}{}:
	default:
	}
}

func (s *decodeSession) OnEvent(data []byte) {
	s.mu.Lock()
	s.events = append(s.events, append([]byte(nil), data...))
	s.mu.Unlock()
	var ev struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &ev) == nil && ev.Type == "ping" {
		_ = s.conn.SendEvent([]byte(`{"type":"pong","seq":1}`))
	}
}

func (s *decodeSession) Closed(reason error) {
	s.mu.Lock()
	s.closedErr = reason
	s.mu.Unlock()
	close(s.closed)
}

// waitPackets waits until the session has n distinct sequence numbers.
func (s *decodeSession) waitPackets(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got := len(s.seqs)
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-s.got:
		case <-ctx.Done():
			return fmt.Errorf("got %d of %d packets: %w", got, n, ctx.Err())
		}
	}
}

type testServer struct {
	URL     string
	eng     *rtc.Engine
	h       *rtc.Handler
	srv     *httptest.Server
	mu      sync.Mutex
	byID    map[string]*decodeSession
	created chan *decodeSession
}

func (ts *testServer) session(id string) *decodeSession {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.byID[id]
}

func newTestServer(t testing.TB, cfg rtc.Config, opts rtc.HandlerOptions, engOpts ...rtc.EngineOption) *testServer {
	t.Helper()
	eng, err := rtc.NewEngine(cfg, nil, engOpts...)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{eng: eng, byID: map[string]*decodeSession{}, created: make(chan *decodeSession, 256)}
	opts.Engine = eng
	if opts.NewSession == nil {
		opts.NewSession = func(_ context.Context, info rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
			s, err := newDecodeSession(c)
			if err != nil {
				return nil, err
			}
			ts.mu.Lock()
			ts.byID[info.ID] = s
			ts.mu.Unlock()
			ts.created <- s
			return s, nil
		}
	}
	h, err := rtc.NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts.h = h
	ts.srv = httptest.NewServer(h)
	ts.URL = ts.srv.URL + rtc.DefaultBasePath
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("handler close: %v", err)
		}
		ts.srv.Close()
		if err := eng.Close(); err != nil {
			t.Errorf("engine close: %v", err)
		}
	})
	return ts
}

func newHTTPServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

func dial(t testing.TB, ctx context.Context, url string) *fixtures.Client {
	t.Helper()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: url, LoopbackOnly: true, Device: "meta-rayban-display"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var he *fixtures.HTTPError
		if err := c.Close(cctx); err != nil && !(errors.As(err, &he) && he.Status == http.StatusNotFound) {
			t.Errorf("client close: %v", err)
		}
	})
	return c
}

func idOf(c *fixtures.Client) string { return filepath.Base(c.Location()) }
