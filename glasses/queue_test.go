package glasses

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func caption(id, text string) Card { return Card{ID: id, Kind: KindCaption, Title: "Vera", Body: text} }

func TestQueueCaptionsCoalesceWithinThrottle(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	q := NewQueue(300*time.Millisecond, clk.now)
	if err := q.Push(caption("r1", "Hel")); err != nil {
		t.Fatal(err)
	}
	c, ok := q.Next()
	if !ok || c.Body != "Hel" {
		t.Fatalf("first caption: %v %v", c, ok)
	}
	for _, s := range []string{"Hello", "Hello th", "Hello there"} {
		clk.advance(50 * time.Millisecond)
		if err := q.Push(caption("r1", s)); err != nil {
			t.Fatal(err)
		}
		if _, ok := q.Next(); ok {
			t.Fatal("caption released inside the throttle")
		}
	}
	if d, ok := q.Wait(); !ok || d != 150*time.Millisecond {
		t.Fatalf("Wait = %v %v, want 150ms", d, ok)
	}
	clk.advance(150 * time.Millisecond)
	c, ok = q.Next()
	if !ok || c.Body != "Hello there" {
		t.Fatalf("coalesced caption = %q %v, want latest text", c.Body, ok)
	}
	if _, ok := q.Next(); ok {
		t.Fatal("coalesced captions were sent twice")
	}
}

func TestQueueSafetyPreemptsAndHolds(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	q := NewQueue(300*time.Millisecond, clk.now)
	_ = q.Push(caption("r1", "one"))
	if _, ok := q.Next(); !ok {
		t.Fatal("caption not sent")
	}
	// Inside the throttle window a caption, a prompt and then two safety cards arrive.
	clk.advance(10 * time.Millisecond)
	_ = q.Push(caption("r1", "one two"))
	prompt, err := NewPrompt("p1", "Send?", "", Action{ID: "s", Label: "Send"}, Action{ID: "n", Label: "Don't send"})
	if err != nil {
		t.Fatal(err)
	}
	_ = q.Push(prompt)
	s1 := mustSafety(t, res988)
	s1.ID = "safety-1"
	s2 := mustSafety(t, resSamaritans)
	s2.ID = "safety-2"
	_ = q.Push(s1)
	_ = q.Push(s2)
	// Safety goes out immediately, in order, ignoring the throttle.
	if d, ok := q.Wait(); !ok || d != 0 {
		t.Fatalf("Wait with safety pending = %v %v", d, ok)
	}
	for _, want := range []string{"safety-1", "safety-2"} {
		c, ok := q.Next()
		if !ok || c.ID != want {
			t.Fatalf("Next = %q %v, want %q", c.ID, ok, want)
		}
	}
	// While safety is shown, nothing else is released, however long we wait.
	clk.advance(10 * time.Second)
	_ = q.Push(caption("r1", "one two three"))
	if c, ok := q.Next(); ok {
		t.Fatalf("released %q over an active safety card", c.ID)
	}
	if _, ok := q.Wait(); ok {
		t.Fatal("Wait reports due work while safety is active")
	}
	if !q.SafetyActive() {
		t.Fatal("SafetyActive false")
	}
	q.Dismiss("safety-1")
	if _, ok := q.Next(); ok {
		t.Fatal("released while safety-2 still shown")
	}
	q.Dismiss("safety-2")
	// The prompt queued behind safety, then the coalesced caption after the throttle.
	if c, ok := q.Next(); !ok || c.ID != "p1" {
		t.Fatalf("after dismiss: %q %v, want prompt", c.ID, ok)
	}
	if _, ok := q.Next(); ok {
		t.Fatal("caption released inside throttle after prompt")
	}
	clk.advance(300 * time.Millisecond)
	if c, ok := q.Next(); !ok || c.Body != "one two three" {
		t.Fatalf("caption = %q %v", c.Body, ok)
	}
}

func TestQueueRejectsBadCards(t *testing.T) {
	q := NewQueue(0, nil)
	if err := q.Push(Card{Kind: KindCaption, Title: "x"}); err == nil {
		t.Error("empty caption accepted")
	}
	s := mustSafety(t, res988)
	s.ID = ""
	if err := q.Push(s); err == nil {
		t.Error("safety card without id accepted")
	}
	if _, ok := q.Wait(); ok {
		t.Error("empty queue has due work")
	}
}

func TestNewCaption(t *testing.T) {
	if _, err := NewCaption("", "Vera", "hi"); err == nil {
		t.Error("caption without id accepted")
	}
	c, err := NewCaption("reply-1", "Vera", "hello")
	if err != nil || c.Rank() != PriorityCaption {
		t.Fatalf("caption %+v %v", c, err)
	}
}
