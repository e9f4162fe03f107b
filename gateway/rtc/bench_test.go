package rtc_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// The floor benchmarks measure the gateway side only: the clients run in a
// child process (this test binary re-executed with rtc.BenchClientsEnv set,
// which TestMain turns into runBenchClients), so getrusage(RUSAGE_SELF) in
// the benchmark counts the server's pion transport and, for the decode
// variant, Opus decoding at 16 kHz.

const helperEnv = "VERA_RTC_BENCH_CLIENTS" // = benchClientsEnv in main_test.go (package rtc)

// floorSession is the cheapest useful listener: count, and optionally
// decode every packet straight to 16 kHz with the audio package's codec
// (the same decoder the session pipeline uses).
type floorSession struct {
	dec     *codec.Decoder
	pcm     []int16
	packets atomic.Int64
}

func (s *floorSession) OnRTP(p rtc.Packet) {
	s.packets.Add(1)
	if s.dec != nil {
		_ = s.dec.DecodeFrame(p.Payload, s.pcm)
	}
}
func (*floorSession) OnEvent([]byte) {}
func (*floorSession) Closed(error)   {}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchFloor(b *testing.B, n int, decode bool) {
	const window = 4 // seconds measured
	var mu sync.Mutex
	var sessions []*floorSession
	eng, err := rtc.NewEngine(rtc.LoopbackConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	h, err := rtc.NewHandler(rtc.HandlerOptions{Engine: eng, NewSession: func(context.Context, rtc.SessionInfo, *rtc.Conn) (rtc.Session, error) {
		s := &floorSession{}
		if decode {
			d, err := codec.NewDecoder(codec.DefaultConfig())
			if err != nil {
				return nil, err
			}
			s.dec, s.pcm = d, make([]int16, 320)
		}
		mu.Lock()
		sessions = append(sessions, s)
		mu.Unlock()
		return s, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	srv := newHTTPServer(h)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		srv.Close()
	}()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d|0", helperEnv, srv.URL+rtc.DefaultBasePath, n, window+3))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	ready := false
	for sc.Scan() {
		if sc.Text() == "ready" {
			ready = true
			break
		}
	}
	if !ready {
		b.Fatal("client process never became ready")
	}
	go func() { // drain the rest of the child's output; ends when it exits
		for sc.Scan() {
		}
	}()
	warm := time.NewTimer(time.Second)
	<-warm.C
	b.ResetTimer()
	c0, p0 := cpuTime(), countPackets(&mu, sessions)
	t0 := time.Now()
	win := time.NewTimer(window * time.Second)
	<-win.C
	c1, p1 := cpuTime(), countPackets(&mu, sessions)
	el := time.Since(t0)
	b.StopTimer()
	sessSec := float64(n) * el.Seconds()
	b.ReportMetric(float64((c1-c0).Microseconds())/1000/sessSec, "cpu-ms/session-s")
	b.ReportMetric(float64(p1-p0)/sessSec, "pkts/session-s")
	b.ReportMetric(float64(h.Len()), "sessions")
}

func countPackets(mu *sync.Mutex, ss []*floorSession) int64 {
	mu.Lock()
	defer mu.Unlock()
	var t int64
	for _, s := range ss {
		t += s.packets.Load()
	}
	return t
}

// floorSessions is the session counts the floor benchmarks run: 10 and 40,
// or VERA_FLOOR_SESSIONS (e.g. "100,200,400") to compare with a load run of
// the same sizes in the same sitting.
func floorSessions(b *testing.B) []int {
	v := os.Getenv("VERA_FLOOR_SESSIONS")
	if v == "" {
		return []int{10, 40}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("VERA_FLOOR_SESSIONS=%q: want comma-separated session counts", v)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkFloorTransport: pion receive path only (SRTP, interceptors, RTP
// read loop), N sessions at 50 packets/s each.
func BenchmarkFloorTransport(b *testing.B) {
	for _, n := range floorSessions(b) {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) { benchFloor(b, n, false) })
	}
}

// BenchmarkFloorDecode: the listening floor, transport + Opus decode @16 kHz.
func BenchmarkFloorDecode(b *testing.B) {
	for _, n := range floorSessions(b) {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) { benchFloor(b, n, true) })
	}
}

// BenchmarkIdleSessionMemory: Go heap and goroutines per connected, idle
// session on the gateway side (clients in the child process).
func BenchmarkIdleSessionMemory(b *testing.B) {
	const n = 40
	eng, err := rtc.NewEngine(rtc.LoopbackConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	h, err := rtc.NewHandler(rtc.HandlerOptions{Engine: eng})
	if err != nil {
		b.Fatal(err)
	}
	srv := newHTTPServer(h)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		srv.Close()
	}()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()
	// The child connects, holds the sessions silent for 3 s, then hangs up.
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|0|3", helperEnv, srv.URL+rtc.DefaultBasePath, n))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "ready" {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	g1 := runtime.NumGoroutine()
	b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/n/1024, "heap-KiB/session")
	b.ReportMetric(float64(g1-g0)/n, "goroutines/session")
}
