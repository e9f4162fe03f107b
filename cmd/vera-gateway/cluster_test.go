package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/cluster"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/gateway/session"
)

const (
	clusterKeyA   = "vera_sk_cluster_a_0123456789abcdef"
	clusterKeyB   = "vera_sk_cluster_b_0123456789abcdef"
	clusterSecret = "cluster-secret-for-tests-0123456789abcdef"
	clusterHB     = 150 * time.Millisecond
)

// node is one gateway of an in-process cluster, serving on its own
// loopback port.
type node struct {
	a    *app
	srv  *httptest.Server
	url  string
	once sync.Once
}

func clusterConfig(rs *redistest.Server, id, addr string) fileConfig {
	cfg := testFileConfig()
	cfg.Auth.Keys = []keyConfig{
		{KeyConfig: gateway.KeyConfig{ID: "partner-a", Secret: clusterKeyA, Scopes: gateway.AllScopes}},
		{KeyConfig: gateway.KeyConfig{ID: "partner-b", Secret: clusterKeyB, Scopes: gateway.AllScopes}},
	}
	cfg.Auth.TokenSecretEnv, cfg.Auth.TokenSecret = "VERA_TOKEN_SECRET", "token-secret-for-tests-0123456789abcdef"
	cfg.Cluster = cluster.Config{RedisURL: rs.URL(), NodeID: id, AdvertiseURL: addr, SecretEnv: "VERA_CLUSTER_SECRET",
		Secret: clusterSecret, HeartbeatMS: int(clusterHB / time.Millisecond)}
	return cfg
}

func startNode(t testing.TB, rs *redistest.Server, id string, tweak ...func(*fileConfig)) *node {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	cfg := clusterConfig(rs, id, addr)
	for _, f := range tweak {
		f(&cfg)
	}
	a, err := newApp(cfg, envMap(nil), slog.New(slog.DiscardHandler))
	if err != nil {
		_ = ln.Close()
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: a.cluster.Readyz(a.srv.Handler())}}
	srv.Start()
	n := &node{a: a, srv: srv, url: addr}
	t.Cleanup(n.stop)
	return n
}

func (n *node) stop() {
	n.once.Do(func() {
		n.srv.Close()
		n.a.close()
	})
}

