package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/consent"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// cards is the safety-card part: every card sent, its acknowledgements
// per surface and page, the card on display that input.key pages, and
// the session's safety in force (inforce.go). Lock order: gate first
// (taken only by showSafety, under a turn's lock), then the offers' lock
// (a card covers a prompt, closing it uncovers one), then mu, then the
// timers' and the events'.
type cards struct {
	ev       *events
	timers   *timers
	counters *safety.Counters
	log      *slog.Logger
	resends  int // Config.AckResends

	// gate serialises deciding on a card and sending it (showSafety), so
	// that a turn and a late verdict of the turn before never both send
	// the same card.
	gate sync.Mutex

	mu     sync.Mutex // mu guards the fields below
	byID   map[string]*cardAcks
	active *activeCard // the card on display for input.key
	force  inForce     // the safety in force for the session
}

// cardAcks tracks one safety card's acknowledgements; guarded by cards.mu.
type cardAcks struct {
	card     event.SafetyCard
	dev      *device // the device it was laid out for
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

// showSafety shows a's card unless what the person has been shown this
// session already covers it (safety.NeedsCard against the card in force:
// a card is not sent again unless the level rises or a resource is new).
// The card sent carries every resource shown before as well, a's first.
// why says whether it is also spoken now (speakLate; a must-speak device
// always speaks what it has not heard). It reports whether a card went
// out. Callers may hold a turn's lock, never a part's.
func (s *Session) showSafety(turnID string, a safety.Assessment, why string) bool {
	c := &s.cards
	c.gate.Lock()
	defer c.gate.Unlock()
	shown, ok := c.inForce()
	var prev *safety.Assessment
	if ok {
		prev = &shown
	}
	if !safety.NeedsCard(a, prev) {
		return false
	}
	if ok {
		a = safety.Guard(a, shown, a)
	}
	s.sendCard(turnID, a, why)
	return true
}

// sendCard lays the assessment out for every visual surface and emits
// safety.card, arming the ack timers. It never drops a resource: a surface
// whose layout fails gets the glasses engine's plain fallback pages, and if
// even that fails the card (with no pages) so the client draws the
// structured resources. cards.gate held.
func (s *Session) sendCard(turnID string, a safety.Assessment, why string) {
	d := s.device()
	surfaces, profile := d.surfaces, d.profile
	cardID := s.cards.newID(turnID)
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
		// After the event is out (deferred unlocks run first).
		defer o.SafetyCard(s, card)
	}
	// The card and the prompt it covers change together.
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	s.cards.mu.Lock()
	defer s.cards.mu.Unlock()
	if o := s.acts.offer; o != nil {
		// The card covers the prompt; the prompt shows again once the
		// person closes the card (key), never before.
		clear(o.shown)
	}
	s.cards.showLocked(card, d, time.Duration(profile.AckTimeoutMS)*time.Millisecond, why)
}

// newID names the next card of turnID.
func (c *cards) newID(turnID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("card_%s_%d", turnID, len(c.byID)+1)
}

// showLocked makes card the one on display and the one in force, emits it
// (with what a voice transport speaks of it, if anything: speechLocked),
// counts it shown on every surface of d and arms the ack timers. mu held.
func (c *cards) showLocked(card event.SafetyCard, d *device, timeout time.Duration, why string) {
	ca := &cardAcks{card: card, dev: d, surfaces: map[string]*surfaceAcks{}}
	c.byID[card.CardID] = ca
	c.active = &activeCard{card: card, page: map[string]int{}, cleared: map[string]bool{}}
	c.force.showLocked(card)
	c.ev.emitSpoken(event.TypeSafetyCard, card, c.speechLocked(card, d, why))
	for _, sf := range d.surfaces {
		c.counters.CardShown(card.Level, d.region, safety.SurfaceKind(sf.Kind))
	}
	for _, cs := range card.Surfaces {
		n := len(cs.Pages)
		if n == 0 {
			n = 1
		}
		sa := &surfaceAcks{pages: make([]bool, n), timeout: timeout, kind: string(kindOf(d.surfaces, cs.Surface))}
		ca.surfaces[cs.Surface] = sa
		c.active.page[cs.Surface] = 1
		if timeout > 0 && card.RequiresAck {
			c.armLocked(card.CardID, cs.Surface, sa)
		}
	}
}

