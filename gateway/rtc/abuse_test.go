package rtc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// Attacks on the voice signaling handler, each with the refusal it must
// get. THREATS.md lists them with their mitigations.

// principalAuth reads "Bearer partner/via/enduser/device" as the principal
// the gateway's edge would have authenticated (via "key" or "token").
func principalAuth(w http.ResponseWriter, r *http.Request) (gateway.Principal, bool) {
	cred, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f := strings.Split(cred, "/")
	for len(f) < 4 {
		f = append(f, "")
	}
	return gateway.Principal{PartnerID: f[0], Via: f[1], EndUserID: f[2], Device: f[3]}, true
}

func dialAs(t *testing.T, ctx context.Context, url, cred, device string) (*fixtures.Client, error) {
	t.Helper()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: url, LoopbackOnly: true, Token: cred, Device: device})
	if err == nil {
		t.Cleanup(func() {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = c.Close(cctx)
		})
	}
	return c, err
}

func signal(t *testing.T, method, url, cred string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader("a=end-of-candidates\r\n"))
	req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
	req.Header.Set("Authorization", "Bearer "+cred)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAbuseVoiceSessionOwnedPerPerson: a client token of end user Y may
// not ICE-restart or hang up end user X's live call of the same partner
// (404, as for a session that does not exist); the partner's key may act
// for any of its users; X's own token hangs up with 204.
func TestAbuseVoiceSessionOwnedPerPerson(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{Authorize: principalAuth})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	x := "partner-a/token/usr_x/"
	c, err := dialAs(t, ctx, ts.URL, x, "")
	if err != nil {
		t.Fatal(err)
	}
	loc := c.Location()
	for _, m := range []string{http.MethodPatch, http.MethodDelete} {
		if got := signal(t, m, loc, "partner-a/token/usr_y/"); got != http.StatusNotFound {
			t.Errorf("another end user's %s = %d, want 404", m, got)
		}
		if got := signal(t, m, loc, "partner-b/key//"); got != http.StatusNotFound {
			t.Errorf("another partner's %s = %d, want 404", m, got)
		}
	}
	if ts.h.Len() != 1 {
		t.Fatalf("%d sessions after the refused calls, want 1", ts.h.Len())
	}
	if got := signal(t, http.MethodPatch, loc, "partner-a/key//"); got != http.StatusNoContent {
		t.Errorf("the partner's key PATCH = %d, want 204", got)
	}
	if got := signal(t, http.MethodDelete, loc, x); got != http.StatusNoContent {
		t.Fatalf("the owner's DELETE = %d, want 204", got)
	}
}

// TestAbuseBoundTokenDevice: a token bound to browser cannot open a
// glasses voice session (403), and its data channel's hello cannot switch
// the session to the glasses (a permission_error event; the session never
// sees the hello).
func TestAbuseBoundTokenDevice(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{Authorize: principalAuth})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cred := "partner-a/token/usr_x/browser"
	_, err := dialAs(t, ctx, ts.URL, cred, "meta-rayban-display")
	var he *fixtures.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusForbidden || !strings.Contains(he.Body, "bound to device browser") {
		t.Fatalf("browser token opening a glasses session: %v, want 403", err)
	}
	c, err := dialAs(t, ctx, ts.URL, cred, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	sess := <-ts.created
	for _, hello := range []string{`{"type":"hello","device":"meta-rayban-display"}`,
		`{"type":"hello","device":"meta-rayban-display","resume_token":"rt_x"}`} {
		if err := c.SendEvent([]byte(hello)); err != nil {
			t.Fatal(err)
		}
		ev, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "error" })
		if err != nil || !strings.Contains(string(ev.Data), `"permission_error"`) {
			t.Fatalf("hello switching device: %v %s, want a permission_error event", err, ev.Data)
		}
	}
	// Its own device's hello passes (a marker after it shows order).
	_ = c.SendEvent([]byte(`{"type":"hello","device":"browser"}`))
	_ = c.SendEvent([]byte(`{"type":"ping"}`))
	if _, err := c.WaitEvent(ctx, func(e fixtures.Event) bool { return e.Type == "pong" }); err != nil {
		t.Fatal(err)
	}
	for _, e := range sess.Events() {
		if strings.Contains(string(e), "meta-rayban-display") {
			t.Fatalf("the session saw a device switch: %s", e)
		}
	}
}

