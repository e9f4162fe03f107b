package rtc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// benchClientsEnv carries "url|sessions|play seconds|hold seconds" to the
// client process of the floor benchmarks.
const benchClientsEnv = "VERA_RTC_BENCH_CLIENTS"

// runBenchClients is the client side of the floor benchmarks: it dials the
// sessions, prints "ready", holds them silent for hold seconds, plays the
// espeak fixture looped for play seconds to each, and hangs up.
func runBenchClients(spec string) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 4 {
		fmt.Fprintln(os.Stderr, "bench clients: bad spec", spec)
		return 2
	}
	n, err1 := strconv.Atoi(parts[1])
	secs, err2 := strconv.Atoi(parts[2])
	hold, err3 := strconv.Atoi(parts[3])
	if err1 != nil || err2 != nil || err3 != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "bench clients: bad spec", spec)
		return 2
	}
	a, err := fixtures.LoadWAV(filepath.Join("..", "..", "testdata", "rtc", "hello16k.wav"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench clients:", err)
		return 1
	}
	base, err := fixtures.Encode(a, fixtures.EncodeOptions{FEC: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench clients:", err)
		return 1
	}
	s := &fixtures.Stream{}
	for i := 0; len(s.Packets) < secs*50; i++ {
		p := base.Packets[i%len(base.Packets)]
		p.Seq, p.Timestamp, p.At, p.Frame = uint16(i), uint32(i*960), time.Duration(i)*fixtures.FrameDuration, i
		s.Packets = append(s.Packets, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+hold+60)*time.Second)
	defer cancel()
	clients := make([]*fixtures.Client, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := fixtures.Dial(ctx, fixtures.ClientOptions{URL: parts[0], LoopbackOnly: true})
			if err != nil {
				errs <- err
				return
			}
			clients[i] = c
		})
	}
	wg.Wait()
	code := 0
	select {
	case err := <-errs:
		fmt.Fprintln(os.Stderr, "bench clients:", err)
		code = 1
	default:
		fmt.Println("ready")
		if hold > 0 {
			t := time.NewTimer(time.Duration(hold) * time.Second)
			<-t.C
		}
		for _, c := range clients {
			wg.Go(func() { _ = c.Play(ctx, s) })
		}
		wg.Wait()
	}
	for _, c := range clients {
		if c == nil {
			continue
		}
		cctx, cc := context.WithTimeout(context.Background(), 10*time.Second)
		_ = c.Close(cctx)
		cc()
	}
	return code
}
