//go:build !noembedded

package sphinx

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/fixtures"
)

// BenchmarkMediaBesideDecode answers "how do the embedded recognisers
// share the machine with the media path": M listening media loops (the
// gateway's real inbound path — jitter buffer, Opus decode, VAD, turn
// detector — on real speech packets, each on its own 20 ms ticker, timed
// per frame exactly as vera_voice_frame_seconds is) run beside S live
// turns that pocketsphinx decodes in real time (transcription decoder, a
// partial every 200 ms, a final per clip), for a fixed window, in each of
// these arrangements:
//
//   - direct: every turn decodes on its own goroutine (the code before
//     the workers: one cgo thread per live turn);
//   - workers-nice0: the calls go to GOMAXPROCS-1 worker threads at the
//     gateway's priority (the bound alone);
//   - workers-nice10: the same at nice +10 (the default);
//   - workers-all-nice10: GOMAXPROCS worker threads at nice +10 (decoding
//     may use every core the media path leaves idle);
//   - process-nice10: the turns' audio goes over a pipe to a separate
//     worker process started under nice -n 10, which decodes on its own
//     GOMAXPROCS-1 workers (the separate-process design).
//
// Reported: frame-p99-ms / frame-p999-ms (processing time of a frame),
// late-p99-ms (a tick's start after its due time), decode-rt (audio seconds
// decoded per wall second, summed over the S turns: S when every turn keeps
// up), and the process's CPU. Run with -benchtime 1x; knobs
// VERA_MEDIA_BENCH_SESSIONS (200), _TURNS (6), _SECONDS (10), _MODES.
func BenchmarkMediaBesideDecode(b *testing.B) {
	sessions := envInt("VERA_MEDIA_BENCH_SESSIONS", 200)
	turns := envInt("VERA_MEDIA_BENCH_TURNS", 6)
	window := time.Duration(envInt("VERA_MEDIA_BENCH_SECONDS", 10)) * time.Second
	modes := []string{"direct", "workers-nice0", "workers-nice10", "workers-all-nice10", "process-nice10"}
	if m := os.Getenv("VERA_MEDIA_BENCH_MODES"); m != "" {
		modes = slices.DeleteFunc(splitComma(m), func(s string) bool { return s == "" })
	}
	clips := speechClips(b)
	packets := mediaPackets(b)
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				r := runMediaBeside(b, mode, sessions, turns, window, clips, packets)
				b.ReportMetric(r.frameP99, "frame-p99-ms")
				b.ReportMetric(r.frameP999, "frame-p999-ms")
				b.ReportMetric(r.lateP99, "late-p99-ms")
				b.ReportMetric(r.decodeRT, "decode-rt")
				b.ReportMetric(r.cpu, "proc-cores")
			}
		})
	}
}

