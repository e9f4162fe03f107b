package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/consent"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// cards is the safety-card part: every card sent, its acknowledgements
// per surface and page, and the card on display that input.key pages.
// Lock order: the offers' lock first (a card covers a prompt, closing it
// uncovers one), then this one, then the timers' and the events'.
type cards struct {
	mu     sync.Mutex // mu guards the fields below
	byID   map[string]*cardAcks
	active *activeCard // the card on display for input.key
}

// cardAcks tracks one safety card's acknowledgements; guarded by cards.mu.
type cardAcks struct {
	card     event.SafetyCard
	surfaces map[string]*surfaceAcks
}

type surfaceAcks struct {
	pages   []bool // acked, by page index
	timer   Timer
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
// whose layout fails gets the glasses engine's plain fallback pages, and if
// even that fails the card (with no pages) so the client draws the
// structured resources.
func (s *Session) sendCard(turnID string, a safety.Assessment) {
	d := s.device()
	surfaces, profile := d.surfaces, d.profile
	s.cards.mu.Lock()
	cardID := fmt.Sprintf("card_%s_%d", turnID, len(s.cards.byID)+1)
	s.cards.mu.Unlock()

	res := a.Resources
	if res == nil {
		res = []safety.Resource{}
	}
	card := event.SafetyCard{
		CardID: cardID, TurnID: turnID, Level: safety.ShownLevel(a.Level), DisplayRequired: a.DisplayRequired,
		Source: a.Source, Resources: res, Surfaces: []event.CardSurface{},
		// Only a device that confirms renders can acknowledge pages.
		RequiresAck: len(surfaces) > 0 && profile.RenderConfirmation,
		MustSpeak:   profile.MustSpeakSafety(),
	}
	for _, sf := range surfaces {
		pages, err := s.deps.Layout.SafetyPages(cardID, a.Resources, profile.ID, sf)
		if err != nil {
			// The engine's plain fallback drew the pages, or (pages nil)
			// the client draws the structured resources: never no card.
			s.log_.Error("session: lay out safety card", "surface", sf.ID, "device", profile.ID, "err", err)
		}
		card.Surfaces = append(card.Surfaces, event.CardSurface{Surface: sf.ID, Profile: profile.ID,
			Width: sf.Width, Height: sf.Height, AckTimeoutMS: int64(profile.AckTimeoutMS), Pages: pages})
	}

	if o := s.deps.Observer; o != nil {
		// After the event is out (deferred unlock runs first).
		defer o.SafetyCard(s, card)
	}
	// The card and the prompt it covers change together.
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	s.cards.mu.Lock()
	defer s.cards.mu.Unlock()
	ca := &cardAcks{card: card, surfaces: map[string]*surfaceAcks{}}
	s.cards.byID[cardID] = ca
	s.cards.active = &activeCard{card: card, page: map[string]int{}, cleared: map[string]bool{}}
	if o := s.acts.offer; o != nil {
		// The card covers the prompt; the prompt shows again once the
		// person closes the card (key), never before.
		clear(o.shown)
	}
	s.ev.emit(event.TypeSafetyCard, card)
	for _, sf := range surfaces {
		s.deps.Counters.CardShown(a.Level, d.region, safety.SurfaceKind(sf.Kind))
	}
	timeout := time.Duration(profile.AckTimeoutMS) * time.Millisecond
	for _, cs := range card.Surfaces {
		n := len(cs.Pages)
		if n == 0 {
			n = 1
		}
		sa := &surfaceAcks{pages: make([]bool, n), timeout: timeout, kind: string(kindOf(surfaces, cs.Surface))}
		ca.surfaces[cs.Surface] = sa
		s.cards.active.page[cs.Surface] = 1
		if timeout > 0 && card.RequiresAck {
			s.armAckLocked(cardID, cs.Surface, sa)
		}
	}
}

func (s *Session) armAckLocked(cardID, surface string, sa *surfaceAcks) {
	sa.timer = s.timers.after(sa.timeout, func() { s.ackTimeout(cardID, surface) })
}

// ackTimeout re-sends a card whose first page was not acknowledged on a
// surface and notifies the phone surface; it re-arms up to AckResends.
func (s *Session) ackTimeout(cardID, surface string) {
	s.cards.mu.Lock()
	ca := s.cards.byID[cardID]
	if ca == nil {
		s.cards.mu.Unlock()
		return
	}
	sa := ca.surfaces[surface]
	if sa == nil || sa.pages[0] {
		s.cards.mu.Unlock()
		return
	}
	sa.resends++
	card := ca.card
	card.Resend = sa.resends
	s.ev.emit(event.TypeSafetyCard, card)
	s.ev.emit(event.TypeNotice, event.Notice{Kind: "safety_unacknowledged", Surface: "phone", CardID: cardID,
		Text: "Your glasses did not confirm the safety card. The resources are shown here as well."})
	if sa.resends < s.cfg.AckResends {
		s.armAckLocked(cardID, surface, sa)
	}
	hook := s.deps.OnUnacked
	s.cards.mu.Unlock()
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
	s.cards.mu.Lock()
	defer s.cards.mu.Unlock()
	ca := s.cards.byID[a.CardID]
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
		s.deps.Counters.CardAcked(ca.card.Level, s.device().region, safety.SurfaceKind(sa.kind))
	}
	sa.pages[a.Page-1] = true
	if a.Page == 1 && sa.timer != nil {
		s.timers.stop(sa.timer)
		sa.timer = nil
	}
	if s.cards.active != nil && s.cards.active.card.CardID == a.CardID {
		s.cards.active.page[a.Surface] = a.Page
	}
	return nil
}

