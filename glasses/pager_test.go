package glasses

import (
	"testing"

	"github.com/veraneural/vera-gateway/devices"
)

func key(k string) InputEvent { return InputEvent{Kind: devices.InputKeys, Key: k} }
func tap(target string) InputEvent {
	return InputEvent{Kind: devices.InputTap, Target: target}
}
func voice(p string) InputEvent { return InputEvent{Kind: devices.InputVoice, Phrase: p} }

func TestMapInput(t *testing.T) {
	tests := []struct {
		ev   InputEvent
		want Nav
	}{
		{key("ArrowDown"), NavNext}, {key("ArrowUp"), NavPrev}, {key("ArrowRight"), NavFocusNext}, {key("ArrowLeft"), NavFocusPrev},
		{key("Enter"), NavSelect}, {key("Escape"), NavBack}, {key("F5"), NavNone},
		{tap("next"), NavSelect}, {InputEvent{Kind: devices.InputTap, Gesture: "right"}, NavNext},
		{InputEvent{Kind: devices.InputTap, Gesture: "left"}, NavPrev}, {InputEvent{Kind: devices.InputTap, Gesture: "double"}, NavBack},
		{InputEvent{Kind: devices.InputSwipe, Gesture: "down"}, NavNext}, {InputEvent{Kind: devices.InputSwipe, Gesture: "up"}, NavPrev},
		{InputEvent{Kind: devices.InputSwipe, Gesture: "press"}, NavSelect},
		{voice("Next."), NavNext}, {voice("  go   back "), NavPrev}, {voice("OK"), NavSelect}, {voice("close"), NavBack}, {voice("banana"), NavNone},
	}
	for _, tc := range tests {
		if got := MapInput(tc.ev); got != tc.want {
			t.Errorf("MapInput(%+v) = %q, want %q", tc.ev, got, tc.want)
		}
	}
}

func TestPagerSafetyMeta(t *testing.T) {
	l, err := LayoutCard(mustSafety(t, threeResources()...), mustProfile(t, devices.MetaRayBanDisplay))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPager(l)
	steps := []struct {
		ev        InputEvent
		page      int
		focus     string
		action    string
		dismissed bool
	}{
		{key("Escape"), 1, "next", "", false},                  // sticky: back on page 1 never hides help
		{key("ArrowRight"), 1, "call:us-988", "", false},       // focus moves to Call
		{key("Enter"), 1, "call:us-988", "call:us-988", false}, // link chosen, card stays
		{key("ArrowLeft"), 1, "next", "", false},
		{key("Enter"), 2, "next", "", false}, // Next pages and refocuses Next
		{tap("text:us-ctl"), 2, "text:us-ctl", "text:us-ctl", false},
		{key("ArrowDown"), 3, "done", "", false},
		{key("ArrowDown"), 3, "done", "", false}, // no page 4
		{key("Escape"), 2, "next", "", false},    // back pages back
		{voice("next"), 3, "done", "", false},
		{tap("nonexistent"), 3, "done", "", false},
		{key("Enter"), 3, "done", "", true},   // explicit Done dismisses
		{key("ArrowUp"), 3, "done", "", true}, // closed stays closed
	}
	for i, s := range steps {
		o := p.Handle(s.ev)
		if o.Page != s.page || o.Focus != s.focus || o.Action != s.action || o.Dismissed != s.dismissed {
			t.Fatalf("step %d %+v: got %+v, want page %d focus %q action %q dismissed %v", i, s.ev, o, s.page, s.focus, s.action, s.dismissed)
		}
	}
}

func TestPagerPromptFocusAndVoice(t *testing.T) {
	c, err := NewPrompt("confirm-1", "Send message to Sam?", "Running late.",
		Action{ID: "send", Label: "Send", Voice: []string{"send it"}}, Action{ID: "keep", Label: "Don't send"})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := LayoutCard(c, mustProfile(t, devices.MetaRayBanDisplay))
	if err != nil {
		t.Fatal(err)
	}
	// Focus starts on the non-committing choice; Enter declines.
	p := NewPager(meta)
	if o := p.Handle(key("Enter")); o.Action != "keep" || !o.Dismissed {
		t.Fatalf("enter on initial focus: %+v", o)
	}
	// Committing needs an explicit move + select.
	p = NewPager(meta)
	if o := p.Handle(key("ArrowLeft")); o.Focus != "send" {
		t.Fatalf("focus: %+v", o)
	}
	if o := p.Handle(key("Enter")); o.Action != "send" {
		t.Fatalf("select send: %+v", o)
	}
	// Escape declines.
	p = NewPager(meta)
	if o := p.Handle(key("Escape")); o.Action != "keep" || !o.Dismissed {
		t.Fatalf("escape: %+v", o)
	}
	// Voice always accepted, here on a surface with buttons ...
	p = NewPager(meta)
	if o := p.Handle(voice("Send it!")); o.Action != "send" {
		t.Fatalf("voice on meta: %+v", o)
	}
	// ... and on G1 without buttons, where select cannot commit.
	g1, err := LayoutCard(c, mustProfile(t, devices.EvenG1))
	if err != nil {
		t.Fatal(err)
	}
	p = NewPager(g1)
	for range g1.Pages {
		p.Handle(InputEvent{Kind: devices.InputTap, Gesture: "press"})
	}
	if o := p.Handle(InputEvent{Kind: devices.InputTap, Gesture: "press"}); o.Action != "" || o.Dismissed {
		t.Fatalf("press on g1 prompt must not decide: %+v", o)
	}
	if o := p.Handle(voice("don't send")); o.Action != "keep" {
		t.Fatalf("voice decline on g1: %+v", o)
	}
}

func TestPagerNoButtonsSafety(t *testing.T) {
	l, err := LayoutCard(mustSafety(t, threeResources()...), mustProfile(t, devices.EvenG2))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPager(l)
	for i := 2; i <= len(l.Pages); i++ {
		if o := p.Handle(InputEvent{Kind: devices.InputSwipe, Gesture: "down"}); o.Page != i || !o.Changed {
			t.Fatalf("swipe to %d: %+v", i, o)
		}
	}
	if o := p.Handle(InputEvent{Kind: devices.InputTap, Gesture: "double"}); o.Dismissed || o.Page != len(l.Pages)-1 {
		t.Fatalf("double tap goes back, never dismisses safety from the middle: %+v", o)
	}
	if o := p.Handle(voice("done")); !o.Dismissed {
		t.Fatalf("voice done: %+v", o)
	}
}
