package glasses

import (
	"strings"

	"github.com/veraneural/vera-gateway/devices"
)

// Nav is a device-independent navigation intent.
type Nav string

const (
	NavNone      Nav = ""
	NavNext      Nav = "next"       // next page
	NavPrev      Nav = "prev"       // previous page
	NavFocusNext Nav = "focus_next" // move focus right in the control row
	NavFocusPrev Nav = "focus_prev" // move focus left in the control row
	NavSelect    Nav = "select"     // activate the focused control
	NavBack      Nav = "back"       // back / cancel
)

// InputEvent is one raw input from a device, as its adapter reports it.
type InputEvent struct {
	Kind devices.Input `json:"kind"`
	// Key is a DOM key name for keys input: ArrowLeft/Right/Up/Down, Enter,
	// Escape (Meta web apps map the band's back gesture to Escape).
	Key string `json:"key,omitempty"`
	// Target is the control id a tap landed on (Meta DAT button onClick).
	Target string `json:"target,omitempty"`
	// Gesture is a tap/swipe without a target: "left"/"right" (G1
	// touchbars), "up"/"down" (G2 swipes), "press", "double".
	Gesture string `json:"gesture,omitempty"`
	// Phrase is recognised speech for voice input.
	Phrase string `json:"phrase,omitempty"`
}

// MapInput maps a raw input to a navigation intent. Taps on a control id
// are resolved by the Pager (they select that control); voice phrases that
// name a prompt's action are resolved by the Pager too.
func MapInput(ev InputEvent) Nav {
	switch ev.Kind {
	case devices.InputKeys:
		switch ev.Key {
		case "ArrowRight":
			return NavFocusNext
		case "ArrowLeft":
			return NavFocusPrev
		case "ArrowDown", "PageDown":
			return NavNext
		case "ArrowUp", "PageUp":
			return NavPrev
		case "Enter", " ":
			return NavSelect
		case "Escape", "Backspace":
			return NavBack
		}
	case devices.InputTap:
		if ev.Target != "" {
			return NavSelect
		}
		switch ev.Gesture {
		case "right", "":
			return NavNext
		case "left":
			return NavPrev
		case "press":
			return NavSelect
		case "double":
			return NavBack
		}
	case devices.InputSwipe:
		switch ev.Gesture {
		case "down", "forward":
			return NavNext
		case "up", "backward":
			return NavPrev
		case "press":
			return NavSelect
		}
	case devices.InputVoice:
		switch normPhrase(ev.Phrase) {
		case "next", "next page", "more", "continue", "forward":
			return NavNext
		case "back", "previous", "previous page", "go back":
			return NavPrev
		case "select", "ok", "okay", "open":
			return NavSelect
		case "close", "done", "dismiss", "cancel":
			return NavBack
		}
	}
	return NavNone
}

func normPhrase(s string) string {
	return strings.Trim(strings.ToLower(NormalizeSpace(s)), ".!?,")
}

// Outcome is what the pager did with one input.
type Outcome struct {
	Page  int    `json:"page"`            // 1-based page now shown
	Focus string `json:"focus,omitempty"` // focused control id
	// Action is the id of a chosen prompt action or resource link
	// ("call:us-988"); empty when none was chosen.
	Action string `json:"action,omitempty"`
	// Dismissed is true when the person closed the card explicitly.
	Dismissed bool `json:"dismissed,omitempty"`
	// Changed is true when page or focus changed (the client needs a
	// "page" op).
	Changed bool `json:"changed,omitempty"`
}

// Pager is the per-card navigation state machine. It is not safe for
// concurrent use; the session that shows the card owns it.
//
// Safety cards are sticky: Back on the first page does nothing; only an
// explicit Done (select on the last page, or saying "done") dismisses
// them. On a prompt, Back (Escape, "cancel") is decline; nothing times out
// to approve.
type Pager struct {
	l     *Layout
	page  int // 0-based
	focus int
	done  bool
}

// NewPager starts on page 1 with the page's default focus (Next, or the
// prompt's non-committing choice).
func NewPager(l *Layout) *Pager {
	p := &Pager{l: l}
	p.focus = l.Pages[0].Focus
	return p
}

