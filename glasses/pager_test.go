package glasses

import "testing"

func TestPageKey(t *testing.T) {
	tests := []struct {
		name     string
		kind     Kind
		page, of int
		key      string
		want     Move
	}{
		{"safety next", KindSafety, 1, 3, KeyNext, Move{Page: 2}},
		{"safety next on the last page stays", KindSafety, 3, 3, KeyNext, Move{Page: 3}},
		{"safety prev", KindSafety, 2, 3, KeyPrev, Move{Page: 1}},
		{"safety prev on page 1 stays", KindSafety, 1, 3, KeyPrev, Move{Page: 1}},
		{"safety back", KindSafety, 3, 3, KeyBack, Move{Page: 2}},
		{"safety back on page 1 is sticky", KindSafety, 1, 3, KeyBack, Move{Page: 1}},
		{"safety select pages forward", KindSafety, 1, 3, KeySelect, Move{Page: 2}},
		{"safety select on the last page is done", KindSafety, 3, 3, KeySelect, Move{Page: 3, Done: true}},
		{"safety one page: select is done", KindSafety, 1, 1, KeySelect, Move{Page: 1, Done: true}},
		{"safety one page: back is sticky", KindSafety, 1, 1, KeyBack, Move{Page: 1}},
		{"no pages: nothing", KindSafety, 1, 0, KeySelect, Move{Page: 1}},
		{"unknown key: nothing", KindSafety, 2, 3, "enter", Move{Page: 2}},
		{"prompt next on an earlier page", KindAction, 1, 2, KeyNext, Move{Page: 2}},
		{"prompt select on an earlier page pages, never decides", KindAction, 1, 2, KeySelect, Move{Page: 2}},
		{"prompt prev on an earlier page", KindAction, 1, 2, KeyPrev, Move{Page: 1}},
		{"prompt next on the last page: controls", KindAction, 2, 2, KeyNext, Move{Page: 2, Controls: true}},
		{"prompt prev on the last page: controls", KindAction, 2, 2, KeyPrev, Move{Page: 2, Controls: true}},
		{"prompt select on the last page: controls", KindAction, 2, 2, KeySelect, Move{Page: 2, Controls: true}},
		{"prompt back on the last page pages back, never decides", KindAction, 2, 2, KeyBack, Move{Page: 1}},
		{"prompt back on a one-page prompt: nothing", KindAction, 1, 1, KeyBack, Move{Page: 1}},
		{"prompt not yet shown starts on page 1", KindAction, 0, 2, KeyNext, Move{Page: 2}},
		{"page past the end is the last", KindSafety, 9, 3, KeyPrev, Move{Page: 2}},
	}
	for _, tt := range tests {
		if got := PageKey(tt.kind, tt.page, tt.of, tt.key); got != tt.want {
			t.Errorf("%s: PageKey(%s, %d, %d, %q) = %+v, want %+v", tt.name, tt.kind, tt.page, tt.of, tt.key, got, tt.want)
		}
	}
}

// WithFocus moves the focus ring between a prompt's controls without
// touching the page it was given.
func TestWithFocus(t *testing.T) {
	p := OpsPage{Controls: []Control{{ID: ControlApprove}, {ID: ControlDecline}}, Focus: ControlDecline,
		Ops: []Op{{Op: "text"}, {Op: "button", ID: ControlApprove}, {Op: "button", ID: ControlDecline, Focus: true}}}
	got := p.WithFocus(ControlApprove)
	if got.Focus != ControlApprove || !got.Ops[1].Focus || got.Ops[2].Focus {
		t.Fatalf("focus on approve: %+v", got)
	}
	if p.Focus != ControlDecline || p.Ops[1].Focus || !p.Ops[2].Focus {
		t.Fatalf("the original page changed: %+v", p)
	}
	next := OpsPage{Controls: []Control{{ID: ControlNext}}, Focus: ControlNext}
	if got := next.WithFocus(ControlApprove); got.Focus != ControlNext {
		t.Fatalf("a page without the control: %+v", got)
	}
}
