package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/consent"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/glasses"
)

// Action statuses (action.updated). A proposed action ends approved,
// declined, expired or failed (the approval could not be carried out); an
// approved one then gets the partner's result, succeeded or failed.
const (
	StatusProposed  = "proposed"
	StatusApproved  = "approved"
	StatusDeclined  = "declined"
	StatusExpired   = "expired"
	StatusFailed    = "failed"
	StatusSucceeded = "succeeded"
	// statusSettling: the decision is being carried upstream.
	statusSettling = "settling"
)

// Errors of ReportResult.
var (
	// ErrActionNotApproved: the action exists but was not approved (still
	// waiting, declined, expired, or its approval failed).
	ErrActionNotApproved = errors.New("session: action not approved")
	// ErrResultReported: the action's result was already reported.
	ErrResultReported = errors.New("session: action result already reported")
	// ErrResultStatus: a result status other than succeeded or failed.
	ErrResultStatus = errors.New("session: result status must be succeeded or failed")
)

// offers is the actions part: the actions VERA proposed, the ones still
// to offer, and the one offered for an answer (asked in the reply stream,
// shown as a prompt where no safety card covers the surface). Its lock
// comes first: it is taken before the cards' (a prompt shows only where
// no safety card is), the timers' and the events'.
type offers struct {
	mu    sync.Mutex // mu guards the fields below and every actionState and offer
	byID  map[string]*actionState
	order []string // ids of proposed actions not yet offered, oldest first
	offer *offer   // the action offered for an answer, if any
	audio bool     // a voice transport is attached (speech or reply audio seen)
}

// actionState is one proposed action; guarded by offers.mu.
type actionState struct {
	a       Action
	status  string
	result  string // the partner's result once reported
	expires time.Time
	expiry  clock.Timer
	prompt  []event.CardSurface // the prompt laid out per visual surface
}

// offer is the action currently offered for an answer — asked in the reply
// stream, shown as a prompt card on the surfaces — one at a time, oldest
// first. Guarded by offers.mu.
type offer struct {
	st *actionState
	ap *consent.Approval
	// turnID is the reply that carried the latest question: its audio
	// holds the answer window (Emit's reply.audio_started / _stopped).
	turnID  string
	silence clock.Timer
	// reask: the last utterance was no answer; ask again after its reply.
	reask bool
	// shown maps a surface to the prompt page on it (1-based); a surface
	// with a safety card on it is absent until the card is closed.
	shown map[string]int
}

func promptCardID(actionID string) string { return "prompt_" + actionID }

// propose registers actions, arms their expiry and emits action.proposed
// with each one's prompt pages. Offering (asking) is separate: offerNext.
func (s *Session) propose(turnID string, acts []Action) {
	d := s.device()
	surfaces, profile := d.surfaces, d.profile
	type laid struct {
		a     Action
		pages []event.CardSurface
	}
	var ls []laid
	for _, a := range acts {
		if a.ID == "" {
			continue
		}
		l := laid{a: a}
		for _, sf := range surfaces {
			l.pages = append(l.pages, event.CardSurface{Surface: sf.ID, Profile: profile.ID, Width: sf.Width,
				Height: sf.Height, AckTimeoutMS: int64(profile.AckTimeoutMS), Pages: s.layoutPrompt(a, sf)})
		}
		ls = append(ls, l)
	}
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	if s.ev.isClosed() {
		return
	}
	now := s.clock.Now()
	if len(s.acts.byID) >= maxKeptActions {
		s.pruneActionsLocked()
	}
	for _, l := range ls {
		a := l.a
		if old := s.acts.byID[a.ID]; old != nil {
			s.log_.Warn("session: action proposed twice; the first stands", "action", a.ID)
			continue
		}
		// Every action expires: its own expiry, capped by consent.expiry.
		exp := now.Add(s.cfg.Consent.Expiry)
		if !a.ExpiresAt.IsZero() && a.ExpiresAt.Before(exp) {
			exp = a.ExpiresAt
		}
		st := &actionState{a: a, status: StatusProposed, expires: exp, prompt: l.pages}
		s.acts.byID[a.ID] = st
		s.acts.order = append(s.acts.order, a.ID)
		id := a.ID
		st.expiry = s.timers.after(exp.Sub(now), func() { s.expire(id) })
		ea := event.Action{ID: a.ID, Type: a.Type, Title: a.Title, Summary: a.Summary, Input: a.Input,
			Status: StatusProposed, ExpiresAt: exp.UnixMilli()}
		s.ev.emit(event.TypeActionProposed, event.ActionProposed{TurnID: turnID, Action: ea, Surfaces: l.pages})
	}
}

// maxKeptActions bounds the actions a long session remembers; beyond it,
// settled ones that can no longer change are forgotten.
const maxKeptActions = 256

