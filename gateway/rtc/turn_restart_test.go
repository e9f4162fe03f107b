package rtc_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// TestICERestartMintsFreshTURN: the 200 of an ICE restart by PATCH lists
// the ICE servers again, with a TURN credential minted at the restart (by
// the gateway's clock), for the same opaque user; a trickle PATCH (204)
// lists none. The relay itself is TestTURNRelayThroughCoturn's.
func TestICERestartMintsFreshTURN(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Unix(1700000000, 0).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	cfg := rtc.LoopbackConfig()
	cfg.ICEServers = []rtc.ICEServer{{URLs: []string{"stun:stun.example.net:3478"}}}
	cfg.TURN = rtc.TURNConfig{URLs: []string{"turn:127.0.0.1:9?transport=udp"}, SecretEnv: "TURN_SECRET", Secret: coturnSecret, TTLSeconds: 600}
	ts := newTestServer(t, cfg, rtc.HandlerOptions{}, rtc.WithClock(clock))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dial(t, ctx, ts.URL)
	first := c.ICEServers()
	if len(first) != 2 || !strings.HasPrefix(first[1].Username, "1700000600:") {
		t.Fatalf("answer's servers %+v, want the STUN entry and a TURN credential expiring at 1700000600", first)
	}

	patch := func(frag string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPatch, c.Location(), strings.NewReader(frag))
		req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
		req.Header.Set("If-Match", c.ETag())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("PATCH = %d %s", resp.StatusCode, body.String())
		}
		return resp
	}
	if resp := patch("a=end-of-candidates\r\n"); resp.StatusCode != http.StatusNoContent || len(resp.Header.Values("Link")) != 0 {
		t.Fatalf("trickle PATCH = %d with Link %q, want 204 and none", resp.StatusCode, resp.Header.Values("Link"))
	}

	now.Add(int64(20 * time.Minute)) // the answer's credential has expired
	resp := patch("a=ice-ufrag:rstA\r\na=ice-pwd:restartpassword0123456789\r\na=end-of-candidates\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("restart PATCH = %d, want 200", resp.StatusCode)
	}
	fresh := fixtures.ParseICELinks(resp.Header)
	if len(fresh) != 2 || fresh[0].URLs[0] != "stun:stun.example.net:3478" || fresh[1].URLs[0] != cfg.TURN.URLs[0] {
		t.Fatalf("restart's servers %+v, want the STUN entry and the TURN entry", fresh)
	}
	_, opaque, _ := strings.Cut(first[1].Username, ":")
	wantUser, wantPass := rtc.TURNCredential(coturnSecret, clock().Add(600*time.Second), opaque)
	if fresh[1].Username != wantUser || fresh[1].Credential != wantPass {
		t.Fatalf("restart's TURN credential %q / %v, want %q (minted at the restart, same opaque user)", fresh[1].Username, fresh[1].Credential, wantUser)
	}
	if strings.Contains(strings.Join(resp.Header.Values("Link"), " "), coturnSecret) {
		t.Fatal("the TURN secret is in a Link header")
	}
}
