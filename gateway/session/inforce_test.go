package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// cardsOf returns the safety cards among evs.
func cardsOf(evs []ev) []ev {
	var out []ev
	for _, e := range evs {
		if e.Type == event.TypeSafetyCard {
			out = append(out, e)
		}
	}
	return out
}

// turnOf sends text and reads the turn's events up to reply.done.
func turnOf(t *testing.T, s *session.Session, st *session.Stream, l *typedLog, text string) []ev {
	t.Helper()
	if err := s.Handle(context.Background(), &event.InputText{Text: text}); err != nil {
		t.Fatal(err)
	}
	return typedUntil(t, st, l, event.TypeReplyDone)
}

// ackAll acknowledges every page of card on its every surface.
func ackAll(t *testing.T, s *session.Session, card ev) {
	t.Helper()
	var c event.SafetyCard
	decodeEv(t, card, &c)
	for _, cs := range c.Surfaces {
		for p := range cs.Pages {
			if err := s.Handle(context.Background(), &event.DisplayAck{CardID: c.CardID, Page: p + 1, Surface: cs.Surface}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A crisis stays in force for the session (on the fake clock, so no ack
// timer fires by itself): later turns show no second card and are judged
// crisis whatever they say; "I'm safe now" lowers the crisis to elevated
// only after the person has seen the resources, never below; a new crisis
// then raises it again with a new card.
func TestCrisisStaysInForce(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, clk)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	var l typedLog
	typedUntil(t, st, &l, event.TypeNotice)

	first := turnOf(t, s, st, &l, "I want to end my life")
	cards := cardsOf(first)
	if len(cards) != 1 || final(first).str("safety_level") != "crisis" {
		t.Fatalf("first crisis turn: %v", types(first))
	}
	for _, text := range []string{"tell me about your day", "I want to end my life", "I'm safe now"} {
		evs := turnOf(t, s, st, &l, text)
		if len(cardsOf(evs)) != 0 || final(evs).str("safety_level") != "crisis" {
			t.Fatalf("%q while the crisis is in force (resources not yet seen): %v level %s", text, types(evs), final(evs).str("safety_level"))
		}
	}
	ackAll(t, s, cards[0])
	for _, text := range []string{"I'm safe now, maybe", "I am not safe", "i think i'm safe"} {
		if evs := turnOf(t, s, st, &l, text); final(evs).str("safety_level") != "crisis" {
			t.Fatalf("%q lowered the crisis: %s", text, final(evs).str("safety_level"))
		}
	}
	evs := turnOf(t, s, st, &l, "Okay. I'm safe now, thank you.")
	if len(cardsOf(evs)) != 0 || final(evs).str("safety_level") != "elevated" {
		t.Fatalf("a clear statement of safety after the resources were seen: %v level %s", types(evs), final(evs).str("safety_level"))
	}
	for _, text := range []string{"I'm safe now", "what a lovely evening"} {
		if evs := turnOf(t, s, st, &l, text); final(evs).str("safety_level") != "elevated" {
			t.Fatalf("%q: the session fell below elevated: %s", text, final(evs).str("safety_level"))
		}
	}
	evs = turnOf(t, s, st, &l, "no, I want to end my life")
	if c := cardsOf(evs); len(c) != 1 || c[0].str("level") != "crisis" || index(evs, event.TypeSafetyCard) > index(evs, event.TypeReplyDelta) {
		t.Fatalf("the crisis rose again: want a new card before the reply, got %v", types(evs))
	}
	if len(l.spoken) != 0 {
		t.Fatalf("a card the glasses confirm was spoken: %+v", l.spoken)
	}
}

// On a device that must speak safety (voice-only) the resources are
// spoken with the card, once, firmly: not again on later crisis turns,
// and again only when the level rises.
func TestSpokenOnceUnlessTheLevelRises(t *testing.T) {
	elevated := safety.Assessment{Level: safety.LevelElevated, DisplayRequired: true, Resources: []safety.Resource{textLine}, Source: safety.SourceLocal}
	sl := levelSafety{"down": elevated, "end my life": {Level: safety.LevelCrisis, DisplayRequired: true, Resources: []safety.Resource{lifeline}, Source: safety.SourceLocal}}
	m := newManager(t, session.DefaultConfig(), echo(), sl, clocktest.NewClock(time.Unix(1_800_000_000, 0)))
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.VoiceOnly})
	var l typedLog
	typedUntil(t, st, &l, event.TypeNotice)

	turnOf(t, s, st, &l, "I feel down")
	if len(l.spoken) != 1 || !l.spoken[0].Firm || l.spoken[0].Why != session.SpeakMustSpeak || l.spoken[0].Level != safety.LevelElevated {
		t.Fatalf("elevated card on voice-only: spoken %+v", l.spoken)
	}
	turnOf(t, s, st, &l, "still down")
	if len(l.spoken) != 1 {
		t.Fatalf("the same card spoken again: %d times", len(l.spoken))
	}
	evs := turnOf(t, s, st, &l, "I want to end my life")
	if len(cardsOf(evs)) != 1 || len(l.spoken) != 2 {
		t.Fatalf("the level rose: want one card spoken again, got %d cards, %d spoken", len(cardsOf(evs)), len(l.spoken))
	}
	sp := l.spoken[1]
	// The crisis card keeps the elevated card's resource too; both are
	// spoken, since the level rose.
	if sp.Level != safety.LevelCrisis || len(sp.Resources) != 2 || len(sp.Sentences) != 3 {
		t.Fatalf("crisis speech %+v", sp)
	}
	for _, text := range []string{"I want to end my life", "I feel down"} {
		if evs := turnOf(t, s, st, &l, text); len(cardsOf(evs)) != 0 {
			t.Fatalf("%q re-sent the card in force", text)
		}
	}
	if len(l.spoken) != 2 {
		t.Fatalf("spoken %d times, want 2", len(l.spoken))
	}
}

// levelSafety assesses by keyword, in map order of no importance: the
// first key the text contains wins.
type levelSafety map[string]safety.Assessment

func (ls levelSafety) Assess(history []string, text, region string) safety.Assessment {
	for k, a := range ls {
		if strings.Contains(strings.ToLower(text), k) {
			return a
		}
	}
	return safety.Assessment{Source: safety.SourceLocal}
}

func (levelSafety) Merge(engine, local safety.Assessment) safety.Assessment {
	return safety.Merge(engine, local)
}

// A device negotiated later (a hello on the live connection) gets the card
// in force laid out for its surfaces; nothing already spoken is spoken
// again.
func TestCardInForceOnANewDevice(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, clocktest.NewClock(time.Unix(1_800_000_000, 0)))
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.Phone})
	var l typedLog
	typedUntil(t, st, &l, event.TypeNotice)
	turnOf(t, s, st, &l, "I want to end my life")
	if err := s.Handle(context.Background(), &event.Hello{Device: devices.MetaRayBanDisplay}); err != nil {
		t.Fatal(err)
	}
	evs := typedUntil(t, st, &l, event.TypeSafetyCard)
	var c event.SafetyCard
	decodeEv(t, evs[len(evs)-1], &c)
	if c.Level != safety.LevelCrisis || len(c.Surfaces) != 1 || c.Surfaces[0].Profile != devices.MetaRayBanDisplay || len(c.Surfaces[0].Pages) == 0 {
		t.Fatalf("card on the new device %+v", c)
	}
	// The same device again changes nothing.
	if err := s.Handle(context.Background(), &event.Hello{Device: devices.MetaRayBanDisplay}); err != nil {
		t.Fatal(err)
	}
	if evs := turnOf(t, s, st, &l, "hello"); len(cardsOf(evs)) != 0 {
		t.Fatalf("the card was sent again for the same device: %v", types(evs))
	}
}

