package main

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/cluster"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// latencies runs op b.N times and reports its p50 and p99 in ms.
func latencies(b *testing.B, op func()) {
	b.Helper()
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		op()
		d = append(d, time.Since(start))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	if len(d) > 0 {
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
	}
}

func benchDo(b *testing.B, method, u, key, body string, hdr ...string) int {
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// BenchmarkClusterOverhead: the same requests on a node alone (memory and
// bbolt) and on a node of a two-node cluster (Redis on a unix socket),
// and through the node that does not own the session (one forward).
// Reports latency percentiles and Redis round trips per request.
//
//	go test -tags nolibopusfile -run '^$' -bench ClusterOverhead -benchtime 2000x ./cmd/vera-gateway/
func BenchmarkClusterOverhead(b *testing.B) {
	rs := redistest.Start(b)
	nodes := map[string]*node{"alone": startNode(b, rs, "alone", unlimited, func(c *fileConfig) { c.Cluster = cluster.Config{} })}
	for _, id := range []string{"gw-a", "gw-b"} {
		nodes[id] = startNode(b, rs, id, unlimited)
	}
	alone := nodes["alone"]
	owner := map[string]*node{"alone": alone, "cluster": nodes["gw-a"], "forwarded": nodes["gw-a"]}
	via := map[string]*node{"alone": alone, "cluster": nodes["gw-a"], "forwarded": nodes["gw-b"]}
	for _, mode := range []string{"alone", "cluster", "forwarded"} {
		s, st, err := owner[mode].a.sessions.Open(session.Owner{PartnerID: "partner-a", EndUserID: "u_1"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(st.Detach)
		b.Run("title/"+mode, func(b *testing.B) {
			trips := roundTrips(nodes)
			latencies(b, func() {
				if c := benchDo(b, "PUT", via[mode].url+"/v1/sessions/"+s.ID()+"/title", clusterKeyA, `{"title":"Trip"}`); c != 200 {
					b.Fatalf("title = %d", c)
				}
			})
			b.ReportMetric(float64(roundTrips(nodes)-trips)/float64(b.N), "redis-trips/op")
		})
		if mode == "forwarded" {
			continue
		}
		b.Run("tools-list/"+mode, func(b *testing.B) {
			trips := roundTrips(nodes)
			latencies(b, func() {
				if c := benchDo(b, "GET", via[mode].url+"/v1/tools", clusterKeyA, ""); c != 200 {
					b.Fatalf("tools = %d", c)
				}
			})
			b.ReportMetric(float64(roundTrips(nodes)-trips)/float64(b.N), "redis-trips/op")
		})
	}
}

// BenchmarkClusterVoiceSetup: Redis round trips to set up and hang up one
// voice call on a cluster node, and during its media (none but the
// heartbeat's one pipeline each heartbeat_ms).
//
//	go test -tags nolibopusfile -run '^$' -bench ClusterVoiceSetup -benchtime 20x ./cmd/vera-gateway/
func BenchmarkClusterVoiceSetup(b *testing.B) {
	rs := redistest.Start(b)
	n := startNode(b, rs, "gw-a", unlimited)
	nodes := map[string]*node{"gw-a": n}
	var setup, media, hangup int64
	var mediaFor time.Duration
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t0 := roundTrips(nodes)
		c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: n.url + "/v1/voice/sessions", Token: clusterKeyA, LoopbackOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.WaitReady(ctx); err != nil {
			b.Fatal(err)
		}
		t1 := roundTrips(nodes)
		start := time.Now()
		time.Sleep(500 * time.Millisecond) // media flows (the gateway's greeting and notice)
		mediaFor += time.Since(start)
		t2 := roundTrips(nodes)
		_ = c.Hangup(ctx)
		_ = c.Close(ctx)
		for n.a.rtc.Len() > 0 {
			time.Sleep(5 * time.Millisecond)
		}
		setup, media, hangup = setup+t1-t0, media+t2-t1, hangup+roundTrips(nodes)-t2
		cancel()
	}
	beats := float64(mediaFor) / float64(clusterHB)
	b.ReportMetric(float64(setup)/float64(b.N), "setup-trips/call")
	b.ReportMetric((float64(media)-beats)/float64(b.N), "media-trips-beyond-heartbeats/call")
	b.ReportMetric(float64(hangup)/float64(b.N), "hangup-trips/call")
}

// unlimited lifts the partner's rate limit for benchmarks.
func unlimited(c *fileConfig) {
	c.Limits.RequestsPerMinute, c.Limits.PerEndUserRPM = 1<<30, 1<<30
}

// roundTrips sums the cluster nodes' Redis round trips so far.
func roundTrips(nodes map[string]*node) int64 {
	var n int64
	for _, nd := range nodes {
		if nd.a.cluster != nil {
			n += nd.a.cluster.RoundTrips()
		}
	}
	return n
}
