package rtc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// opusStream replays a fixture stream's payloads as an rtc.OpusSource.
type opusStream struct {
	pkts []fixtures.Packet
	i    int
}

func (o *opusStream) NextOpus() ([]byte, error) {
	if o.i >= len(o.pkts) {
		return nil, io.EOF
	}
	o.i++
	return o.pkts[o.i-1].Payload, nil
}

func TestLiveSessionEndToEnd(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	sess := ts.session(idOf(c))
	if sess == nil {
		t.Fatal("no server session for the Location")
	}
	conn, ok := ts.h.Conn(idOf(c))
	if !ok || conn.Device() != "meta-rayban-display" {
		t.Fatalf("server conn missing or wrong device: %v", ok)
	}
	select {
	case <-conn.Ready():
	case <-ctx.Done():
		t.Fatal("server conn never ready")
	}

	// Inbound: every packet of the fixture arrives and decodes.
	stream := speechStream(t)
	if err := c.Play(ctx, stream); err != nil {
		t.Fatal(err)
	}
	if err := sess.waitPackets(ctx, len(stream.Packets)); err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	for _, p := range stream.Packets {
		if sess.seqs[p.Seq] != 1 {
			t.Errorf("seq %d received %d times", p.Seq, sess.seqs[p.Seq])
		}
	}
	if sess.decErrs != 0 || sess.samples != 320*len(stream.Packets) {
		t.Errorf("decode: %d errors, %d samples, want %d", sess.decErrs, sess.samples, 320*len(stream.Packets))
	}
	sess.mu.Unlock()
	if st := conn.Stats(); st.GapsIn != 0 || st.PacketsIn != int64(len(stream.Packets)) {
		t.Errorf("stats: %+v", st)
	}

	// Data channel round trip.
	if err := c.SendEvent([]byte(`{"type":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "pong" }); err != nil {
		t.Fatal(err)
	}

	// Outbound: the gateway plays Opus to the client, paced in real time.
	played := make(chan rtc.Playout, 1)
	out := &opusStream{pkts: stream.Packets[:50]}
	start := time.Now()
	conn.Sender().PlayOpus(out, func(p rtc.Playout) { played <- p })
	var p rtc.Playout
	select {
	case p = <-played:
	case <-ctx.Done():
		t.Fatal("playout never finished")
	}
	if p.Frames != 50 || p.Stopped || p.Played() != time.Second {
		t.Fatalf("playout: %+v", p)
	}
	// 50 frames cannot leave faster than 49 ticks: the sender is paced.
	if el := time.Since(start); el < 49*rtc.FrameDuration {
		t.Fatalf("50 frames sent in %s: not paced", el)
	}
	if err := c.WaitReceived(ctx, 50); err != nil {
		t.Fatal(err)
	}
	got := c.Received()
	for i := 1; i < len(got); i++ {
		// Contiguous sequence numbers; the RTP clock moves in whole frames
		// (more than one only if the process stalled past the catch-up
		// bound, which keeps the clock on wall time).
		dts := got[i].Timestamp - got[i-1].Timestamp
		if got[i].Seq != got[i-1].Seq+1 || dts < 960 || dts%960 != 0 {
			t.Fatalf("client packet %d: seq %d ts %d after seq %d ts %d", i, got[i].Seq, got[i].Timestamp, got[i-1].Seq, got[i-1].Timestamp)
		}
		if !bytes.Equal(got[i].Payload, stream.Packets[i].Payload) {
			t.Fatalf("client packet %d payload differs", i)
		}
	}

	// DELETE hangs up: the session ends with ErrHangup.
	if err := c.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sess.closed:
	case <-ctx.Done():
		t.Fatal("session not closed after DELETE")
	}
	if !errors.Is(sess.closedErr, rtc.ErrHangup) || !errors.Is(conn.Err(), rtc.ErrHangup) {
		t.Fatalf("close reason %v / %v", sess.closedErr, conn.Err())
	}
	if ts.h.Len() != 0 {
		t.Fatalf("%d sessions still registered", ts.h.Len())
	}
}

func TestEventsQueuedBeforeOpen(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{
		NewSession: func(_ context.Context, info rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
			// The conversation layer sends session.created and the AI notice
			// before the client's data channel is open: they must arrive, in order.
			for i, typ := range []string{"session.created", "notice"} {
				b, _ := json.Marshal(map[string]any{"type": typ, "seq": i + 1, "session_id": info.ID})
				if err := c.SendEvent(b); err != nil {
					return nil, err
				}
			}
			return newDecodeSession(c)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "notice" }); err != nil {
		t.Fatal(err)
	}
	evs := c.Events()
	if len(evs) != 2 || evs[0].Type != "session.created" || evs[0].Seq != 1 || evs[1].Seq != 2 {
		t.Fatalf("events: %+v", evs)
	}
}

func postOffer(t *testing.T, url, ctype string, body []byte) (int, map[string]map[string]string) {
	t.Helper()
	resp, err := http.Post(url, ctype, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env map[string]map[string]string
	if resp.StatusCode >= 400 {
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			t.Fatalf("status %d without a JSON envelope: %v", resp.StatusCode, err)
		}
	}
	return resp.StatusCode, env
}

func TestBadOffersGetEnvelope(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{})
	good := []byte(offerFromClient(t))
	cases := []struct {
		name   string
		ctype  string
		body   []byte
		status int
		want   string
	}{
		{"wrong content type", "application/json", good, 415, "application/sdp"},
		{"too large", "application/sdp", bytes.Repeat([]byte("a"), rtc.LoopbackConfig().MaxOfferBytes+1), 413, "offer too large"},
		{"garbage", "application/sdp", []byte("nonsense"), 400, "malformed SDP"},
		{"no audio", "application/sdp", []byte(cutSection(string(good), "m=audio")), 400, "no audio m-line"},
		{"no data channel", "application/sdp", []byte(cutSection(string(good), "m=application")), 400, "no data channel"},
		{"no opus", "application/sdp", []byte(strings.ReplaceAll(string(good), "opus/48000/2", "G722/8000")), 400, "no Opus"},
	}
	for _, tc := range cases {
		status, env := postOffer(t, ts.URL, tc.ctype, tc.body)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, status, tc.status)
			continue
		}
		e := env["error"]
		if e["type"] != "invalid_request" || e["request_id"] == "" || !strings.Contains(e["message"], tc.want) {
			t.Errorf("%s: envelope %v does not say %q", tc.name, e, tc.want)
		}
	}
	if ts.h.Len() != 0 {
		t.Errorf("bad offers left %d sessions", ts.h.Len())
	}
	// Unknown session.
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/nope", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("DELETE unknown: %d", resp.StatusCode)
	}
}

// offerFromClient gets a real client offer without completing signaling: it
// is captured by a server whose session factory rejects it.
func offerFromClient(t *testing.T) string {
	t.Helper()
	got := make(chan string, 1)
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{
		NewSession: func(_ context.Context, info rtc.SessionInfo, _ *rtc.Conn) (rtc.Session, error) {
			got <- info.Offer.SDP
			return nil, &gateway.Error{Type: gateway.RateLimited, Message: "test"}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true})
	var he *fixtures.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusTooManyRequests || !strings.Contains(he.Body, "rate_limited") {
		t.Fatalf("a *gateway.Error refusal was not mapped: %v", err)
	}
	return <-got
}

// cutSection removes the m-section starting with prefix.
func cutSection(sdp, prefix string) string {
	i := strings.Index(sdp, prefix)
	if i < 0 {
		return sdp
	}
	j := strings.Index(sdp[i+2:], "\r\nm=")
	if j < 0 {
		return sdp[:i]
	}
	return sdp[:i] + sdp[i+2+j+2:]
}

func TestPumpEventsInOrder(t *testing.T) {
	const n = 500
	src := make(chan []byte, n)
	for i := 1; i <= n; i++ {
		src <- []byte(fmt.Sprintf(`{"type":"caption","seq":%d,"text":"%s"}`, i, strings.Repeat("x", 200)))
	}
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{
		NewSession: func(_ context.Context, _ rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
			c.PumpEvents(func(ctx context.Context) ([]byte, error) {
				select {
				case b := <-src:
					return b, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})
			return newDecodeSession(c)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Seq == n }); err != nil {
		t.Fatal(err)
	}
	for i, e := range c.Events() {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

func TestPumpEventsSourceFailureEndsConn(t *testing.T) {
	boom := errors.New("slow consumer")
	created := make(chan *decodeSession, 1)
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{
		NewSession: func(_ context.Context, _ rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
			c.PumpEvents(func(context.Context) ([]byte, error) { return nil, boom })
			s, err := newDecodeSession(c)
			created <- s
			return s, err
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := fixtures.Start(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cc := context.WithTimeout(context.Background(), 5*time.Second)
		defer cc()
		_ = c.Close(cctx)
	}()
	sess := <-created
	select {
	case <-sess.closed:
	case <-ctx.Done():
		t.Fatal("conn not closed after its event source failed")
	}
	if !errors.Is(sess.closedErr, boom) {
		t.Fatalf("reason %v", sess.closedErr)
	}
}
