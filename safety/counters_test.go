package safety

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// sinkLog is a CounterSink that records every Inc as "event{labels}".
type sinkLog struct {
	mu  sync.Mutex
	got map[string]float64
}

func (l *sinkLog) Inc(event, level, region, surface string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string]float64{}
	}
	l.got[event+"{level="+level+",region="+region+",surface="+surface+"}"]++
}

func TestCounters(t *testing.T) {
	sink := &sinkLog{}
	c := NewCounters(sink)
	c.CardShown(LevelCrisis, "us", SurfaceHUD)
	c.CardShown(LevelCrisis, "US", SurfaceHUD)
	c.CardSpoken(LevelCrisis, "US", SurfaceVoice)
	c.CardAcked(LevelElevated, "Jane Doe <jane@example.com>", "toaster")
	c.CardShown(Level(9), "", SurfaceScreen)

	want := map[string]float64{
		"shown{level=crisis,region=US,surface=hud}":          2,
		"spoken{level=crisis,region=US,surface=voice}":       1,
		"acked{level=elevated,region=unknown,surface=other}": 1,
		"shown{level=unknown,region=unknown,surface=screen}": 1,
	}
	if len(sink.got) != len(want) {
		t.Errorf("sink got %v, want %v", sink.got, want)
	}
	for k, v := range want {
		if sink.got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, sink.got[k], v, sink.got)
		}
	}
	snap := c.Snapshot()
	if snap.Totals[EventShown] != 3 || snap.Totals[EventSpoken] != 1 || snap.Totals[EventAcked] != 1 {
		t.Errorf("totals = %v", snap.Totals)
	}
	b, _ := json.Marshal(snap)
	for _, leak := range []string{"jane", "Jane", "example.com", "toaster"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("snapshot leaks %q: %s", leak, b)
		}
		for k := range sink.got {
			if strings.Contains(k, leak) {
				t.Errorf("sink label leaks %q: %s", leak, k)
			}
		}
	}
	if snap.Rows[0].Event != EventAcked {
		t.Errorf("rows not sorted: %+v", snap.Rows)
	}
}

func TestCountersNilAndConcurrent(t *testing.T) {
	var nilC *Counters
	nilC.CardShown(LevelCrisis, "US", SurfaceHUD)
	if s := nilC.Snapshot(); len(s.Rows) != 0 {
		t.Fatal("nil counters must be inert")
	}
	c := NewCounters(nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.CardShown(LevelElevated, "GB", SurfaceScreen)
			}
		}()
	}
	wg.Wait()
	if n := c.Snapshot().Totals[EventShown]; n != 800 {
		t.Fatalf("shown = %d, want 800", n)
	}
}

// A partner's view counts into the deployment's totals and the sink (no
// partner label) and into that partner's own report only.
func TestCountersPartnerViews(t *testing.T) {
	sink := &sinkLog{}
	c := NewCounters(sink)
	c.Partner("a").CardShown(LevelCrisis, "US", SurfaceHUD)
	c.Partner("b").CardShown(LevelCrisis, "US", SurfaceHUD)
	c.Partner("b").CardAcked(LevelCrisis, "US", SurfaceHUD)
	if got := sink.got["shown{level=crisis,region=US,surface=hud}"]; got != 2 {
		t.Errorf("sink shown = %v, want 2 (all: %v)", got, sink.got)
	}
	if tot := c.Snapshot().Totals; tot[EventShown] != 2 || tot[EventAcked] != 1 {
		t.Errorf("deployment totals %v", tot)
	}
	if a := c.SnapshotFor("a").Totals; a[EventShown] != 1 || a[EventAcked] != 0 {
		t.Errorf("partner a's report %v", a)
	}
	var nilC *Counters
	nilC.Partner("a").CardShown(LevelCrisis, "US", SurfaceHUD) // inert
}
