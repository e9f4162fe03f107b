package safety

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a hand-moved Now: safety never imports gateway, so it does
// not use gateway/clock/clocktest; NewDisclosure takes the method value.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestDisclosureSchedule(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	d := NewDisclosure(clk.Now, 0)
	if d.Interval() != 3*time.Hour {
		t.Fatalf("interval = %v", d.Interval())
	}
	if !d.Due() || !d.NextDue().Equal(clk.Now()) {
		t.Fatal("must be due at session start")
	}
	text, ok := d.Take(SurfaceVoice)
	if !ok || text != DisclosureVoice {
		t.Fatalf("Take = %q, %v", text, ok)
	}
	if _, ok := d.Take(SurfaceHUD); ok {
		t.Fatal("delivered twice at session start")
	}
	clk.Advance(3*time.Hour - time.Second)
	if d.Due() {
		t.Fatal("due before 3 h")
	}
	clk.Advance(time.Second)
	if !d.Due() {
		t.Fatal("not due at 3 h")
	}
	d.MarkShown()
	if want := clk.Now().Add(3 * time.Hour); !d.NextDue().Equal(want) {
		t.Fatalf("NextDue = %v, want %v", d.NextDue(), want)
	}
	// Intervals above the legal maximum are clamped; shorter ones (minors) kept.
	if NewDisclosure(clk.Now, 5*time.Hour).Interval() != MaxDisclosureInterval {
		t.Error("interval above 3 h not clamped")
	}
	if NewDisclosure(clk.Now, time.Hour).Interval() != time.Hour {
		t.Error("1 h interval not kept")
	}
}

func TestDisclosureTakeOnceUnderRace(t *testing.T) {
	d := NewDisclosure((&fakeClock{}).Now, time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok := d.Take(SurfaceScreen); ok {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if n != 1 {
		t.Fatalf("delivered %d times", n)
	}
}

func TestDisclosureTexts(t *testing.T) {
	for _, k := range []SurfaceKind{SurfaceHUD, SurfaceScreen, SurfaceVoice, "unknown"} {
		s := strings.ToLower(DisclosureText(k))
		if !strings.Contains(s, "ai") || !(strings.Contains(s, "not a person") || strings.Contains(s, "not a human")) {
			t.Errorf("%s: %q does not say AI and not human", k, s)
		}
		if k != SurfaceHUD && k != SurfaceVoice && !(strings.Contains(s, "therapist") && strings.Contains(s, "emergency")) {
			t.Errorf("%s: %q does not say not a therapist or emergency service", k, s)
		}
	}
	// The spoken text is short (its length in speech is measured with
	// espeak-ng in gateway/voice) and still names what VERA is not.
	if v := strings.ToLower(DisclosureVoice); !strings.Contains(v, "vera") || !strings.Contains(v, "therapist") || len(strings.Fields(v)) > 12 {
		t.Errorf("voice disclosure %q: want VERA named, not a therapist, at most 12 words", DisclosureVoice)
	}
	if n := len(DisclosureHUD); n > 38 {
		t.Errorf("HUD disclosure is %d chars, more than one Meta display line (38)", n)
	}
	if DisclosureText("unknown") != DisclosureScreen {
		t.Error("unknown surface must get the full text")
	}
}