type besideResult struct {
	frameP99, frameP999, lateP99, decodeRT, cpu float64
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// mediaPackets is real speech with pauses, as Opus packets.
func mediaPackets(b *testing.B) []fixtures.Packet {
	b.Helper()
	root := fixtures.RepoRoot(b)
	var parts []*fixtures.Audio
	for _, f := range []string{"gohome.16k.wav", "lights.16k.wav", "crisis_kill.16k.wav"} {
		a, err := fixtures.LoadWAV(filepath.Join(root, "testdata", "voice", f))
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, a, fixtures.Silence(16000, 700*time.Millisecond))
	}
	a, err := fixtures.Concat(parts...)
	if err != nil {
		b.Fatal(err)
	}
	s, err := fixtures.Encode(a, fixtures.EncodeOptions{FEC: true})
	if err != nil {
		b.Fatal(err)
	}
	return s.Packets
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func runMediaBeside(b *testing.B, mode string, sessions, turns int, window time.Duration, clips [][]int16, packets []fixtures.Packet) besideResult {
	b.Helper()
	stop := make(chan struct{})
	var decoded atomic.Int64 // samples
	var wg sync.WaitGroup
	var childDone func() int64
	switch mode {
	case "process-nice10":
		childDone = startDecodeChild(b, turns, clips, stop, &wg)
	default:
		workers, nice := defaultWorkers(), 10
		switch mode {
		case "workers-nice0":
			nice = 0
		case "workers-all-nice10":
			workers = runtime.GOMAXPROCS(0)
		}
		cfg := DefaultConfig()
		cfg.Pool, cfg.SafetyReserve, cfg.Workers, cfg.Nice = turns, 0, workers, nice
		p, err := NewPool(cfg)
		if err != nil {
			b.Skip(err)
		}
		defer p.Close()
		for i := range turns {
			d, err := p.Acquire(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if mode == "direct" {
				d.w = nil
			}
			wg.Go(func() {
				defer p.Release(d)
				decodeLoop(d, clips, i, stop, func(n int) { decoded.Add(int64(n)) })
			})
		}
	}
	frames := make([][]float64, sessions)
	late := make([][]float64, sessions)
	var mwg sync.WaitGroup
	for i := range sessions {
		mwg.Go(func() { frames[i], late[i] = mediaLoop(b, packets, i, stop) })
	}
	time.Sleep(time.Second) // everything started
	cpu0, t0, dec0 := processCPU(), time.Now(), decoded.Load()
	time.Sleep(window)
	cpu1, el, dec1 := processCPU(), time.Since(t0), decoded.Load()
	close(stop)
	mwg.Wait()
	wg.Wait()
	if childDone != nil {
		dec1 = childDone()
		dec0 = 0
		el += time.Second // the child counts from its start
	}
	var fr, lt []float64
	for i := range sessions {
		fr = append(fr, frames[i]...)
		lt = append(lt, late[i]...)
	}
	slices.Sort(fr)
	slices.Sort(lt)
	q := func(v []float64, p float64) float64 {
		if len(v) == 0 {
			return 0
		}
		return v[min(len(v)-1, int(p*float64(len(v))))]
	}
	return besideResult{
		frameP99: q(fr, .99), frameP999: q(fr, .999), lateP99: q(lt, .99),
		decodeRT: float64(dec1-dec0) / 16000 / el.Seconds(),
		cpu:      (cpu1 - cpu0).Seconds() / el.Seconds(),
	}
}

// decodeLoop feeds clips to d in real time, 20 ms frames on a ticker
// (catching up after a slow call, as the voice feeder does), until stop.
func decodeLoop(d *Decoder, clips [][]int16, k int, stop <-chan struct{}, done func(int)) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	start := time.Now()
	var sent int64
	for c := k; ; c++ {
		pcm := clips[c%len(clips)]
		if d.Start(SearchLM) != nil {
			return
		}
		for j := 0; j < len(pcm); j += 320 {
			select {
			case <-stop: // a turn behind real time never waits for a tick
				d.Abort()
				return
			default:
			}
			for sent >= int64(time.Since(start)/(20*time.Millisecond)) {
				select {
				case <-stop:
					d.Abort()
					return
				case <-t.C:
				}
			}
			fr := pcm[j:min(j+320, len(pcm))]
			_ = d.Process(fr)
			done(len(fr))
			sent++
			if j%3200 == 0 {
				_ = d.Hypothesis()
			}
		}
		_, _ = d.End()
	}
}

// mediaLoop is one session's inbound path on a 20 ms ticker; it returns
// each frame's processing time and each tick's lateness, in ms.
func mediaLoop(b *testing.B, packets []fixtures.Packet, k int, stop <-chan struct{}) (frames, late []float64) {
	cfg := pipeline.DefaultConfig()
	cfg.Codec.DecodeRate = audio.SampleRate
	in, err := pipeline.New(cfg)
	if err != nil {
		b.Error(err)
		return nil, nil
	}
	emit := func(*turn.Event) {}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	start := time.Now()
	off := k * 7 % len(packets)
	for n := int64(0); ; n++ {
		select {
		case <-stop:
			return frames, late
		case <-t.C:
		}
		due := start.Add(time.Duration(n+1) * 20 * time.Millisecond)
		late = append(late, float64(time.Since(due).Microseconds())/1000)
		t0 := time.Now()
		i := (off + int(n)) % len(packets)
		lap := (off + int(n)) / len(packets)
		p := packets[i]
		_ = in.Push(p.Seq+uint16(lap*len(packets)), p.Timestamp+uint32(lap*len(packets)*audio.OpusFrame20), p.Payload, n*audio.OpusFrame20)
		if pcm, _, err := in.Pull(); err == nil {
			in.Analyse(pcm, n*audio.Frame20, false, emit)
		}
		frames = append(frames, float64(time.Since(t0).Microseconds())/1000)
		if d := time.Since(due); d > 20*time.Millisecond {
			// A stalled loop resynchronises, as the gateway's media loop does.
			n += int64(d / (20 * time.Millisecond))
		}
	}
}

// The separate-process arrangement: the benchmark binary re-executed with
// benchChildEnv set, under nice -n 10, reading frames from stdin.
const benchChildEnv = "VERA_SPHINX_BENCH_CHILD"

// startDecodeChild starts the worker process and the turns that feed it;
// the returned func waits for it and returns the samples it decoded.
func startDecodeChild(b *testing.B, turns int, clips [][]int16, stop <-chan struct{}, wg *sync.WaitGroup) func() int64 {
	b.Helper()
	cmd := exec.Command("nice", "-n", "10", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchChildEnv+"="+strconv.Itoa(turns))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Skip(err)
	}
	res := bufio.NewReader(out)
	if line, err := res.ReadString('\n'); err != nil || line != "ready\n" {
		b.Fatalf("decode child: %q %v", line, err)
	}
	frames := make(chan []byte, 4096)
	wg.Go(func() { // the one writer: frames of every turn, in order, until stop
		bw := bufio.NewWriter(in)
		defer in.Close() // the child stops at EOF and reports
		for {
			select {
			case <-stop:
				return
			case f := <-frames:
				_, _ = bw.Write(f)
				if len(frames) == 0 {
					_ = bw.Flush()
				}
			}
		}
	})
	for i := range turns {
		wg.Go(func() { feedChild(i, clips, stop, frames) })
	}
	return func() int64 {
		var r struct{ Samples int64 }
		err := json.NewDecoder(res).Decode(&r)
		_ = cmd.Wait()
		if err != nil {
			b.Errorf("decode child: %v", err)
		}
		return r.Samples
	}
}