// A turn that fails still shows the card the engine's reply carried
// (Reply.Safety with the error), before the error.
func TestFailedTurnKeepsTheEngineCard(t *testing.T) {
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		return session.Reply{Safety: safety.Assessment{Level: safety.LevelCrisis, DisplayRequired: true, Resources: []safety.Resource{textLine}, Source: safety.SourceEngine}},
			errors.New("router: no model answered")
	}}
	m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "everything is too much"})
	evs := until(t, st, event.TypeError)
	c := cardsOf(evs)
	var card event.SafetyCard
	if len(c) == 1 {
		decodeEv(t, c[0], &card)
	}
	if len(c) != 1 || card.Level != safety.LevelCrisis || len(card.Resources) != 1 || card.Resources[0].ID != textLine.ID {
		t.Fatalf("failed turn: %v", types(evs))
	}
}

func final(evs []ev) ev { return evs[len(evs)-1] }

func decodeEv(t *testing.T, e ev, v any) {
	t.Helper()
	b, err := json.Marshal(e.raw)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// What is spoken of a card rides in the replay log with the card: a voice
// transport that resumes after the card was re-sent while it was away
// speaks it exactly once; one that resumes after that speaks nothing again.
func TestSpokenSafetySurvivesResume(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, clk)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	var l typedLog
	typedUntil(t, st, &l, event.TypeNotice)
	turnOf(t, s, st, &l, "I want to end my life")
	seq := s.LastSeq()
	st.Detach()
	clk.Advance(time.Duration(s.Profile().AckTimeoutMS) * time.Millisecond) // re-sent and spoken while away

	_, st2, err := m.Open(owner, &event.Hello{ResumeToken: s.ResumeToken(), LastSeq: seq})
	if err != nil {
		t.Fatal(err)
	}
	var l2 typedLog
	typedUntil(t, st2, &l2, event.TypeNotice) // the resume acknowledgement is a session.created; the notice follows the re-send
	if len(l2.spoken) != 1 || l2.spoken[0].Why != session.SpeakUnacknowledged {
		t.Fatalf("after resuming before the re-send: spoken %+v", l2.spoken)
	}
	after := s.LastSeq()
	st2.Detach()
	_, st3, err := m.Open(owner, &event.Hello{ResumeToken: s.ResumeToken(), LastSeq: after})
	if err != nil {
		t.Fatal(err)
	}
	var l3 typedLog
	turnOf(t, s, st3, &l3, "hello")
	if len(l3.spoken) != 0 {
		t.Fatalf("after resuming past the re-send: spoken %+v", l3.spoken)
	}
}

