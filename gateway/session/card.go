package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/consent"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/safety"
)

// cardAcks tracks one safety card's acknowledgements; guarded by Session.mu.
type cardAcks struct {
	card     event.SafetyCard
	surfaces map[string]*surfaceAcks
}

type surfaceAcks struct {
	pages   []bool // acked, by page index
	timer   clock.Timer
	resends int
	timeout time.Duration
	kind    string // devices surface kind, for counters
}

// activeCard is the card a key press pages through, per surface.
type activeCard struct {
	card    event.SafetyCard
	page    map[string]int  // surface → 1-based page shown
	cleared map[string]bool // surfaces where the person closed it (Done)
}

// sendCard lays the assessment out for every visual surface and emits
// safety.card, arming the ack timers. It never drops a resource: a surface
// whose layout fails gets PlainLayout's pages, and if even that fails the
// card (with no pages) so the client draws the structured resources.
func (s *Session) sendCard(turnID string, a safety.Assessment) {
	s.mu.Lock()
	surfaces := append(s.surfaces[:0:0], s.surfaces...)
	profile := s.profile
	cardID := fmt.Sprintf("card_%s_%d", turnID, len(s.cards)+1)
	s.mu.Unlock()

	res := a.Resources
	if res == nil {
		res = []safety.Resource{}
	}
	card := event.SafetyCard{
		CardID: cardID, TurnID: turnID, Level: a.Level.String(), DisplayRequired: a.DisplayRequired,
		Source: string(a.Source), Resources: res, Surfaces: []event.CardSurface{},
		// Only a device that confirms renders can acknowledge pages.
		RequiresAck: len(surfaces) > 0 && profile.RenderConfirmation,
		MustSpeak:   profile.MustSpeakSafety(),
	}
	for _, sf := range surfaces {
		pages, err := s.deps.Layout.LayoutSafety(cardID, a, profile, sf)
		if err != nil {
			// A surface never goes without the card: the plain layout
			// (which accepts any resource) takes over.
			s.log_.Error("session: lay out safety card", "surface", sf.ID, "device", profile.ID, "err", err)
			if pages, err = (PlainLayout{}).LayoutSafety(cardID, a, profile, sf); err != nil {
				s.log_.Error("session: plain layout of safety card", "surface", sf.ID, "device", profile.ID, "err", err)
				pages = nil
			}
		}
		card.Surfaces = append(card.Surfaces, event.CardSurface{Surface: sf.ID, Profile: profile.ID,
			Width: sf.Width, Height: sf.Height, AckTimeoutMS: int64(profile.AckTimeoutMS), Pages: pages})
	}

	if o := s.deps.Observer; o != nil {
		// After the event is out (deferred unlock runs first).
		defer o.SafetyCard(s, card)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ca := &cardAcks{card: card, surfaces: map[string]*surfaceAcks{}}
	s.cards[cardID] = ca
	s.active = &activeCard{card: card, page: map[string]int{}, cleared: map[string]bool{}}
	if o := s.offer; o != nil {
		// The card covers the prompt; the prompt shows again once the
		// person closes the card (key), never before.
		clear(o.shown)
	}
	s.emitLocked(event.TypeSafetyCard, card)
	region := s.region
	for _, sf := range surfaces {
		s.deps.Counters.CardShown(a.Level, region, safety.SurfaceKind(sf.Kind))
	}
	timeout := time.Duration(profile.AckTimeoutMS) * time.Millisecond
	for _, cs := range card.Surfaces {
		n := len(cs.Pages)
		if n == 0 {
			n = 1
		}
		sa := &surfaceAcks{pages: make([]bool, n), timeout: timeout, kind: string(kindOf(surfaces, cs.Surface))}
		ca.surfaces[cs.Surface] = sa
		s.active.page[cs.Surface] = 1
		if timeout > 0 && card.RequiresAck {
			s.armAckLocked(cardID, cs.Surface, sa)
		}
	}
}

func (s *Session) armAckLocked(cardID, surface string, sa *surfaceAcks) {
	sa.timer = s.afterFuncLocked(sa.timeout, func() { s.ackTimeout(cardID, surface) })
}

// ackTimeout re-sends a card whose first page was not acknowledged on a
// surface and notifies the phone surface; it re-arms up to AckResends.
func (s *Session) ackTimeout(cardID, surface string) {
	s.mu.Lock()
	ca := s.cards[cardID]
	if ca == nil {
		s.mu.Unlock()
		return
	}
	sa := ca.surfaces[surface]
	if sa == nil || sa.pages[0] {
		s.mu.Unlock()
		return
	}
	sa.resends++
	card := ca.card
	card.Resend = sa.resends
	s.emitLocked(event.TypeSafetyCard, card)
	s.emitLocked(event.TypeNotice, event.Notice{Kind: "safety_unacknowledged", Surface: "phone", CardID: cardID,
		Text: "Your glasses did not confirm the safety card. The resources are shown here as well."})
	if sa.resends < s.cfg.AckResends {
		s.armAckLocked(cardID, surface, sa)
	}
	hook := s.deps.OnUnacked
	s.mu.Unlock()
	s.log_.Warn("session: safety card not acknowledged", "card", cardID, "surface", surface, "resend", card.Resend)
	if hook != nil {
		hook(s, card, surface)
	}
}

// Errors of display.ack and input.key.
var (
	ErrUnknownCard    = errors.New("session: unknown card")
	ErrUnknownSurface = errors.New("session: unknown surface")
	ErrBadPage        = errors.New("session: page out of range")
)

func (s *Session) ack(a *event.DisplayAck) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ca := s.cards[a.CardID]
	if ca == nil {
		return fmt.Errorf("%w %q", ErrUnknownCard, a.CardID)
	}
	sa := ca.surfaces[a.Surface]
	if sa == nil {
		return fmt.Errorf("%w %q for card %s", ErrUnknownSurface, a.Surface, a.CardID)
	}
	if a.Page > len(sa.pages) {
		return fmt.Errorf("%w: page %d of %d", ErrBadPage, a.Page, len(sa.pages))
	}
	if !sa.pages[0] && a.Page == 1 {
		lvl, _ := safety.ParseLevel(ca.card.Level)
		s.deps.Counters.CardAcked(lvl, s.region, safety.SurfaceKind(sa.kind))
	}
	sa.pages[a.Page-1] = true
	if a.Page == 1 && sa.timer != nil {
		s.stopTimerLocked(sa.timer)
		sa.timer = nil
	}
	if s.active != nil && s.active.card.CardID == a.CardID {
		s.active.page[a.Surface] = a.Page
	}
	return nil
}