// feedChild sends one turn's audio in real time: [turn u16][kind u8][n u16]
// then n samples; kind 0 = frame, 1 = end of clip.
func feedChild(k int, clips [][]int16, stop <-chan struct{}, frames chan<- []byte) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	start := time.Now()
	var sent int64
	for c := k; ; c++ {
		pcm := clips[c%len(clips)]
		for j := 0; j < len(pcm); j += 320 {
			select {
			case <-stop:
				return
			default:
			}
			for sent >= int64(time.Since(start)/(20*time.Millisecond)) {
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
			fr := pcm[j:min(j+320, len(pcm))]
			msg := make([]byte, 5+2*len(fr))
			binary.LittleEndian.PutUint16(msg, uint16(k))
			binary.LittleEndian.PutUint16(msg[3:], uint16(len(fr)))
			for i, v := range fr {
				binary.LittleEndian.PutUint16(msg[5+2*i:], uint16(v))
			}
			select {
			case frames <- msg:
			case <-stop:
				return
			}
			sent++
		}
		select {
		case frames <- []byte{byte(k), byte(k >> 8), 1, 0, 0}:
		case <-stop:
			return
		}
	}
}

// runDecodeChild is the worker process: it decodes every turn's frames on
// the pool's workers until stdin closes, then prints what it decoded.
func runDecodeChild() int {
	turns, _ := strconv.Atoi(os.Getenv(benchChildEnv))
	cfg := DefaultConfig()
	cfg.Pool, cfg.SafetyReserve = turns, 0
	cfg.Nice = 0 // the whole process already runs under nice -n 10
	p, err := NewPool(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer p.Close()
	var samples atomic.Int64
	var eof atomic.Bool // stdin closed: the window is over, stop decoding
	chans := make([]chan []int16, turns)
	var wg sync.WaitGroup
	for i := range turns {
		chans[i] = make(chan []int16, 1024)
		d, err := p.Acquire(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		wg.Go(func() {
			defer p.Release(d)
			open, n := false, 0
			for fr := range chans[i] {
				if eof.Load() {
					continue
				}
				if fr == nil {
					_, _ = d.End()
					open = false
					continue
				}
				if !open {
					_ = d.Start(SearchLM)
					open = true
				}
				_ = d.Process(fr)
				samples.Add(int64(len(fr)))
				if n++; n%10 == 0 {
					_ = d.Hypothesis()
				}
			}
		})
	}
	fmt.Println("ready") // models loaded: the parent starts the window now
	r := bufio.NewReaderSize(os.Stdin, 1<<16)
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		k, kind, n := binary.LittleEndian.Uint16(hdr[:]), hdr[2], binary.LittleEndian.Uint16(hdr[3:])
		buf := make([]byte, 2*int(n))
		if _, err := io.ReadFull(r, buf); err != nil {
			break
		}
		if int(k) >= turns {
			continue
		}
		if kind == 1 {
			chans[k] <- nil
			continue
		}
		fr := make([]int16, n)
		for i := range fr {
			fr[i] = int16(binary.LittleEndian.Uint16(buf[2*i:]))
		}
		chans[k] <- fr
	}
	got := samples.Load()
	eof.Store(true)
	for _, c := range chans {
		close(c)
	}
	wg.Wait()
	_ = json.NewEncoder(os.Stdout).Encode(struct{ Samples int64 }{got})
	return 0
}