// kill ends the node as a crash would: no entry removed, no lease given
// back, its port closed.
func (n *node) kill() {
	n.a.cluster.Kill()
	n.srv.CloseClientConnections()
	n.srv.Listener.Close()
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (n *node) do(t *testing.T, method, path, key, body string, hdr ...string) reply {
	t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = n.url + path
	}
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// openSession opens a conversation on n as the partner's end user.
func openSession(t *testing.T, n *node, partner, endUser string) *session.Session {
	t.Helper()
	s, st, err := n.a.sessions.Open(session.Owner{PartnerID: partner, EndUserID: endUser}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Detach)
	return s
}

// TestClusterRequestsFindTheirOwner: inbox, title, PATCH and DELETE sent
// to the node that does not hold the session succeed on the one that
// does, under the same ownership rules; the WHIP Location names the
// owner.
func TestClusterRequestsFindTheirOwner(t *testing.T) {
	rs := redistest.Start(t)
	a, b := startNode(t, rs, "gw-a"), startNode(t, rs, "gw-b")
	s := openSession(t, a, "partner-a", "u_1")
	path := "/v1/sessions/" + s.ID()
	if r := b.do(t, "POST", path+"/messages", clusterKeyA, `{"text":"Your ride is here.","source":"acme.lookout"}`); r.status != 202 || !strings.Contains(r.body, "queued") {
		t.Fatalf("inbox via b = %d %s", r.status, r.body)
	}
	if r := b.do(t, "POST", path+"/messages", clusterKeyB, `{"text":"x","source":"evil.co"}`); r.status != 404 {
		t.Fatalf("another partner's inbox post via b = %d %s, want 404", r.status, r.body)
	}
	if r := b.do(t, "PUT", path+"/title", clusterKeyA, `{"title":"Trip planning"}`); r.status != 200 || !strings.Contains(r.body, `"set"`) || s.Title() != "Trip planning" {
		t.Fatalf("title via b = %d %s (title %q)", r.status, r.body, s.Title())
	}
	if r := b.do(t, "PUT", path+"/title", clusterKeyB, `{"title":"Mine"}`); r.status != 404 {
		t.Fatalf("another partner's title via b = %d", r.status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: a.url + "/v1/voice/sessions", Token: clusterKeyA, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	loc, err := url.Parse(c.Location())
	if err != nil || "http://"+loc.Host != a.url {
		t.Fatalf("Location %q does not name the owner %s", c.Location(), a.url)
	}
	frag := "a=candidate:1 1 udp 2130706431 127.0.0.1 9 typ host\r\na=end-of-candidates\r\n"
	if r := b.do(t, "PATCH", loc.Path, clusterKeyA, frag, "Content-Type", "application/trickle-ice-sdpfrag", "If-Match", c.ETag()); r.status != 204 {
		t.Fatalf("PATCH via b = %d %s", r.status, r.body)
	}
	if r := b.do(t, "DELETE", loc.Path, clusterKeyB, ""); r.status != 404 {
		t.Fatalf("another partner's DELETE via b = %d", r.status)
	}
	if r := b.do(t, "DELETE", loc.Path, clusterKeyA, ""); r.status != 200 && r.status != 204 {
		t.Fatalf("DELETE via b = %d %s", r.status, r.body)
	}
	if n := a.a.rtc.Len(); n != 0 {
		t.Fatalf("%d calls live on a after the hang-up via b", n)
	}
	if r := b.do(t, "DELETE", loc.Path, clusterKeyA, ""); r.status != 404 {
		t.Fatalf("second DELETE = %d, want 404 (the entry left with the call)", r.status)
	}
}

// TestClusterLimitsAndIdempotency: on three nodes, the 61st request of a
// minute with one key is 429 wherever it lands; a retried POST replays byte for byte on
// another node.
func TestClusterLimitsAndIdempotency(t *testing.T) {
	rs := redistest.Start(t)
	a, b := startNode(t, rs, "gw-a"), startNode(t, rs, "gw-b")
	ns := []*node{a, b, startNode(t, rs, "gw-c")}
	body := `{"end_user_id":"u_42","device":"phone"}`
	first := a.do(t, "POST", "/v1/client_tokens", clusterKeyA, body, "Idempotency-Key", "retry-1")
	again := b.do(t, "POST", "/v1/client_tokens", clusterKeyA, body, "Idempotency-Key", "retry-1")
	if first.status != 201 || again.status != 201 || again.body != first.body || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry on another node: %d %q vs %d %q (replayed %q)", first.status, first.body, again.status, again.body, again.header.Get("Idempotent-Replayed"))
	}
	// The bucket refills one request a second while the test runs, so
	// between 60 and 60 + elapsed seconds pass (per node it would be 180).
	start, passed := time.Now(), 2 // the two token requests counted
	var refused reply
	for i := 0; i < 200 && refused.status == 0; i++ {
		switch r := ns[i%3].do(t, "GET", "/v1/tools", clusterKeyA, ""); r.status {
		case 200:
			passed++
		case 429:
			refused = r
		default:
			t.Fatalf("request %d = %d %s", passed+1, r.status, r.body)
		}
	}
	if most := 60 + int(time.Since(start).Seconds()) + 1; passed < 60 || passed > most || refused.header.Get("Retry-After") != "1" {
		t.Fatalf("%d requests passed across three nodes before a 429 (Retry-After %q); want 60 to %d", passed, refused.header.Get("Retry-After"), most)
	}
	if r := a.do(t, "GET", "/v1/tools", clusterKeyB, ""); r.status != 200 {
		t.Fatalf("another partner's first request = %d", r.status)
	}
}

// TestClusterDeadNodeAndForgedForward: a forward to a node that died is a
// quick 404 and drops its entry; its entries lapse within two heartbeats;
// a forward without the cluster's signature is 401.
func TestClusterDeadNodeAndForgedForward(t *testing.T) {
	rs := redistest.Start(t)
	a, b := startNode(t, rs, "gw-a"), startNode(t, rs, "gw-b")
	s1, s2 := openSession(t, a, "partner-a", "u_1"), openSession(t, a, "partner-a", "u_2")
	a.kill()
	rdb := rs.Client()
	ctx := context.Background()
	for _, s := range []*session.Session{s1, s2} {
		if ttl, err := rdb.PTTL(ctx, "vera:dir:session:"+s.ID()).Result(); err != nil || ttl <= 0 || ttl > 2*clusterHB {
			t.Fatalf("entry TTL after the kill = %v (%v), want at most two heartbeats", ttl, err)
		}
	}
	if r := b.do(t, "POST", "/v1/sessions/"+s1.ID()+"/messages", clusterKeyA, `{"text":"hi","source":"acme.lookout"}`); r.status != 404 {
		t.Fatalf("post for a dead node's session = %d %s, want 404", r.status, r.body)
	}
	if n, _ := rdb.Exists(ctx, "vera:dir:session:"+s1.ID()).Result(); n != 0 {
		t.Fatal("the dead node's entry was not dropped after the failed forward")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if n, _ := rdb.Exists(ctx, "vera:dir:session:"+s2.ID()).Result(); n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed node's entry never lapsed")
		}
	}
	if r := b.do(t, "PUT", "/v1/sessions/"+s2.ID()+"/title", clusterKeyA, `{"title":"x"}`); r.status != 404 {
		t.Fatalf("title for a lapsed session = %d", r.status)
	}
	forged := b.do(t, "POST", cluster.InternalPath, "", `{"text":"hi","source":"a.b"}`,
		cluster.HeaderSignature, "t=1,v1="+strings.Repeat("0", 64), cluster.HeaderTo, "gw-b", cluster.HeaderMethod, "POST",
		cluster.HeaderPath, "/v1/sessions/x/messages", cluster.HeaderPrincipal, "eyJwYXJ0bmVyIjoicGFydG5lci1hIn0")
	if forged.status != 401 || !strings.Contains(forged.body, "authentication_error") {
		t.Fatalf("forged forward = %d %s", forged.status, forged.body)
	}
}

// TestClusterRedisLost: without Redis a node is unready and refuses new
// sessions and rate-limited calls with 503 and Retry-After, and is ready
// again when Redis is back.
func TestClusterRedisLost(t *testing.T) {
	rs := redistest.Start(t)
	a := startNode(t, rs, "gw-a")
	waitReady := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if r := a.do(t, "GET", "/readyz", "", ""); r.status == want {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("/readyz stayed %d, want %d", r.status, want)
			}
		}
	}
	waitReady(200)
	rs.Stop()
	waitReady(503)
	r := a.do(t, "POST", "/v1/voice/sessions", clusterKeyA, "v=0\r\n", "Content-Type", "application/sdp")
	if r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("new voice session without Redis = %d (Retry-After %q) %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := a.do(t, "GET", "/v1/tools", clusterKeyA, ""); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("rate-limited call without Redis = %d %s, want 503 (fail closed)", r.status, r.body)
	}
	rs.Start()
	waitReady(200)
	if r := a.do(t, "GET", "/v1/tools", clusterKeyA, ""); r.status != 200 {
		t.Fatalf("after Redis is back = %d %s", r.status, r.body)
	}
}