// pruneActionsLocked forgets actions whose story is over: declined,
// expired, failed, or approved with the result reported. Pending actions
// and approved ones awaiting their result stay.
func (s *Session) pruneActionsLocked() {
	for id, st := range s.acts.byID {
		switch {
		case st.status == StatusProposed, st.status == statusSettling:
		case st.status == StatusApproved && st.result == "":
		default:
			delete(s.acts.byID, id)
		}
	}
}

// layoutPrompt lays a prompt out for one surface (the engine falls back
// to its plain layout); a surface that fits neither gets the structured
// action without pages.
func (s *Session) layoutPrompt(a Action, sf devices.Surface) []glasses.OpsPage {
	title, body := promptText(a)
	pages, err := s.deps.Layout.PromptPages(promptCardID(a.ID), title, body, s.device().profile.ID, sf)
	if err != nil {
		s.log_.Warn("session: lay out prompt", "surface", sf.ID, "action", a.ID, "err", err)
	}
	return pages
}

// offerNext offers the oldest proposed action not yet offered, if nothing
// is offered now: it returns the question to put in the reply turnID
// ("" when there is nothing to offer) and shows the prompt card on every
// surface without a safety card on it.
func (s *Session) offerNext(turnID string) string {
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	if s.ev.isClosed() || s.acts.offer != nil {
		return ""
	}
	for len(s.acts.order) > 0 {
		id := s.acts.order[0]
		s.acts.order = s.acts.order[1:]
		st := s.acts.byID[id]
		if st == nil || st.status != StatusProposed {
			continue
		}
		ap, err := consent.NewApproval(s.cfg.Consent, s.clock, id, st.expires)
		if err != nil {
			// Config is validated; an error here is a bug. Never approve:
			// the action stays for a tap until it expires.
			s.log_.Error("session: consent prompt", "action", id, "err", err)
			continue
		}
		o := &offer{st: st, ap: ap, shown: map[string]int{}}
		s.acts.offer = o
		s.cards.mu.Lock()
		for _, cs := range st.prompt {
			s.showPromptLocked(o, cs.Surface)
		}
		s.cards.mu.Unlock()
		if !s.askLocked(o, turnID) {
			return ""
		}
		return question(st.a)
	}
	return ""
}

// askLocked records that the offer is asked in reply turnID; false when it
// may not be asked again.
func (s *Session) askLocked(o *offer, turnID string) bool {
	if !o.ap.Spoken() {
		return false
	}
	o.turnID, o.reask = turnID, false
	if !s.acts.audio {
		// Typed chat has no silence: the next message is the answer.
		o.ap.Hold()
	}
	s.armSilenceLocked(o)
	return true
}

// armSilenceLocked arms the answer-window timer of a listening offer whose
// window runs: silence that long asks again (bounded), never approves.
func (s *Session) armSilenceLocked(o *offer) {
	s.timers.stop(o.silence)
	o.silence = nil
	if !o.ap.Listening() {
		return
	}
	d := o.ap.NextDeadline().Sub(s.clock.Now())
	if d <= 0 || !o.ap.NextDeadline().Before(o.st.expires) {
		return
	}
	o.silence = s.timers.after(d, func() { s.silent(o) })
}

// silent: the answer window passed without an answer.
func (s *Session) silent(o *offer) {
	s.acts.mu.Lock()
	if s.acts.offer != o {
		s.acts.mu.Unlock()
		return
	}
	o.silence = nil
	r := o.ap.Poll()
	s.acts.mu.Unlock()
	if r.AskAgain {
		s.generate(func(turnID string) string { return s.reask(o, turnID, "") })
	}
}

// reask asks the offer o again in reply turnID, after lead; "" when o is
// no longer offered or may not be asked again.
func (s *Session) reask(o *offer, turnID, lead string) string {
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	// Not when an answer meanwhile asked again already (o is listening).
	if s.acts.offer != o || o.ap.Listening() || !s.askLocked(o, turnID) {
		return ""
	}
	return lead + question(o.st.a)
}

// question is the spoken/captioned offer of an action.
func question(a Action) string {
	if sum := NormalizeTitle(a.Summary); strings.HasSuffix(sum, "?") {
		return sum + " Say yes or no."
	}
	if t := NormalizeTitle(a.Title); t != "" {
		return fmt.Sprintf("Should I go ahead with %q? Say yes or no.", strings.TrimRight(t, ".!?"))
	}
	return "Should I go ahead with this? Say yes or no."
}

// Replies to answers.
const (
	ackApproved = "Okay, I'll go ahead."
	ackDeclined = "Okay, I won't."
	askClearly  = "Sorry, I need a clear yes or no. "
	leaveIt     = "I'll leave it for now."
	leaveScreen = " You can still approve or decline it on your screen."
)