// Page is the current 1-based page.
func (p *Pager) Page() int { return p.page + 1 }

func (p *Pager) state() Outcome {
	o := Outcome{Page: p.page + 1, Dismissed: p.done}
	if c := p.l.Pages[p.page].Controls; p.focus >= 0 && p.focus < len(c) {
		o.Focus = c[p.focus].ID
	}
	return o
}

func (p *Pager) goTo(i int) Outcome {
	if i < 0 || i >= len(p.l.Pages) || i == p.page {
		return p.state()
	}
	p.page = i
	p.focus = p.l.Pages[i].Focus
	o := p.state()
	o.Changed = true
	return o
}

// Handle applies one input event.
func (p *Pager) Handle(ev InputEvent) Outcome {
	if p.done {
		return p.state()
	}
	card := p.l.Card
	if ev.Kind == devices.InputVoice {
		// Voice is always accepted, whatever the surface's buttons.
		phrase := normPhrase(ev.Phrase)
		for _, a := range card.Actions {
			for _, v := range append([]string{a.Label}, a.Voice...) {
				if phrase != "" && phrase == normPhrase(v) {
					o := p.state()
					o.Action = a.ID
					p.done = true
					o.Dismissed = true
					return o
				}
			}
		}
		switch phrase {
		case "done", "close", "dismiss", "cancel":
			return p.dismiss()
		}
	}
	nav := MapInput(ev)
	if ev.Kind == devices.InputTap && ev.Target != "" {
		ctl := p.l.Pages[p.page].Controls
		found := false
		for i, c := range ctl {
			if c.ID == ev.Target {
				p.focus, found = i, true
			}
		}
		if !found {
			return p.state()
		}
	}
	switch nav {
	case NavNext:
		return p.goTo(p.page + 1)
	case NavPrev:
		return p.goTo(p.page - 1)
	case NavFocusNext, NavFocusPrev:
		ctl := p.l.Pages[p.page].Controls
		if len(ctl) == 0 {
			// No control row: left/right page instead.
			if nav == NavFocusNext {
				return p.goTo(p.page + 1)
			}
			return p.goTo(p.page - 1)
		}
		f := p.focus
		if nav == NavFocusNext {
			f = min(f+1, len(ctl)-1)
		} else {
			f = max(f-1, 0)
		}
		o := p.state()
		if f != p.focus {
			p.focus = f
			o = p.state()
			o.Changed = true
		}
		return o
	case NavSelect:
		return p.selectFocused()
	case NavBack:
		if p.page > 0 {
			return p.goTo(p.page - 1)
		}
		if card.Kind == KindSafety {
			return p.state() // sticky: back never hides help
		}
		return p.dismiss()
	}
	return p.state()
}

// dismiss closes the card on an explicit request; a prompt closes by
// declining.
func (p *Pager) dismiss() Outcome {
	p.done = true
	o := p.state()
	o.Changed = true
	if p.l.Card.Kind == KindAction {
		for _, a := range p.l.Card.Actions {
			if a.Role == RoleDecline {
				o.Action = a.ID
			}
		}
	}
	return o
}

func (p *Pager) selectFocused() Outcome {
	pg := p.l.Pages[p.page]
	last := p.page == len(p.l.Pages)-1
	if p.focus < 0 || p.focus >= len(pg.Controls) {
		// No control row (G1, G2, Mentra): select pages forward and
		// closes a non-prompt card on its last page.
		if !last {
			return p.goTo(p.page + 1)
		}
		if p.l.Card.Kind == KindAction {
			return p.state() // a prompt is answered by voice here
		}
		p.done = true
		o := p.state()
		o.Changed = true
		return o
	}
	c := pg.Controls[p.focus]
	switch c.ID {
	case ControlNext:
		return p.goTo(p.page + 1)
	case ControlDone:
		p.done = true
		o := p.state()
		o.Changed = true
		return o
	}
	o := p.state()
	o.Action = c.ID
	if p.l.Card.Kind == KindAction {
		p.done = true
		o.Dismissed = true
	}
	return o
}
