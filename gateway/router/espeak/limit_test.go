package espeak

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// espeakChildren lists this process's espeak-ng children with their nice
// values, from /proc.
func espeakChildren(t *testing.T) map[int]int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	out := map[int]int{}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open || s[open+1:close] != "espeak-ng" {
			continue
		}
		f := strings.Fields(s[close+1:])
		ppid, _ := strconv.Atoi(f[1])
		nice, _ := strconv.Atoi(f[16])
		if ppid == os.Getpid() {
			pid, _ := strconv.Atoi(s[:open-1])
			out[pid] = nice
		}
	}
	return out
}

// With one slot, a second synthesis waits while the first runs (and gives
// up with its context), and the running espeak-ng runs niced.
func TestConcurrentBoundAndNice(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cfg := DefaultConfig()
	cfg.Concurrent, cfg.Nice = 1, 7
	newSynth(t) // skips without espeak-ng
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inside := make(chan map[int]int, 1)
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		once := false
		first <- s.Speak(context.Background(), "The first sentence is being spoken now.", "", 16000, func([]int16) error {
			if !once {
				once = true
				inside <- espeakChildren(t)
				<-release // hold the only slot
			}
			return nil
		})
	}()
	kids := <-inside
	if len(kids) != 1 {
		t.Fatalf("espeak-ng children while the first speaks: %v, want one", kids)
	}
	for pid, nice := range kids {
		if base := selfNice(t); nice != min(19, base+cfg.Nice) {
			t.Errorf("espeak-ng %d runs at nice %d, want %d", pid, nice, base+cfg.Nice)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	emitted := false
	err = s.Speak(ctx, "A second sentence.", "", 16000, func([]int16) error { emitted = true; return nil })
	if !errors.Is(err, context.DeadlineExceeded) || emitted {
		t.Fatalf("second synthesis with the slot taken: err %v, emitted %v; want it to wait and give up", err, emitted)
	}
	if n := len(espeakChildren(t)); n != 1 {
		t.Fatalf("%d espeak-ng processes with one slot", n)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

func selfNice(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/stat")
	if err != nil {
		t.Skip(err)
	}
	s := string(b)
	n, _ := strconv.Atoi(strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[16])
	return n
}