// offered reports whether in may answer the offered action: an action
// is offered and the person gave the text (not an inbox message).
func (s *Session) offered(in turnInput) bool {
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	return s.acts.offer != nil && in.via != ""
}

// consentTurn takes a user text as an answer to the offer, when it is
// one. The local assessment comes first: an utterance the detector flags
// (elevated or crisis, or a card to show) is never an answer — the offer
// falls silent (tap or key only, until it expires) and the text is a
// normal turn. A text that does not read as an answer (consent.Answer) is
// a normal turn too, and the offer is asked again after its reply while
// asks remain. A clear yes or no settles the action (Via speech or text)
// and the reply acknowledges it and offers the next action; anything else
// asks again, bounded. handled reports whether reply is the turn's whole
// reply (the converser is not called).
func (s *Session) consentTurn(ctx context.Context, turnID string, in turnInput, flagged bool) (reply string, handled bool) {
	s.acts.mu.Lock()
	o := s.acts.offer
	if o == nil || in.via == "" {
		s.acts.mu.Unlock()
		return "", false
	}
	if flagged {
		o.ap.Quiet()
		s.timers.stop(o.silence)
		o.silence, o.reask = nil, false
		s.acts.mu.Unlock()
		s.log_.Info("session: offer silenced after a flagged utterance", "action", o.st.a.ID, "turn", turnID)
		return "", false
	}
	_, addressed := consent.Answer(in.text)
	if !addressed {
		if r := o.ap.Unanswered(); r.AskAgain {
			o.reask = true
		}
		s.timers.stop(o.silence)
		o.silence = nil
		s.acts.mu.Unlock()
		return "", false
	}
	if !o.ap.Listening() {
		// A yes or no long after the question may answer something else:
		// it is not taken; ask again while asks remain.
		if s.askLocked(o, turnID) {
			s.acts.mu.Unlock()
			return question(o.st.a), true
		}
		s.acts.mu.Unlock()
		return "", false
	}
	surface := SurfaceChat
	if in.via == ViaSpeech {
		surface = SurfaceVoice
	}
	r := o.ap.Speech(in.text, surface)
	switch {
	case r.Decided:
		s.acts.mu.Unlock()
		d := Decision{Approved: r.Status == consent.Approved, Via: in.via, Surface: surface}
		reply = ackDeclined
		if d.Approved {
			reply = ackApproved
		}
		if err := s.settleAction(ctx, o.st.a.ID, d); err != nil {
			// Settled meanwhile by a tap or expiry: say nothing wrong.
			s.log_.Info("session: spoken answer after settlement", "action", o.st.a.ID, "err", err)
			reply = "Okay."
		}
		if q := s.offerNext(turnID); q != "" {
			reply += " " + q
		}
		return reply, true
	case r.AskAgain && s.askLocked(o, turnID):
		s.acts.mu.Unlock()
		return askClearly + question(o.st.a), true
	default:
		// The bound is reached: the prompt waits for a tap or key.
		o.ap.Quiet()
		screen := len(s.device().surfaces) > 0
		s.acts.mu.Unlock()
		if screen {
			return leaveIt + leaveScreen, true
		}
		return leaveIt, true
	}
}

// afterReply returns what the reply of turnID adds after its text: the
// question of the offer asked again after an utterance that was no answer,
// or — when the turn showed no safety card — the offer of the next
// proposed action. A turn with a safety card never carries an offer.
func (s *Session) afterReply(turnID string, card bool) string {
	if card {
		return ""
	}
	s.acts.mu.Lock()
	o := s.acts.offer
	if o != nil && o.reask {
		q := ""
		if s.askLocked(o, turnID) {
			q = question(o.st.a)
		}
		s.acts.mu.Unlock()
		return q
	}
	s.acts.mu.Unlock()
	return s.offerNext(turnID)
}

// settleAction approves or declines a proposed action, only once, and only
// before it expires; the ActionHandler carries it upstream. Settling the
// offered action clears its prompt; the next action is offered by the
// caller (in the answer's reply) or, for taps and keys, in a reply of its
// own.
func (s *Session) settleAction(ctx context.Context, id string, d Decision) error {
	s.acts.mu.Lock()
	st := s.acts.byID[id]
	if st == nil || st.status != StatusProposed {
		s.acts.mu.Unlock()
		return fmt.Errorf("%w %q", ErrUnknownAction, id)
	}
	if !s.clock.Now().Before(st.expires) {
		s.acts.mu.Unlock()
		s.expire(id)
		return nil
	}
	st.status = statusSettling
	wasOffer := s.retireLocked(st)
	a := st.a
	if d.At.IsZero() {
		d.At = s.clock.Now()
	}
	s.acts.mu.Unlock()

	status := StatusDeclined
	if d.Approved {
		status = StatusApproved
	}
	var err error
	if h := s.deps.Actions; h != nil {
		if d.Approved {
			err = h.Approve(ctx, s.id, a, d)
		} else {
			err = h.Decline(ctx, s.id, a, d)
		}
	}
	upd := event.ActionUpdated{ActionID: id, Status: status, Reason: d.Reason, Via: d.Via}
	if err != nil {
		s.log_.Warn("session: action upstream failed", "action", id, "err", err)
		upd = event.ActionUpdated{ActionID: id, Status: StatusFailed, Reason: "the action could not be completed", Via: d.Via}
	}
	s.acts.mu.Lock()
	st.status = upd.Status
	s.ev.emit(event.TypeActionUpdated, upd)
	s.acts.mu.Unlock()
	if wasOffer && d.Via != ViaSpeech && d.Via != ViaText {
		s.generate(s.offerNext)
	}
	return nil
}