// Acked reports, per surface, which pages of a card were acknowledged.
func (s *Session) Acked(cardID string) map[string][]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ca := s.cards[cardID]
	if ca == nil {
		return nil
	}
	out := map[string][]bool{}
	for id, sa := range ca.surfaces {
		out[id] = append([]bool(nil), sa.pages...)
	}
	return out
}

// key applies input.key. A safety card on the surface always takes the
// key first (a prompt never covers it): next/prev page it and emit
// display.card; select on the last page is Done and clears the surface
// (display.clear), elsewhere it pages forward; back goes to the previous
// page and, on page 1, does nothing (a safety card is sticky). Once the
// card is closed, the offered action's prompt shows and takes the keys:
// next/prev/select page through a longer prompt; on its last page next
// and prev move the focus between Approve and Decline, select activates
// the focused control (focus starts on Decline, so a stray select never
// approves) and back goes to the previous page without deciding.
func (s *Session) key(ctx context.Context, k *event.InputKey) error {
	s.mu.Lock()
	ac, o := s.active, s.offer
	surface := k.Surface
	if surface == "" {
		switch {
		case ac != nil && len(ac.card.Surfaces) > 0:
			surface = ac.card.Surfaces[0].Surface
		case len(s.surfaces) > 0:
			surface = s.surfaces[0].ID
		}
	}
	if ac != nil && !ac.cleared[surface] {
		if cardOn(ac.card, surface) {
			err := s.cardKeyLocked(ac, surface, k.Key)
			s.mu.Unlock()
			return err
		}
		if o == nil || len(o.st.promptPages(surface)) == 0 {
			s.mu.Unlock()
			return fmt.Errorf("%w %q", ErrUnknownSurface, surface)
		}
	}
	if o == nil {
		s.mu.Unlock()
		return nil
	}
	pages := o.st.promptPages(surface)
	if len(pages) == 0 {
		s.mu.Unlock()
		return fmt.Errorf("%w %q", ErrUnknownSurface, surface)
	}
	n, cur := len(pages), min(max(o.shown[surface], 1), len(pages))
	var decided *Decision
	switch {
	case k.Key == event.KeyBack:
		cur = max(cur-1, 1)
	case cur < n && k.Key == event.KeyPrev:
		cur = max(cur-1, 1)
	case cur < n: // next or select on an earlier page
		cur++
	default:
		r, err := o.ap.Key(k.Key, surface)
		if err != nil {
			s.mu.Unlock()
			if errors.Is(err, consent.ErrSettled) {
				return fmt.Errorf("%w %q", ErrUnknownAction, o.st.a.ID)
			}
			return fmt.Errorf("session: prompt key: %w", err)
		}
		if r.Decided {
			decided = &Decision{Approved: r.Status == consent.Approved, Via: ViaKey, Surface: surface}
		}
	}
	if decided == nil {
		o.shown[surface] = cur
		s.emitLocked(event.TypeDisplayCard, event.DisplayCard{CardID: promptCardID(o.st.a.ID), Kind: "prompt",
			Surface: surface, Page: focusPage(pages[cur-1], focusControl(o.ap))})
	}
	id := o.st.a.ID
	s.mu.Unlock()
	if decided != nil {
		return s.settleAction(ctx, id, *decided)
	}
	return nil
}

// cardKeyLocked pages the safety card on surface.
func (s *Session) cardKeyLocked(ac *activeCard, surface, key string) error {
	var cs *event.CardSurface
	for i := range ac.card.Surfaces {
		if ac.card.Surfaces[i].Surface == surface {
			cs = &ac.card.Surfaces[i]
		}
	}
	n := len(cs.Pages)
	if n == 0 {
		return nil
	}
	cur := ac.page[surface]
	next := cur
	switch key {
	case event.KeyNext:
		next = min(cur+1, n)
	case event.KeyPrev, event.KeyBack:
		next = max(cur-1, 1)
	case event.KeySelect:
		if cur == n {
			s.emitLocked(event.TypeDisplayClear, event.DisplayClear{CardID: ac.card.CardID, Surface: surface})
			ac.cleared[surface] = true
			if o := s.offer; o != nil {
				s.showPromptLocked(o, surface) // the prompt waited behind the card
			}
			return nil
		}
		next = cur + 1
	}
	if next == cur {
		return nil
	}
	ac.page[surface] = next
	s.emitLocked(event.TypeDisplayCard, event.DisplayCard{CardID: ac.card.CardID, Kind: "safety", Surface: surface, Page: cs.Pages[next-1]})
	return nil
}

func kindOf(list []devices.Surface, id string) devices.SurfaceKind {
	for _, sf := range list {
		if sf.ID == id {
			return sf.Kind
		}
	}
	return ""
}
