package session

import (
	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/safety"
)

// inForce is the session's safety in force, in the cards part (cards.mu).
// A crisis stays in force for the session:
//   - every later turn is judged at least at the level in force, and its
//     card is not sent again unless the level rises or a resource is new
//     (showSafety): the card stays on every surface until the person
//     closes it, and a device negotiated later gets it laid out again;
//   - nothing the person says lowers a crisis below elevated; a clear
//     statement of being safe ("I'm safe now", safeNow) lowers it to
//     elevated once the person has seen the resources (every page of a
//     card at that level acknowledged on a surface, or the resources
//     spoken to them);
//   - resources are spoken once (speechLocked): never again unless the
//     level rises.
//
// An elevated card stays in force the same way, without a level floor: a
// turn after it is judged on its own.
type inForce struct {
	// shown is what the person has been shown: Level is the level in force,
	// Resources every resource shown this session, in first-shown order.
	shown   safety.Assessment
	any     bool         // a card was shown
	turnID  string       // the turn of the last card
	peak    safety.Level // the highest level shown
	seen    bool         // the person saw (or heard) the resources at shown.Level
	spokenL safety.Level // the highest level whose resources were spoken
	spoken  map[string]bool
}

// inForce returns what the person has been shown, and whether any card
// was.
func (c *cards) inForce() (safety.Assessment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &c.force
	a := f.shown
	a.Resources = append([]safety.Resource(nil), f.shown.Resources...)
	return a, f.any
}

// showLocked records card as shown: its level (never lower than what is
// in force) and every resource it adds.
func (f *inForce) showLocked(card event.SafetyCard) {
	if card.Level > f.shown.Level {
		f.seen = false // not yet seen at the new level
	}
	f.shown = safety.Guard(f.shown, safety.Assessment{Level: card.Level, DisplayRequired: true, Resources: card.Resources}, f.shown)
	f.shown.DisplayRequired = true
	f.any, f.turnID = true, card.TurnID
	f.peak = safety.MaxLevel(f.peak, card.Level)
}

// ackedLocked notes that the person saw card when every page of it is
// acknowledged on a surface (pages).
func (f *inForce) ackedLocked(card event.SafetyCard, pages []bool) {
	for _, ok := range pages {
		if !ok {
			return
		}
	}
	if card.Level >= f.shown.Level {
		f.seen = true
	}
}

// turnFloor is the level a turn is judged at whatever it says: after a
// crisis, the level in force (crisis, or elevated once lowered); none
// before any crisis. A clear statement of being safe (text, which the
// local detector judged none) after the person has seen the resources
// lowers a crisis in force to elevated, here, for this turn and the rest.
func (c *cards) turnFloor(text string, local safety.Assessment) safety.Level {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &c.force
	if f.peak < safety.LevelCrisis {
		return safety.LevelNone
	}
	if f.shown.Level == safety.LevelCrisis && f.seen && local.Level == safety.LevelNone && !local.DisplayRequired && safeNow(text) {
		f.shown.Level = safety.LevelElevated
		f.spokenL = min(f.spokenL, safety.LevelElevated)
		c.log.Info("session: crisis in force lowered to elevated after a clear statement of safety")
	}
	return f.shown.Level
}

// relayoutInForce shows the card in force again, laid out for the device
// a hello negotiated, when its surfaces differ from old's: the card stays
// available on every surface. It is not a new judgment, so nothing is
// spoken that was spoken before.
func (s *Session) relayoutInForce(old *device) {
	d := s.device()
	if old == nil || sameSurfaces(old, d) {
		return
	}
	c := &s.cards
	c.gate.Lock()
	defer c.gate.Unlock()
	shown, ok := c.inForce()
	if !ok {
		return
	}
	c.mu.Lock()
	turnID := c.force.turnID
	c.mu.Unlock()
	s.sendCard(turnID, shown, speakNone)
}

func sameSurfaces(a, b *device) bool {
	if a.profile.ID != b.profile.ID || len(a.surfaces) != len(b.surfaces) {
		return false
	}
	for i := range a.surfaces {
		x, y := a.surfaces[i], b.surfaces[i]
		if x.ID != y.ID || x.Width != y.Width || x.Height != y.Height || x.TextBudget != y.TextBudget || x.Fonts != y.Fonts {
			return false
		}
	}
	return true
}

// Why a card's resources are spoken (SpokenSafety.Why).
const (
	speakNone = ""
	// SpeakMustSpeak: the device cannot show or confirm the card
	// (voice-only, MentraOS): the resources are spoken with it.
	SpeakMustSpeak = "must_speak"
	// SpeakUnacknowledged: the card was not confirmed in time on a surface.
	SpeakUnacknowledged = "unacknowledged"
	// SpeakLate: a classifier's crisis verdict came after the reply had
	// started; the rest of the reply is cut short.
	SpeakLate = "late"

	speakUnacked = SpeakUnacknowledged
	speakLate    = SpeakLate
)