// TestAbuseVoiceFairShares: partner a at its share of the voice sessions
// gets 429 with Retry-After; partner b still opens its own; a full gateway
// answers 503 with Retry-After.
func TestAbuseVoiceFairShares(t *testing.T) {
	lim := gateway.DefaultConfig().Limits
	lim.PerPartner.VoiceSessions = 0.5
	lim.PerToken.VoiceSessions = 0.25
	shares := gateway.NewShares(lim, map[gateway.ShareKind]int{gateway.ShareVoiceSessions: 4}, 5)
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{Authorize: principalAuth, Shares: shares, MaxSessions: 4, RetryAfterSeconds: 7})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// One end user holds its one (a quarter of 4); a second is refused.
	if _, err := dialAs(t, ctx, ts.URL, "partner-a/token/usr_1/", ""); err != nil {
		t.Fatal(err)
	}
	_, err := dialAs(t, ctx, ts.URL, "partner-a/token/usr_1/", "")
	assertRefused(t, err, http.StatusTooManyRequests, "limits.per_token.voice_sessions")
	if _, err := dialAs(t, ctx, ts.URL, "partner-a/token/usr_2/", ""); err != nil {
		t.Fatal(err)
	}
	// Partner a holds its half: its key is refused too.
	_, err = dialAs(t, ctx, ts.URL, "partner-a/key//", "")
	assertRefused(t, err, http.StatusTooManyRequests, "limits.per_partner.voice_sessions")
	for i := 0; i < 2; i++ {
		if _, err := dialAs(t, ctx, ts.URL, fmt.Sprintf("partner-b/token/usr_%d/", i), ""); err != nil {
			t.Fatalf("partner b beside a at its caps: %v", err)
		}
	}
	_, err = dialAs(t, ctx, ts.URL, "partner-c/key//", "")
	assertRefused(t, err, http.StatusServiceUnavailable, "voice session limit")
}

func assertRefused(t *testing.T, err error, status int, naming string) {
	t.Helper()
	var he *fixtures.HTTPError
	if !errors.As(err, &he) || he.Status != status || !strings.Contains(he.Body, naming) {
		t.Fatalf("got %v, want %d naming %q", err, status, naming)
	}
}

// TestAbuseSDPBoundedBeforeParsing: an offer or trickle fragment within
// the byte limit but with a flood of candidates or lines is refused with
// 400 before it is parsed or reaches the ICE agent.
func TestAbuseSDPBoundedBeforeParsing(t *testing.T) {
	ts := newTestServer(t, rtc.LoopbackConfig(), rtc.HandlerOptions{Authorize: principalAuth})
	var b strings.Builder
	b.WriteString("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n")
	for i := 0; i < rtc.MaxSDPCandidates+1; i++ {
		fmt.Fprintf(&b, "a=candidate:%d 1 udp 2122260223 127.0.0.1 %d typ host\r\n", i, 10000+i)
	}
	post := func(ctype, url, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", "Bearer partner-a/key//")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		sb.Write(buf[:n])
		return resp.StatusCode, sb.String()
	}
	if st, body := post("application/sdp", ts.URL, b.String()); st != 400 || !strings.Contains(body, "more than 50 ICE candidates") {
		t.Fatalf("offer with 51 candidates = %d %s, want 400", st, body)
	}
	lines := strings.Repeat("a=x\r\n", rtc.MaxSDPLines+1)
	if st, body := post("application/sdp", ts.URL, "v=0\r\n"+lines); st != 400 || !strings.Contains(body, "lines") {
		t.Fatalf("offer with 401 lines = %d %s, want 400", st, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := dialAs(t, ctx, ts.URL, "partner-a/key//", "")
	if err != nil {
		t.Fatal(err)
	}
	frag := strings.Repeat("a=candidate:1 1 udp 2122260223 127.0.0.1 9 typ host\r\n", rtc.MaxSDPCandidates+1)
	st, body, err := c.Trickle(ctx, []byte(frag), "")
	if err != nil || st != 400 || !strings.Contains(string(body), "ICE candidates") {
		t.Fatalf("PATCH with 51 candidates = %d %s %v, want 400", st, body, err)
	}
}

// Events returns the client events the session received.
func (s *decodeSession) Events() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.events...)
}
