package session

import (
	"errors"
	"fmt"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/consent"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/glasses"
)

// Prompt control ids on the last page of every prompt.
const (
	ControlApprove = "approve"
	ControlDecline = "decline"
)

// promptTitle is the title of a prompt whose action has none.
const promptTitle = "Go ahead?"

func promptText(a Action) (title, body string) {
	title = NormalizeTitle(a.Title)
	if title == "" {
		title = promptTitle
	}
	return title, NormalizeTitle(a.Summary)
}

// LayoutPrompt implements PromptLayout: the action's title on every page,
// its summary wrapped to the surface's budget, and on the last page the
// Approve and Decline controls with focus on Decline.
func (PlainLayout) LayoutPrompt(cardID string, a Action, _ devices.Profile, sf devices.Surface) ([]glasses.OpsPage, error) {
	budget := sf.TextBudget
	if budget.LinesPerPage < 2 || budget.CharsPerLine < 8 {
		return nil, fmt.Errorf("session: layout prompt %s: text budget %+v too small", sf.ID, budget)
	}
	title, body := promptText(a)
	lines := wrap(nil, body, budget.CharsPerLine)
	if !sf.Buttons {
		// No buttons: the card says what to say (keys still work).
		lines = append(lines, wrap(nil, `Say "yes" or "no".`, budget.CharsPerLine)...)
	}
	var pages [][]string
	for len(lines) > 0 {
		n := min(len(lines), budget.LinesPerPage)
		pages = append(pages, lines[:n])
		lines = lines[n:]
	}
	if len(pages) == 0 {
		pages = [][]string{{}}
	}
	out := make([]glasses.OpsPage, len(pages))
	for i, pl := range pages {
		p := glasses.OpsPage{N: i + 1, Of: len(pages), Title: title, Lines: append([]string{}, pl...),
			Ops: plainOps(sf, title, pl, i+1, len(pages))}
		if sf.Buttons {
			p.Ops = p.Ops[:len(p.Ops)-1] // plainOps' Next/Done button
		}
		if i == len(pages)-1 {
			p.Controls = []glasses.Control{{ID: ControlApprove, Label: "Approve", Role: glasses.RoleCommit},
				{ID: ControlDecline, Label: "Decline", Role: glasses.RoleDecline}}
			p.Focus = ControlDecline
			if sf.Buttons {
				m, w := sf.MarginPx, (sf.Width-3*sf.MarginPx)/2
				y := sf.Height - m - sf.ButtonRowPx
				p.Ops = append(p.Ops,
					glasses.Op{Op: "button", X: m, Y: y, W: w, H: sf.ButtonRowPx, R: sf.ButtonRowPx / 3, Text: "Approve",
						Px: sf.Fonts.BodyPx, Color: "#F1F3F4", Fill: "#2B2F38", ID: ControlApprove},
					glasses.Op{Op: "button", X: 2*m + w, Y: y, W: w, H: sf.ButtonRowPx, R: sf.ButtonRowPx / 3, Text: "Decline",
						Px: sf.Fonts.BodyPx, Color: "#F1F3F4", Fill: "#2B2F38", ID: ControlDecline, Focus: true})
			}
		} else {
			p.Controls = []glasses.Control{{ID: "next", Label: "Next", Role: "next"}}
			p.Focus = "next"
			if sf.Buttons {
				m := sf.MarginPx
				p.Ops = append(p.Ops, glasses.Op{Op: "button", X: m, Y: sf.Height - m - sf.ButtonRowPx, W: sf.Width - 2*m,
					H: sf.ButtonRowPx, R: sf.ButtonRowPx / 3, Text: "Next", Px: sf.Fonts.BodyPx, Color: "#F1F3F4",
					Fill: "#2B2F38", ID: "next", Focus: true})
			}
		}
		out[i] = p
	}
	return out, nil
}

// LayoutPrompt implements PromptLayout with the glasses package's prompt
// card (glasses.NewPrompt): real font metrics, verb controls on the last
// page, focus on Decline; on a surface without buttons the card says what
// to say.
//
// A title too long for the surface's title line (Even G1, Mentra) moves
// into the body under the short title "Go ahead?": nothing is dropped.
func (g *GlassesLayout) LayoutPrompt(cardID string, a Action, p devices.Profile, sf devices.Surface) ([]glasses.OpsPage, error) {
	title, body := promptText(a)
	pages, err := g.layoutPrompt(cardID, title, body, p, sf)
	if err != nil && errors.Is(err, glasses.ErrTitleTooLong) && title != promptTitle {
		pages, err = g.layoutPrompt(cardID, promptTitle, title+"\n\n"+body, p, sf)
	}
	return pages, err
}

