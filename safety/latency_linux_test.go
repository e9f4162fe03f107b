//go:build linux

package safety

import (
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// clockThreadCPUTime is CLOCK_THREAD_CPUTIME_ID (linux/time.h).
const clockThreadCPUTime = 3

// threadCPU returns the CPU time the calling OS thread has used, in ns.
func threadCPU(tb testing.TB) int64 {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		tb.Fatalf("clock_gettime: %v", e)
	}
	return ts.Nano()
}

// BenchmarkDetectCPU times every utterance of the development corpus once,
// in the CPU time of the benchmark's own thread (CLOCK_THREAD_CPUTIME_ID),
// and reports its median, p99 and maximum. Unlike wall time it does not
// count the time spent waiting for a core, which on a shared, overloaded
// machine is most of a wall-clock p99; it still counts everything the
// detector does, cold caches included, on the first and only run of each
// utterance per pass. The clock read itself (one system call, about
// 0.3–1 µs) is included, so the figures are an upper bound.
func BenchmarkDetectCPU(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := NewDetector()
	var texts []string
	for _, f := range []string{"corpus-dev.jsonl", "corpus-train.jsonl"} {
		for _, s := range loadSamples(b, f) {
			texts = append(texts, s.Text)
		}
	}
	var cpu []int64
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t0 := threadCPU(b)
		d.Detect(texts[i%len(texts)])
		cpu = append(cpu, threadCPU(b)-t0)
		i++
	}
	sort.Slice(cpu, func(a, c int) bool { return cpu[a] < cpu[c] })
	q := func(p float64) float64 { return float64(cpu[int(p*float64(len(cpu)-1))]) }
	b.ReportMetric(q(0.5), "cpu-p50-ns")
	b.ReportMetric(q(0.99), "cpu-p99-ns")
	b.ReportMetric(q(1), "cpu-max-ns")
}

// BenchmarkLengthCPU is BenchmarkDetectCPU broken down by
// utterance length (whitespace words), to tell what makes the tail: each
// utterance is timed once per pass, cold as there, and also as its best of
// all passes (its own cost, with the machine's noise taken out). Metrics:
// cpu-p50/p99 and best-p50/p99 per bucket ("w0-9": up to 9 words, …), over
// b.N passes of the development and training corpora (-benchtime 3x is
// enough; its name keeps it out of -bench BenchmarkDetectCPU).
func BenchmarkLengthCPU(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := NewDetector()
	var texts []string
	for _, f := range []string{"corpus-dev.jsonl", "corpus-train.jsonl"} {
		for _, s := range loadSamples(b, f) {
			texts = append(texts, s.Text)
		}
	}
	buckets := []struct {
		name   string
		lo, hi int
	}{{"w0-9", 0, 9}, {"w10-14", 10, 14}, {"w15-19", 15, 19}, {"w20-24", 20, 24}, {"w25+", 25, 1 << 30}}
	bucketOf := make([]int, len(texts))
	for i, t := range texts {
		n := len(strings.Fields(t))
		for k, bk := range buckets {
			if n >= bk.lo && n <= bk.hi {
				bucketOf[i] = k
			}
		}
	}
	best := make([]int64, len(texts))
	for i := range best {
		best[i] = 1 << 62
	}
	cold := make([][]int64, len(buckets))
	for b.Loop() {
		for i, t := range texts {
			t0 := threadCPU(b)
			d.Detect(t)
			c := threadCPU(b) - t0
			cold[bucketOf[i]] = append(cold[bucketOf[i]], c)
			best[i] = min(best[i], c)
		}
	}
	q := func(xs []int64, p float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		sort.Slice(xs, func(a, c int) bool { return xs[a] < xs[c] })
		return float64(xs[int(p*float64(len(xs)-1))])
	}
	bests := make([][]int64, len(buckets))
	for i, c := range best {
		bests[bucketOf[i]] = append(bests[bucketOf[i]], c)
	}
	for k, bk := range buckets {
		b.ReportMetric(float64(len(bests[k])), "n-"+bk.name)
		b.ReportMetric(q(cold[k], 0.5), "cpu-p50-ns-"+bk.name)
		b.ReportMetric(q(cold[k], 0.99), "cpu-p99-ns-"+bk.name)
		b.ReportMetric(q(bests[k], 0.5), "best-p50-ns-"+bk.name)
		b.ReportMetric(q(bests[k], 0.99), "best-p99-ns-"+bk.name)
	}
}
