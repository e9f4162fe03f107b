package rtc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

func TestPatchTrickleAndICERestart(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	etag := c.ETag()
	if etag == "" {
		t.Fatal("no ETag on 201")
	}
	cand := []byte("a=candidate:1 1 udp 2130706431 127.0.0.1 9 typ host\r\na=end-of-candidates\r\n")

	// Stale If-Match → 412 with the envelope.
	status, body, err := c.Trickle(ctx, cand, `"stale"`)
	if err != nil || status != http.StatusPreconditionFailed || !bytes.Contains(body, []byte(`"request_id"`)) {
		t.Fatalf("stale If-Match: %d %s %v", status, body, err)
	}
	// Trickle with the right ETag → 204.
	if status, body, err = c.Trickle(ctx, cand, etag); err != nil || status != http.StatusNoContent {
		t.Fatalf("trickle: %d %s %v", status, body, err)
	}
	// Not a fragment → 400.
	if status, _, err = c.Trickle(ctx, []byte("hello\r\n"), ""); err != nil || status != http.StatusBadRequest {
		t.Fatalf("bad fragment: %d %v", status, err)
	}

	// ICE restart: new credentials, new ETag, media and events keep flowing.
	if err := c.RestartICE(ctx); err != nil {
		t.Fatal(err)
	}
	if c.ETag() == etag {
		t.Fatal("ETag unchanged after ICE restart")
	}
	conn, _ := ts.h.Conn(idOf(c))
	if conn.Stats().ICERestarts != 1 {
		t.Fatalf("restarts: %+v", conn.Stats())
	}
	if err := c.SendEvent([]byte(`{"type":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "pong" }); err != nil {
		t.Fatal(err)
	}
	s := speechStream(t)
	s.Packets = s.Packets[:25]
	if err := c.Play(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := ts.session(idOf(c)).waitPackets(ctx, 25); err != nil {
		t.Fatalf("media after restart: %v", err)
	}
}

func TestAnswerCarriesICEServersAndPublicIP(t *testing.T) {
	cfg := rtc.LoopbackConfig()
	cfg.ICEServers = []rtc.ICEServer{{URLs: []string{"stun:stun.example.net:3478"}}, {URLs: []string{"turn:turn.example.net"}, Username: "u", Credential: "c"}}
	cfg.PublicIPs = []string{"127.0.0.2"} // loopback-range, so the rewritten candidate still passes the test filters
	ts := newTestServer(t, cfg, rtc.HandlerOptions{})
	offer := offerFromClient(t)
	resp, err := http.Post(ts.URL+"?device=phone", "application/sdp", strings.NewReader(offer))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer bytes.Buffer
	_, _ = answer.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d: %s", resp.StatusCode, answer.String())
	}
	links := resp.Header.Values("Link")
	if len(links) != 2 || !strings.Contains(links[0], "stun:stun.example.net:3478") || !strings.Contains(links[1], `credential="c"`) {
		t.Fatalf("Link headers: %q", links)
	}
	if !strings.HasPrefix(resp.Header.Get("Location"), rtc.DefaultBasePath+"/") || resp.Header.Get("ETag") == "" || resp.Header.Get("Content-Type") != "application/sdp" {
		t.Fatalf("headers: %v", resp.Header)
	}
	if !strings.Contains(answer.String(), " 127.0.0.2 ") || strings.Contains(answer.String(), " 127.0.0.1 ") {
		t.Fatalf("answer candidates not rewritten to the public IP:\n%s", answer.String())
	}
	if !strings.Contains(answer.String(), "opus/48000/2") || !strings.Contains(answer.String(), "minptime=10;useinbandfec=1") {
		t.Fatalf("answer does not declare Opus as required:\n%s", answer.String())
	}
}

func TestIdleTimeoutClosesSession(t *testing.T) {
	cfg := rtc.LoopbackConfig()
	cfg.IdleTimeout = 300 * time.Millisecond
	ts := newTestServer(t, cfg, rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	sess := ts.session(idOf(c))
	select {
	case <-sess.closed:
	case <-ctx.Done():
		t.Fatal("idle session never closed")
	}
	if !errors.Is(sess.closedErr, rtc.ErrIdle) {
		t.Fatalf("reason %v", sess.closedErr)
	}
}

func TestPeerVanishesICEFailed(t *testing.T) {
	cfg := rtc.LoopbackConfig()
	cfg.ICEDisconnectedTimeout = 300 * time.Millisecond
	cfg.ICEFailedTimeout = 600 * time.Millisecond
	cfg.ICEKeepalive = 100 * time.Millisecond
	cfg.ICEFailedGrace = 200 * time.Millisecond
	ts := newTestServer(t, cfg, rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// A raw pion peer that disappears without DTLS close or DELETE, as a
	// phone that lost its network does.
	pc, offer := vanishingPeer(t)
	resp, err := http.Post(ts.URL, "application/sdp", strings.NewReader(offer))
	if err != nil {
		t.Fatal(err)
	}
	var ans bytes.Buffer
	_, _ = ans.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("%d %s", resp.StatusCode, ans.String())
	}
	sess := <-ts.created
	conn, _ := ts.h.Conn(resp.Header.Get("Location")[len(rtc.DefaultBasePath)+1:])
	if err := pc.connect(ans.String()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-conn.Ready():
	case <-ctx.Done():
		t.Fatal("never connected")
	}
	pc.vanish()
	select {
	case <-sess.closed:
	case <-ctx.Done():
		t.Fatal("session not closed after the peer vanished")
	}
	if !errors.Is(sess.closedErr, rtc.ErrICEFailed) {
		t.Fatalf("reason %v, want ErrICEFailed", sess.closedErr)
	}
}

func TestConcurrentSessions(t *testing.T) {
	const n = 20
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stream := speechStream(t)
	stream.Packets = stream.Packets[:100] // 2 s each
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true, Device: fmt.Sprintf("dev%d", i)})
			if err != nil {
				errs <- err
				return
			}
			defer func() {
				cctx, cc := context.WithTimeout(context.Background(), 10*time.Second)
				defer cc()
				if err := c.Close(cctx); err != nil {
					errs <- err
				}
			}()
			if err := c.Play(ctx, stream); err != nil {
				errs <- err
				return
			}
			// Every packet must arrive; a 2-core CI box running this
			// under -race can starve the reader, so a kernel drop of up
			// to 2 % is tolerated here (TestLiveSessionEndToEnd is exact).
			sess := ts.session(idOf(c))
			want := len(stream.Packets) * 98 / 100
			wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
			defer wcancel()
			if err := sess.waitPackets(wctx, want); err != nil {
				errs <- fmt.Errorf("session %d: %w", i, err)
			}
			sess.mu.Lock()
			defer sess.mu.Unlock()
			if sess.decErrs != 0 {
				errs <- fmt.Errorf("session %d: %d decode errors", i, sess.decErrs)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ts.h.Len() != 0 {
		t.Fatalf("%d sessions left after all clients hung up", ts.h.Len())
	}
}

func TestHandlerCloseDrains(t *testing.T) {
	type ended struct {
		id     string
		reason error
		st     rtc.Stats
	}
	var endedMu sync.Mutex
	var ends []ended
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{OnClosed: func(id string, reason error, st rtc.Stats) {
		endedMu.Lock()
		ends = append(ends, ended{id, reason, st})
		endedMu.Unlock()
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	sess := ts.session(idOf(c))
	if err := c.SendEvent([]byte(`{"type":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "pong" }); err != nil {
		t.Fatal(err)
	}
	if err := ts.h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(sess.closedErr, rtc.ErrClosed) {
		t.Fatalf("reason %v", sess.closedErr)
	}
	endedMu.Lock()
	if len(ends) != 1 || ends[0].id != idOf(c) || !errors.Is(ends[0].reason, rtc.ErrClosed) || ends[0].st.EventsIn != 1 {
		t.Errorf("OnClosed: %+v", ends)
	}
	endedMu.Unlock()
	status, env := postOffer(t, ts.URL, "application/sdp", []byte(offerFromClient(t)))
	if status != http.StatusServiceUnavailable || env["error"]["type"] != "unavailable" {
		t.Fatalf("POST while draining: %d %v", status, env)
	}
}

func TestClientQuitsWithoutDelete(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	sess := ts.session(idOf(c))
	if err := c.Drop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sess.closed:
	case <-ctx.Done():
		t.Fatal("session not closed after the client quit")
	}
	if !errors.Is(sess.closedErr, rtc.ErrPeerClosed) {
		t.Fatalf("reason %v, want ErrPeerClosed", sess.closedErr)
	}
}