// The unacknowledged-card notice and the spoken lead-in name the surface
// that did not confirm as the person knows it, per device: a phone's
// screen is not "your glasses", and a browser window is neither.
func TestUnackedNoticeNamesTheSurface(t *testing.T) {
	for _, tc := range []struct {
		device, surface, notice, lead string
		not                           []string
	}{
		{devices.MetaRayBanDisplay, "display", "Your glasses did not confirm", "on your glasses", []string{"phone", "browser"}},
		{devices.EvenG2, "display", "Your glasses did not confirm", "on your glasses", []string{"phone", "browser"}},
		{devices.Phone, "screen", "Your phone's screen did not confirm", "on your phone", []string{"glasses", "browser"}},
		{devices.Browser, "screen", "This browser window did not confirm", "on your screen", []string{"glasses", "phone"}},
	} {
		t.Run(tc.device, func(t *testing.T) {
			clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
			m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, clk)
			s, st, _ := m.Open(owner, &event.Hello{Device: tc.device})
			var l typedLog
			typedUntil(t, st, &l, event.TypeNotice)
			turnOf(t, s, st, &l, "I want to end my life")
			clk.Advance(time.Duration(s.Profile().AckTimeoutMS) * time.Millisecond)
			evs := typedUntil(t, st, &l, event.TypeNotice)
			n := evs[len(evs)-1]
			text := n.str("text")
			if n.str("kind") != "safety_unacknowledged" || n.str("surface") != tc.surface || !strings.HasPrefix(text, tc.notice) {
				t.Fatalf("notice %s: want surface %s, text starting %q", n.raw["text"], tc.surface, tc.notice)
			}
			if len(l.spoken) != 1 || !strings.Contains(l.spoken[0].Sentences[0], tc.lead) {
				t.Fatalf("spoken %+v: want one, its lead-in naming %q", l.spoken, tc.lead)
			}
			for _, w := range tc.not {
				if strings.Contains(strings.ToLower(text), w) || strings.Contains(strings.ToLower(l.spoken[0].Sentences[0]), w) {
					t.Errorf("notice %q / lead-in %q names %q on %s", text, l.spoken[0].Sentences[0], w, tc.device)
				}
			}
		})
	}
}

// On a device that must speak safety (Mentra: no render confirmation;
// voice-only) the resources are spoken with the card, firm: barge-in does
// not cut the numbers short.
func TestMustSpeakIsFirm(t *testing.T) {
	for _, dev := range []string{devices.Mentra, devices.VoiceOnly} {
		t.Run(dev, func(t *testing.T) {
			m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, clocktest.NewClock(time.Unix(1_800_000_000, 0)))
			s, st, _ := m.Open(owner, &event.Hello{Device: dev})
			var l typedLog
			typedUntil(t, st, &l, event.TypeNotice)
			turnOf(t, s, st, &l, "I want to end my life")
			if len(l.spoken) != 1 || !l.spoken[0].Firm || l.spoken[0].Why != session.SpeakMustSpeak {
				t.Fatalf("spoken %+v: want once, firm, must_speak", l.spoken)
			}
		})
	}
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, clocktest.NewClock(time.Unix(1_800_000_000, 0)))
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	var l typedLog
	typedUntil(t, st, &l, event.TypeNotice)
	turnOf(t, s, st, &l, "I want to end my life")
	if len(l.spoken) != 0 {
		t.Fatalf("a card the glasses can confirm was spoken before its timeout: %+v", l.spoken)
	}
}