// wsClient is a chat websocket in a test.
type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialChat(t *testing.T, n *node, token string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(n.url, "http")+"/v1/chat", &websocket.DialOptions{Subprotocols: []string{"vera.v1", token}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &wsClient{t: t, ws: ws}
}

func (c *wsClient) send(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// until reads events until one of type typ (hang guard: 20 s).
func (c *wsClient) until(typ string) map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, b, err := c.ws.Read(ctx)
		if err != nil {
			c.t.Fatalf("no %s event: %v", typ, err)
		}
		var ev map[string]any
		if err := json.Unmarshal(b, &ev); err != nil {
			c.t.Fatal(err)
		}
		if ev["type"] == typ {
			return ev
		}
	}
}

// TestClusterChatResumesOnAnotherNode: a chat opened on a resumes through
// b (relayed to a, where the session lives) and converses there; once a
// is gone, the resume through b is a clear not_found.
func TestClusterChatResumesOnAnotherNode(t *testing.T) {
	rs := redistest.Start(t)
	a, b := startNode(t, rs, "gw-a"), startNode(t, rs, "gw-b")
	tok := a.do(t, "POST", "/v1/client_tokens", clusterKeyA, `{"end_user_id":"u_7","device":"browser"}`)
	var minted struct{ Token string }
	if err := json.Unmarshal([]byte(tok.body), &minted); err != nil || minted.Token == "" {
		t.Fatalf("client token: %d %s", tok.status, tok.body)
	}
	first := dialChat(t, a, minted.Token)
	first.send(`{"type":"hello","device":"browser"}`)
	created := first.until("session.created")
	id, rt := field(created, "session_id"), field(created, "data.resume_token")
	if rt == "" {
		rt = field(created, "resume_token")
	}
	if id == "" || rt == "" {
		t.Fatalf("session.created without id or resume token: %v", created)
	}
	_ = first.ws.Close(websocket.StatusNormalClosure, "")

	second := dialChat(t, b, minted.Token)
	second.send(`{"type":"hello","device":"browser","resume_token":"` + rt + `","last_seq":1}`)
	resumed := second.until("session.created")
	if field(resumed, "session_id") != id {
		t.Fatalf("resumed through b: %v, want session %s", resumed, id)
	}
	second.send(`{"type":"input.text","text":"hello there"}`)
	second.until("reply.done")
	_ = second.ws.Close(websocket.StatusNormalClosure, "")

	a.kill()
	third := dialChat(t, b, minted.Token)
	third.send(`{"type":"hello","device":"browser","resume_token":"` + rt + `","last_seq":1}`)
	if e := third.until("error"); !strings.Contains(fmt.Sprint(e), "not_found") {
		t.Fatalf("resume of a dead node's session = %v, want not_found", e)
	}
}

