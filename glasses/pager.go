package glasses

// The four keys every surface has: the input.key event's keys. A Meta
// web app sends them for the band's arrows, pinch and back gesture;
// other devices map their taps and swipes onto them client-side.
const (
	KeyNext   = "next"
	KeyPrev   = "prev"
	KeySelect = "select"
	KeyBack   = "back"
)

// Move is what one key does to a card on display (PageKey).
type Move struct {
	// Page is the 1-based page to show: the current one when the key
	// moves nothing.
	Page int
	// Done: the person closed a safety card (select on its last page),
	// the only way one leaves the surface.
	Done bool
	// Controls: the key reached a prompt's last page, where next and prev
	// move the focus between its controls and select activates the focused
	// one; the caller's consent flow decides (Page is unchanged).
	Controls bool
}

// PageKey is the one pager: it applies key to a card of kind with of
// pages, page shown (1-based), and says what to show.
//
//   - back goes to the previous page and on page 1 does nothing: a safety
//     card is sticky and back never decides a prompt.
//   - prev goes to the previous page (at most to page 1).
//   - next and select go to the next page; next on a safety card's last
//     page does nothing and select there is Done.
//   - On a prompt's last page next, prev and select are Controls.
//
// Any other key, or a card without pages, moves nothing.
func PageKey(kind Kind, page, of int, key string) Move {
	if of < 1 {
		return Move{Page: page}
	}
	page = min(max(page, 1), of)
	last := page == of
	switch {
	case key == KeyBack:
		return Move{Page: max(page-1, 1)}
	case kind == KindAction && last && (key == KeyNext || key == KeyPrev || key == KeySelect):
		return Move{Page: page, Controls: true}
	case key == KeyPrev:
		return Move{Page: max(page-1, 1)}
	case key == KeyNext:
		return Move{Page: min(page+1, of)}
	case key == KeySelect && last:
		return Move{Page: page, Done: true}
	case key == KeySelect:
		return Move{Page: page + 1}
	}
	return Move{Page: page}
}

// WithFocus returns p with the focus on control id when p carries that
// control (a prompt's last page), its buttons' focus rings moved to match;
// a page without it is returned as it is. p's ops are not modified.
func (p OpsPage) WithFocus(id string) OpsPage {
	has := false
	for _, c := range p.Controls {
		has = has || c.ID == id
	}
	if !has {
		return p
	}
	p.Focus = id
	ops := make([]Op, len(p.Ops))
	copy(ops, p.Ops)
	for i := range ops {
		if ops[i].Op == "button" && (ops[i].ID == ControlApprove || ops[i].ID == ControlDecline) {
			ops[i].Focus = ops[i].ID == id
		}
	}
	p.Ops = ops
	return p
}
