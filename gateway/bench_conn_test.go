package gateway

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkHealthzUnderConnectionFlood: /healthz and an authenticated
// request from one client, alone and while 2,000 unauthenticated
// connections from eight other sources sit idle or send their headers
// slowly (each source under its cap of 256). Reports p50 and p99 per op;
// the flood's descriptors must all be back when it ends.
//
//	go test -tags nolibopusfile -run '^$' -bench HealthzUnderConnectionFlood -benchtime 2000x -benchmem ./gateway/
func BenchmarkHealthzUnderConnectionFlood(b *testing.B) {
	raiseNoFile(b, 8192)
	cfg := testConfig()
	cfg.Limits.HeaderTimeout = 2 * time.Minute // the flood stays for the whole run
	cfg.Limits.RequestsPerMinute = 1 << 30
	ls := startLive(b, cfg)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	reqs := map[string]func() *http.Request{
		"healthz": func() *http.Request {
			r, _ := http.NewRequest("GET", "http://"+ls.addr+"/healthz", nil)
			return r
		},
		"authenticated": func() *http.Request {
			r, _ := http.NewRequest("POST", "http://"+ls.addr+"/v1/device", strings.NewReader("{}"))
			r.Header.Set("Authorization", "Bearer "+keyA)
			r.Header.Set("Content-Type", "application/json")
			return r
		},
	}
	for _, flood := range []int{0, 2000} {
		for _, name := range []string{"healthz", "authenticated"} {
			b.Run(fmt.Sprintf("%s/flood=%d", name, flood), func(b *testing.B) {
				base := openFDs(b)
				conns := floodConns(b, ls.addr, flood)
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					resp, err := client.Do(reqs[name]())
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				for _, c := range conns {
					c.Close()
				}
				deadline := time.Now().Add(10 * time.Second)
				for openFDs(b) > base+2 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if n := openFDs(b); n > base+2 {
					b.Fatalf("%d descriptors after the flood, %d before", n, base)
				}
			})
		}
	}
}

// floodConns opens n unauthenticated connections from 127.0.0.2…9: half
// idle, half with a request line and a header started and never finished.
func floodConns(tb testing.TB, addr string, n int) []net.Conn {
	out := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c := dialFrom(tb, fmt.Sprintf("127.0.0.%d", 2+i%8), addr)
		if i%2 == 1 {
			_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
		}
		out = append(out, c)
	}
	return out
}

// raiseNoFile raises this process's RLIMIT_NOFILE to at least n (within
// the hard limit), restoring it afterwards.
func raiseNoFile(tb testing.TB, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Skipf("getrlimit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	old := lim
	lim.Cur = min(n, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < n {
		tb.Skipf("cannot raise RLIMIT_NOFILE to %d (hard limit %d): %v", n, old.Max, err)
	}
	tb.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}