// TestClusterDrain: a draining node says so in Redis and to the load
// balancer, and takes no new chats, while another node stays ready.
func TestClusterDrain(t *testing.T) {
	rs := redistest.Start(t)
	a, b := startNode(t, rs, "gw-a"), startNode(t, rs, "gw-b")
	a.a.srv.StartDrain()
	a.a.cluster.StartDrain(context.Background())
	if st, err := rs.Client().HGet(context.Background(), "vera:node:gw-a", "state").Result(); err != nil || st != "draining" {
		t.Fatalf("node record state = %q (%v), want draining", st, err)
	}
	if r := a.do(t, "GET", "/readyz", "", ""); r.status != 503 {
		t.Fatalf("draining /readyz = %d", r.status)
	}
	if r := b.do(t, "GET", "/readyz", "", ""); r.status != 200 {
		t.Fatalf("the other node's /readyz = %d", r.status)
	}
	m := a.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{"vera_cluster_ready 0", "vera_cluster_heartbeat_age_seconds", "vera_cluster_redis_duration_seconds_count"} {
		if !strings.Contains(m.body, want) {
			t.Errorf("/metrics of the draining node lacks %q", want)
		}
	}
	tok := b.do(t, "POST", "/v1/client_tokens", clusterKeyA, `{"end_user_id":"u_9","device":"browser"}`)
	var minted struct{ Token string }
	_ = json.Unmarshal([]byte(tok.body), &minted)
	r := a.do(t, "GET", "/v1/chat?token="+minted.Token, "", "", "Connection", "Upgrade", "Upgrade", "websocket",
		"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	if r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("new chat on a draining node = %d %s", r.status, r.body)
	}
}