// retireLocked stops an action's timers and, when it is the offer, clears
// its prompt from the surfaces; it reports whether it was the offer.
func (s *Session) retireLocked(st *actionState) bool {
	s.timers.stop(st.expiry)
	st.expiry = nil
	o := s.acts.offer
	if o == nil || o.st != st {
		return false
	}
	s.timers.stop(o.silence)
	for _, cs := range st.prompt {
		if o.shown[cs.Surface] > 0 {
			s.ev.emit(event.TypeDisplayClear, event.DisplayClear{CardID: promptCardID(st.a.ID), Surface: cs.Surface})
		}
	}
	s.acts.offer = nil
	return true
}

// expire ends a proposed action that reached its expiry: action.updated
// expired and a decline upstream (Via expiry) — never an approval.
func (s *Session) expire(id string) {
	s.acts.mu.Lock()
	st := s.acts.byID[id]
	if st == nil || st.status != StatusProposed {
		s.acts.mu.Unlock()
		return
	}
	st.status = StatusExpired
	wasOffer := s.retireLocked(st)
	a := st.a
	at := s.clock.Now()
	s.ev.emit(event.TypeActionUpdated, event.ActionUpdated{ActionID: id, Status: StatusExpired, Via: ViaExpiry})
	s.acts.mu.Unlock()
	if h := s.deps.Actions; h != nil {
		if err := h.Decline(s.ctx, s.id, a, Decision{Via: ViaExpiry, At: at}); err != nil {
			s.log_.Warn("session: action decline on expiry failed", "action", id, "err", err)
		}
	}
	if wasOffer {
		s.generate(s.offerNext)
	}
}

// withdrawLocked declines every action still waiting for a decision when
// the session ends (hang-up): action.updated declined, Via hangup. The
// caller tells the ActionHandler, outside the lock.
func (s *Session) withdrawLocked() []Action {
	var out []Action
	for _, st := range s.acts.byID {
		if st.status != StatusProposed {
			continue
		}
		s.retireLocked(st)
		st.status = StatusDeclined
		s.ev.emit(event.TypeActionUpdated, event.ActionUpdated{ActionID: st.a.ID, Status: StatusDeclined,
			Reason: "the session ended", Via: ViaHangUp})
		out = append(out, st.a)
	}
	s.acts.order = nil
	return out
}

// ReportResult records the partner's result of an approved action
// (POST /v1/actions/{id}/result): status is "succeeded" or "failed". Every
// surface gets action.updated with it, and a short confirmation follows as
// a reply of its own — spoken in a voice session, captioned and shown in
// chat: "Done: <title>." or "That didn't go through: <title>.". Errors:
// ErrResultStatus, ErrUnknownAction (no such action in this session),
// ErrActionNotApproved, ErrResultReported, ErrClosed.
func (s *Session) ReportResult(actionID, status string) error {
	if status != StatusSucceeded && status != StatusFailed {
		return fmt.Errorf("%w, not %q", ErrResultStatus, status)
	}
	s.acts.mu.Lock()
	st := s.acts.byID[actionID]
	switch {
	case s.ev.isClosed():
		s.acts.mu.Unlock()
		return ErrClosed
	case st == nil:
		s.acts.mu.Unlock()
		return fmt.Errorf("%w %q", ErrUnknownAction, actionID)
	case st.result != "":
		s.acts.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrResultReported, actionID)
	case st.status != StatusApproved:
		s.acts.mu.Unlock()
		return fmt.Errorf("%w: %q is %s", ErrActionNotApproved, actionID, st.status)
	}
	st.result = status
	s.ev.emit(event.TypeActionUpdated, event.ActionUpdated{ActionID: actionID, Status: status})
	title := strings.TrimRight(NormalizeTitle(st.a.Title), ".!?")
	s.acts.mu.Unlock()
	if title == "" {
		title = "your request"
	}
	text := "Done: " + title + "."
	if status == StatusFailed {
		text = "That didn't go through: " + title + "."
	}
	s.generate(func(string) string { return text })
	return nil
}