func TestAuthorizeGuardsEveryMethod(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{
		Authorize: func(w http.ResponseWriter, r *http.Request) (gateway.Principal, bool) {
			if r.Header.Get("Authorization") != "Bearer good" {
				gateway.WriteError(w, r, gateway.Errorf(gateway.AuthenticationError, "missing or bad token"))
				return gateway.Principal{}, false
			}
			return gateway.Principal{PartnerID: "partner-1"}, true
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true, Token: "bad"})
	var he *fixtures.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusUnauthorized || !strings.Contains(he.Body, "authentication_error") {
		t.Fatalf("bad token: %v", err)
	}
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true, Token: "good"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cc := context.WithTimeout(context.Background(), 5*time.Second)
		defer cc()
		if err := c.Close(cctx); err != nil {
			t.Error(err)
		}
	}()
	// PATCH and DELETE without the token are refused and leave the session up.
	for _, m := range []string{http.MethodPatch, http.MethodDelete} {
		req, _ := http.NewRequest(m, c.Location(), strings.NewReader("a=end-of-candidates\r\n"))
		req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without token: %d", m, resp.StatusCode)
		}
	}
	if ts.h.Len() != 1 {
		t.Fatalf("%d sessions, want 1", ts.h.Len())
	}
}

// TestSessionBelongsToItsPartner: another partner's PATCH or DELETE on a
// live session is 404, as for one that does not exist, and leaves it up;
// the owner's DELETE hangs up.
func TestSessionBelongsToItsPartner(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{
		Authorize: func(w http.ResponseWriter, r *http.Request) (gateway.Principal, bool) {
			partner, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			return gateway.Principal{PartnerID: partner}, true
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true, Token: "partner-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cc := context.WithTimeout(context.Background(), 5*time.Second)
		defer cc()
		_ = c.Close(cctx)
	}()
	do := func(method, partner string) int {
		req, _ := http.NewRequest(method, c.Location(), strings.NewReader("a=end-of-candidates\r\n"))
		req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
		req.Header.Set("Authorization", "Bearer "+partner)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env struct {
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		if resp.StatusCode == http.StatusNotFound {
			if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env.Error.Type != "not_found" {
				t.Errorf("%s 404 without a not_found envelope: %v %+v", method, err, env)
			}
		}
		return resp.StatusCode
	}
	for _, m := range []string{http.MethodPatch, http.MethodDelete} {
		if got := do(m, "partner-b"); got != http.StatusNotFound {
			t.Errorf("another partner's %s = %d, want 404", m, got)
		}
	}
	if ts.h.Len() != 1 {
		t.Fatalf("%d sessions after another partner's DELETE, want 1", ts.h.Len())
	}
	if got := do(http.MethodDelete, "partner-a"); got != http.StatusNoContent {
		t.Fatalf("owner's DELETE = %d", got)
	}
	if got := do(http.MethodDelete, "partner-a"); got != http.StatusNotFound {
		t.Fatalf("DELETE after hang-up = %d, want 404", got)
	}
}

// TestAdmissionLimit: at MaxSessions live sessions a new offer is refused
// with 503, Retry-After and the unavailable envelope, before any WebRTC
// work; the live session is untouched.
func TestAdmissionLimit(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{MaxSessions: 1, RetryAfterSeconds: 7})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: ts.URL, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cc := context.WithTimeout(context.Background(), 5*time.Second)
		defer cc()
		_ = c.Close(cctx)
	}()
	resp, err := http.Post(ts.URL, "application/sdp", strings.NewReader("v=0\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "7" || env.Error.Type != "unavailable" {
		t.Fatalf("over the limit: %d Retry-After %q %+v", resp.StatusCode, resp.Header.Get("Retry-After"), env)
	}
	if ts.h.Len() != 1 {
		t.Fatalf("%d sessions, want the live one", ts.h.Len())
	}
}

// endingSession ends its Conn from inside the data channel callback, which
// must not deadlock (Close there would).
type endingSession struct {
	*decodeSession
}

func (s endingSession) OnEvent(b []byte) {
	s.decodeSession.OnEvent(b)
	s.conn.End(rtc.ErrHangup)
}

func TestEndFromCallback(t *testing.T) {
	created := make(chan *decodeSession, 1)
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{
		NewSession: func(_ context.Context, _ rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
			d, err := newDecodeSession(c)
			created <- d
			return endingSession{d}, err
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	sess := <-created
	if err := c.SendEvent([]byte(`{"type":"response.cancel"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sess.closed:
	case <-ctx.Done():
		t.Fatal("End from a callback did not end the session")
	}
	if !errors.Is(sess.closedErr, rtc.ErrHangup) {
		t.Fatalf("reason %v", sess.closedErr)
	}
}

// The production shape: mux bound to all interfaces (udp_address ""), with
// the loopback-only filters keeping every candidate on 127.0.0.1.
func TestMuxOnAllInterfacesRespectsFilters(t *testing.T) {
	cfg := rtc.LoopbackConfig()
	cfg.UDPAddress = ""
	ts := newTestServer(t, cfg, rtc.HandlerOptions{})
	resp, err := http.Post(ts.URL, "application/sdp", strings.NewReader(offerFromClient(t)))
	if err != nil {
		t.Fatal(err)
	}
	var ans bytes.Buffer
	_, _ = ans.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("%d %s", resp.StatusCode, ans.String())
	}
	n := 0
	for _, l := range strings.Split(ans.String(), "\r\n") {
		if strings.HasPrefix(l, "a=candidate:") {
			n++
			if f := strings.Fields(l); len(f) < 6 || f[4] != "127.0.0.1" {
				t.Errorf("non-loopback candidate: %s", l)
			}
		}
	}
	if n == 0 {
		t.Fatal("answer has no candidates")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	if err := c.SendEvent([]byte(`{"type":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "pong" }); err != nil {
		t.Fatal(err)
	}
}
