//go:build linux

package safety

import (
	"runtime"
	"sort"
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