// SpokenSafety is what a voice transport speaks of a safety card: a short
// lead-in, then each resource's name and number from its pre-stored
// spoken form (digit by digit, said twice; BRIEF §5.5; nameAndNumber). The session decides
// it once per card and level — a card's resources are never spoken again
// unless the level rises — and it travels in the replay log with the
// safety.card event that calls for it (Event.Dispatch), so a voice
// connection that resumes speaks it exactly once, never twice, never not.
type SpokenSafety struct {
	CardID string
	// TurnID is the card's turn; with Why SpeakLate, the reply to cut short.
	TurnID string
	Level  safety.Level
	Why    string
	// Firm: barge-in does not cut it short (the device must speak safety:
	// voice-only, or no render confirmation). Otherwise the person can talk
	// over it; the card stays on every screen.
	Firm bool
	// Sentences are the lead-in, then one per resource, in card order.
	Sentences []string
	// Resources are the resources spoken (the card's, less those already
	// spoken at this level).
	Resources []safety.Resource
}

// speechLocked decides what of card a voice transport speaks now, for
// why (speakNone: only if the device must speak safety), and records it
// spoken: nil when nothing is to be spoken. mu held.
func (c *cards) speechLocked(card event.SafetyCard, d *device, why string) *SpokenSafety {
	must := d.profile.MustSpeakSafety()
	switch {
	case why == speakNone && !must:
		return nil
	case why == speakNone:
		why = SpeakMustSpeak
	}
	f := &c.force
	if f.spoken == nil {
		f.spoken = map[string]bool{}
	}
	rose := card.Level > f.spokenL
	var say []safety.Resource
	for _, r := range card.Resources {
		if rose || !f.spoken[r.ID+"\x00"+r.Name] {
			say = append(say, r)
		}
	}
	if len(say) == 0 {
		return nil
	}
	sp := &SpokenSafety{CardID: card.CardID, TurnID: card.TurnID, Level: card.Level, Why: why, Firm: must, Resources: say,
		Sentences: make([]string, 0, len(say)+1)}
	sp.Sentences = append(sp.Sentences, leadIn(why, d))
	for _, r := range say {
		f.spoken[r.ID+"\x00"+r.Name] = true
		sp.Sentences = append(sp.Sentences, nameAndNumber(r))
	}
	f.spokenL = safety.MaxLevel(f.spokenL, card.Level)
	if card.Level >= f.shown.Level {
		f.seen = true // heard
	}
	return sp
}

// nameAndNumber is a resource as it is spoken: its name and its number —
// the pre-stored spoken form (digit by digit, said twice) of its first
// call action, else its first text action. A resource without either (a
// directory, "call your local emergency number") is spoken whole. The
// card shows every action; speech keeps to what a person can dial.
func nameAndNumber(r safety.Resource) string {
	for _, typ := range []safety.ActionType{safety.ActionCall, safety.ActionText} {
		for _, a := range r.Actions {
			if a.Type != typ {
				continue
			}
			sp := a.Spoken
			if sp == "" {
				sp = safety.Spoken(a)
			}
			return r.Name + ". " + sp
		}
	}
	return safety.SpokenResource(r)
}

// leadIn is the sentence before spoken resources.
func leadIn(why string, d *device) string {
	switch why {
	case SpeakUnacknowledged:
		return "In case the card did not show on your " + surfaceNoun(d) + ", here is help you can reach right now."
	case SpeakLate:
		return "Let me stop there. Here is help you can reach right now."
	}
	return "Here is help you can reach right now."
}

// surfaceNoun names the device's screen for the person.
func surfaceNoun(d *device) string {
	switch d.profile.Kind {
	case devices.KindGlasses:
		return "glasses"
	case devices.KindPhone:
		return "phone"
	}
	return "screen"
}

// unackedNotice is the text of a safety_unacknowledged notice: it names
// the surface that did not confirm, as the person knows it.
func unackedNotice(d *device) string {
	switch d.profile.Kind {
	case devices.KindGlasses:
		return "Your glasses did not confirm the safety card. The resources are shown here as well."
	case devices.KindPhone:
		return "Your phone's screen did not confirm the safety card. The resources stay on the card until you close it."
	case devices.KindBrowser:
		return "This browser window did not confirm the safety card. The resources stay on the card until you close it."
	}
	return "Your screen did not confirm the safety card. The resources stay on the card until you close it."
}