// Acked reports, per surface, which pages of a card were acknowledged.
func (s *Session) Acked(cardID string) map[string][]bool {
	s.cards.mu.Lock()
	defer s.cards.mu.Unlock()
	ca := s.cards.byID[cardID]
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
	decided, id, err := s.keyLocked(k)
	if err != nil || decided == nil {
		return err
	}
	return s.settleAction(ctx, id, *decided)
}

// keyLocked routes a key to the safety card or the prompt on its surface
// and returns the decision it made on the offered action id, if any.
func (s *Session) keyLocked(k *event.InputKey) (decided *Decision, id string, err error) {
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	s.cards.mu.Lock()
	defer s.cards.mu.Unlock()
	ac, o := s.cards.active, s.acts.offer
	surface := k.Surface
	if surface == "" {
		switch d := s.device(); {
		case ac != nil && len(ac.card.Surfaces) > 0:
			surface = ac.card.Surfaces[0].Surface
		case len(d.surfaces) > 0:
			surface = d.surfaces[0].ID
		}
	}
	if ac != nil && !ac.cleared[surface] {
		if cardOn(ac.card, surface) {
			return nil, "", s.cardKeyLocked(ac, surface, k.Key)
		}
		if o == nil || len(o.st.promptPages(surface)) == 0 {
			return nil, "", fmt.Errorf("%w %q", ErrUnknownSurface, surface)
		}
	}
	if o == nil {
		return nil, "", nil
	}
	pages := o.st.promptPages(surface)
	if len(pages) == 0 {
		return nil, "", fmt.Errorf("%w %q", ErrUnknownSurface, surface)
	}
	mv := glasses.PageKey(glasses.KindAction, o.shown[surface], len(pages), k.Key)
	if mv.Controls {
		r, err := o.ap.Key(k.Key, surface)
		if err != nil {
			if errors.Is(err, consent.ErrSettled) {
				return nil, "", fmt.Errorf("%w %q", ErrUnknownAction, o.st.a.ID)
			}
			return nil, "", fmt.Errorf("session: prompt key: %w", err)
		}
		if r.Decided {
			return &Decision{Approved: r.Status == consent.Approved, Via: ViaKey, Surface: surface}, o.st.a.ID, nil
		}
	}
	o.shown[surface] = mv.Page
	s.ev.emit(event.TypeDisplayCard, event.DisplayCard{CardID: promptCardID(o.st.a.ID), Kind: "prompt",
		Surface: surface, Page: pages[mv.Page-1].WithFocus(focusControl(o.ap))})
	return nil, "", nil
}

// cardKeyLocked pages the safety card on surface; closing it shows the
// prompt that waited behind it. offers.mu and cards.mu held.
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
	mv := glasses.PageKey(glasses.KindSafety, cur, n, key)
	if mv.Done {
		s.ev.emit(event.TypeDisplayClear, event.DisplayClear{CardID: ac.card.CardID, Surface: surface})
		ac.cleared[surface] = true
		if o := s.acts.offer; o != nil {
			s.showPromptLocked(o, surface) // the prompt waited behind the card
		}
		return nil
	}
	next := mv.Page
	if next == cur {
		return nil
	}
	ac.page[surface] = next
	s.ev.emit(event.TypeDisplayCard, event.DisplayCard{CardID: ac.card.CardID, Kind: "safety", Surface: surface, Page: cs.Pages[next-1]})
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