func (g *GlassesLayout) layoutPrompt(cardID, title, body string, p devices.Profile, sf devices.Surface) ([]glasses.OpsPage, error) {
	card, err := glasses.NewPrompt(cardID, title, body,
		glasses.Action{ID: ControlApprove, Label: "Approve", Voice: []string{"yes"}},
		glasses.Action{ID: ControlDecline, Label: "Decline", Voice: []string{"no"}})
	if err != nil {
		return nil, fmt.Errorf("session: prompt card %s: %w", cardID, err)
	}
	return g.layout(card, p, sf)
}

// showPromptLocked shows the offer's prompt on surface with display.card
// (kind "prompt") unless a safety card is on it: a prompt never covers a
// safety card; it shows once the card is closed.
func (s *Session) showPromptLocked(o *offer, surface string) {
	if ac := s.active; ac != nil && !ac.cleared[surface] && cardOn(ac.card, surface) {
		return
	}
	pages := o.st.promptPages(surface)
	if len(pages) == 0 {
		return
	}
	n := min(max(o.shown[surface], 1), len(pages))
	o.shown[surface] = n
	s.emitLocked(event.TypeDisplayCard, event.DisplayCard{CardID: promptCardID(o.st.a.ID), Kind: "prompt", Surface: surface,
		Page: focusPage(pages[n-1], focusControl(o.ap))})
}

func (st *actionState) promptPages(surface string) []glasses.OpsPage {
	for _, cs := range st.prompt {
		if cs.Surface == surface {
			return cs.Pages
		}
	}
	return nil
}

func cardOn(c event.SafetyCard, surface string) bool {
	for _, cs := range c.Surfaces {
		if cs.Surface == surface {
			return true
		}
	}
	return false
}

func focusControl(ap *consent.Approval) string {
	if ap.Focus() == consent.FocusApprove {
		return ControlApprove
	}
	return ControlDecline
}

// focusPage returns p with focus on control id when p carries the prompt's
// controls (the last page); other pages keep their own focus.
func focusPage(p glasses.OpsPage, id string) glasses.OpsPage {
	has := false
	for _, c := range p.Controls {
		has = has || c.ID == id
	}
	if !has {
		return p
	}
	p.Focus = id
	ops := make([]glasses.Op, len(p.Ops))
	copy(ops, p.Ops)
	for i := range ops {
		if ops[i].Op == "button" && (ops[i].ID == ControlApprove || ops[i].ID == ControlDecline) {
			ops[i].Focus = ops[i].ID == id
		}
	}
	p.Ops = ops
	return p
}

// transportEventLocked follows what a voice transport reports through
// Emit: speech and reply audio mark the session as spoken, and the
// offer's answer window waits while the person speaks (until their words
// are known) or the question is still playing, and restarts when it has
// been heard.
func (s *Session) transportEventLocked(t event.Type, payload any) {
	var turnID string
	switch p := payload.(type) {
	case event.ReplyAudio:
		turnID = p.TurnID
	case *event.ReplyAudio:
		turnID = p.TurnID
	}
	switch t {
	case event.TypeSpeechStarted, event.TypeSpeechStopped, event.TypeReplyAudioStarted, event.TypeReplyAudioStopped:
		s.audio = true
	default:
		return
	}
	o := s.offer
	if o == nil {
		return
	}
	switch {
	case t == event.TypeSpeechStarted, t == event.TypeReplyAudioStarted && turnID == o.turnID:
		o.ap.Hold()
		s.stopTimerLocked(o.silence)
		o.silence = nil
	case t == event.TypeSpeechStopped:
		// The person spoke: the window stays held until their words are
		// known (SubmitVoiceTurn) or the transport says there were none
		// (NothingHeard). A recogniser slower than the window must not
		// turn a timely yes into silence.
	case t == event.TypeReplyAudioStopped && turnID == o.turnID:
		o.ap.Heard()
		s.armSilenceLocked(o)
	}
}

// NothingHeard tells the session that the person's speech in turnID gave
// no words (an empty or failed transcript): an offer's answer window,
// held since the speech started, restarts from now. Voice transports call
// it for every speech turn they do not submit.
func (s *Session) NothingHeard(turnID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.offer
	if o == nil {
		return
	}
	o.ap.Heard()
	s.armSilenceLocked(o)
}