func (c *cards) armLocked(cardID, surface string, sa *surfaceAcks) {
	sa.timer = c.timers.after(sa.timeout, func() { c.timeout(cardID, surface) })
}

// timeout re-sends a card whose first page was not acknowledged on a
// surface and sends a notice naming that surface; it re-arms up to
// resends. The first re-send of a card is also spoken in a voice session,
// once and as a whole, unless its resources were already spoken at its
// level (speechLocked).
func (c *cards) timeout(cardID, surface string) {
	c.mu.Lock()
	ca := c.byID[cardID]
	if ca == nil {
		c.mu.Unlock()
		return
	}
	sa := ca.surfaces[surface]
	if sa == nil || sa.pages[0] {
		c.mu.Unlock()
		return
	}
	sa.resends++
	card := ca.card
	card.Resend = sa.resends
	c.ev.emitSpoken(event.TypeSafetyCard, card, c.speechLocked(card, ca.dev, speakUnacked))
	c.ev.emit(event.TypeNotice, event.Notice{Kind: "safety_unacknowledged", Surface: surface, CardID: cardID,
		Text: unackedNotice(ca.dev)})
	if sa.resends < c.resends {
		c.armLocked(cardID, surface, sa)
	}
	c.mu.Unlock()
	c.log.Warn("session: safety card not acknowledged", "card", cardID, "surface", surface, "resend", card.Resend)
}

// Errors of display.ack and input.key.
var (
	ErrUnknownCard    = errors.New("session: unknown card")
	ErrUnknownSurface = errors.New("session: unknown surface")
	ErrBadPage        = errors.New("session: page out of range")
)

// ack records a display.ack; the first page's stops its timer.
func (c *cards) ack(a *event.DisplayAck, region string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ca := c.byID[a.CardID]
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
		c.counters.CardAcked(ca.card.Level, region, safety.SurfaceKind(sa.kind))
	}
	sa.pages[a.Page-1] = true
	c.force.ackedLocked(ca.card, sa.pages)
	if a.Page == 1 && sa.timer != nil {
		c.timers.stop(sa.timer)
		sa.timer = nil
	}
	if c.active != nil && c.active.card.CardID == a.CardID {
		c.active.page[a.Surface] = a.Page
	}
	return nil
}

// Acked reports, per surface, which pages of a card were acknowledged.
func (s *Session) Acked(cardID string) map[string][]bool {
	c := &s.cards
	c.mu.Lock()
	defer c.mu.Unlock()
	ca := c.byID[cardID]
	if ca == nil {
		return nil
	}
	out := map[string][]bool{}
	for id, sa := range ca.surfaces {
		out[id] = append([]bool(nil), sa.pages...)
	}
	return out
}

// coversLocked reports whether the card on display covers surface (the
// person has not closed it there). mu held.
func (c *cards) coversLocked(surface string) bool {
	ac := c.active
	return ac != nil && !ac.cleared[surface] && cardOn(ac.card, surface)
}

// pageLocked applies key to the card on display on surface (which it
// covers) and reports whether the person closed it there. mu held.
func (c *cards) pageLocked(surface, key string) (closed bool) {
	ac := c.active
	var cs *event.CardSurface
	for i := range ac.card.Surfaces {
		if ac.card.Surfaces[i].Surface == surface {
			cs = &ac.card.Surfaces[i]
		}
	}
	n := len(cs.Pages)
	if n == 0 {
		return false
	}
	cur := ac.page[surface]
	mv := glasses.PageKey(glasses.KindSafety, cur, n, key)
	if mv.Done {
		c.ev.emit(event.TypeDisplayClear, event.DisplayClear{CardID: ac.card.CardID, Surface: surface})
		ac.cleared[surface] = true
		return true
	}
	if mv.Page == cur {
		return false
	}
	ac.page[surface] = mv.Page
	c.ev.emit(event.TypeDisplayCard, event.DisplayCard{CardID: ac.card.CardID, Kind: "safety", Surface: surface, Page: cs.Pages[mv.Page-1]})
	return false
}

func kindOf(list []devices.Surface, id string) devices.SurfaceKind {
	for _, sf := range list {
		if sf.ID == id {
			return sf.Kind
		}
	}
	return ""
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
			if s.cards.pageLocked(surface, k.Key) && o != nil {
				s.showPromptLocked(o, surface) // the prompt waited behind the card
			}
			return nil, "", nil
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
