package clocktest_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func received(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestTimerFiresOnlyWhenAdvanced(t *testing.T) {
	c := clocktest.NewClock(t0)
	tm, ch := c.NewTimer(time.Second)
	c.Advance(999 * time.Millisecond)
	if _, ok := received(ch); ok {
		t.Fatal("fired early")
	}
	c.Advance(time.Millisecond)
	if v, ok := received(ch); !ok || !v.Equal(t0.Add(time.Second)) {
		t.Fatalf("fired %v %v, want at %v", v, ok, t0.Add(time.Second))
	}
	if tm.Stop() {
		t.Fatal("Stop of a fired timer reports it stopped it")
	}
	if tm.Reset(time.Minute) {
		t.Fatal("Reset of a fired timer reports it was pending")
	}
	if !tm.Stop() {
		t.Fatal("Stop of a re-armed timer must report it stopped it")
	}
	c.Advance(time.Hour)
	if _, ok := received(ch); ok {
		t.Fatal("a stopped timer fired")
	}
	if _, ch := c.NewTimer(0); !isReady(ch) {
		t.Fatal("NewTimer(0) must fire at once")
	}
	if c.Since(t0) != time.Hour+time.Second {
		t.Fatalf("Since = %v", c.Since(t0))
	}
}

func isReady(ch <-chan time.Time) bool { _, ok := received(ch); return ok }

func TestTickerDropsMissedTicks(t *testing.T) {
	c := clocktest.NewClock(t0)
	tk, ch := c.NewTicker(10 * time.Millisecond)
	c.Advance(35 * time.Millisecond)
	if !isReady(ch) || isReady(ch) {
		t.Fatal("a slow reader gets one tick, the missed ones are dropped")
	}
	if a := c.Armed(); len(a) != 1 || !a[0].At.Equal(t0.Add(40*time.Millisecond)) {
		t.Fatalf("next tick %v, want at +40ms", a)
	}
	c.Advance(5 * time.Millisecond)
	if !isReady(ch) {
		t.Fatal("no tick at +40ms")
	}
	tk.Reset(time.Second)
	c.Advance(999 * time.Millisecond)
	if isReady(ch) {
		t.Fatal("tick before the reset period")
	}
	tk.Stop()
	c.Advance(time.Hour)
	if isReady(ch) || c.Pending() != 0 {
		t.Fatal("a stopped ticker ticked")
	}
}

func TestAfterFuncsRunInDeadlineOrder(t *testing.T) {
	c := clocktest.NewClock(t0)
	var got []string
	c.AfterFunc(3*time.Second, func() { got = append(got, "c") })
	c.AfterFunc(time.Second, func() {
		got = append(got, "a:"+c.Since(t0).String())
		// Armed by a callback: fires on a later Advance.
		c.AfterFunc(0, func() { got = append(got, "later") })
	})
	stopped := c.AfterFunc(2*time.Second, func() { got = append(got, "b") })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending AfterFunc")
	}
	c.Advance(5 * time.Second)
	if want := []string{"a:5s", "c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	c.Advance(0)
	if got[len(got)-1] != "later" || c.Pending() != 0 {
		t.Fatalf("ran %v, pending %d", got, c.Pending())
	}
}

// TestWaitArmedAndSleep: a goroutine sleeping on the clock is seen armed,
// and wakes when the test advances past its deadline.
func TestWaitArmedAndSleep(t *testing.T) {
	c := clocktest.NewClock(t0)
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(context.Background(), c, time.Minute) }()
	a := c.WaitArmed(t, func(a clocktest.Armed) bool { return a.D == time.Minute })
	if !a.At.Equal(t0.Add(time.Minute)) {
		t.Fatalf("armed %+v", a)
	}
	c.Advance(time.Minute)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- clock.Sleep(ctx, c, time.Hour) }()
	c.WaitArmed(t, func(a clocktest.Armed) bool { return a.D == time.Hour })
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("cancelled sleep = %v", err)
	}
	if c.Pending() != 0 {
		t.Fatalf("a cancelled sleep left its timer armed: %v", c.Armed())
	}
}

// TestRealClock: Real satisfies the interface with the wall clock; its
// timers are time's own.
func TestRealClock(t *testing.T) {
	var c clock.Clock = clock.OrReal(nil)
	if _, ok := c.(clock.Real); !ok {
		t.Fatalf("OrReal(nil) = %T", c)
	}
	tm, ch := c.NewTimer(time.Millisecond)
	<-ch
	if tm.Stop() {
		t.Fatal("Stop after fire")
	}
	tk, tch := c.NewTicker(time.Millisecond)
	<-tch
	tk.Stop()
	fired := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(fired) })
	<-fired
}
