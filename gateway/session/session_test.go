package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testLayout is the glasses engine the test sessions lay cards out with.
var testLayout = func() *glasses.Engine {
	e, err := glasses.New(glasses.DefaultConfig(), nil)
	if err != nil {
		panic(err) // the embedded fonts are part of the binary
	}
	return e
}()

var (
	lifeline = safety.Resource{ID: "us-988", Name: "988 Suicide & Crisis Lifeline", Country: "US",
		Actions: []safety.Action{{Type: safety.ActionCall, Value: "988"}, {Type: safety.ActionText, Value: "988"}}}
	textLine = safety.Resource{ID: "us-ctl", Name: "Crisis Text Line", Country: "US",
		Actions: []safety.Action{{Type: safety.ActionText, Label: "Text HOME to", Value: "741741"}}}
)

// keywordSafety is a SafetyLayer for tests: "end my life" is a crisis.
type keywordSafety struct{ downgrade bool }

func (k keywordSafety) Assess(history []string, text, region string) safety.Assessment {
	if strings.Contains(strings.ToLower(text), "end my life") {
		return safety.Assessment{Level: safety.LevelCrisis, DisplayRequired: true, Resources: []safety.Resource{lifeline}, Source: safety.SourceLocal}
	}
	return safety.Assessment{Source: safety.SourceLocal}
}

func (k keywordSafety) Merge(engine, local safety.Assessment) safety.Assessment {
	if k.downgrade { // a broken merge: the session must still not downgrade
		return safety.Assessment{}
	}
	out := engine
	if local.Level > out.Level {
		out.Level = local.Level
	}
	out.DisplayRequired = engine.DisplayRequired || local.DisplayRequired
	out.Resources = append(append([]safety.Resource(nil), engine.Resources...), local.Resources...)
	out.Source = safety.SourceMerged
	return out
}

// scripted is a Converser driven by a function per call.
type scripted struct {
	fn func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error)
	mu sync.Mutex
	n  int
	h  [][]session.Message
}

func (c *scripted) Converse(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	c.mu.Lock()
	c.n++
	c.h = append(c.h, req.History)
	c.mu.Unlock()
	return c.fn(ctx, req, onDelta)
}

func echo() *scripted {
	return &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		onDelta("You said: ")
		onDelta(req.Text)
		return session.Reply{Message: "You said: " + req.Text, Model: "echo", Provider: "test"}, nil
	}}
}

type ev struct {
	event.Envelope
	raw map[string]json.RawMessage
}

func (e ev) str(k string) string {
	var s string
	_ = json.Unmarshal(e.raw[k], &s)
	return s
}

func newManager(t *testing.T, cfg session.Config, conv session.Converser, sl session.SafetyLayer, clk clock.Clock) *session.Manager {
	t.Helper()
	m, err := session.NewManager(cfg, session.Deps{Converser: conv, Safety: sl, Layout: testLayout, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return m
}

func next(t *testing.T, st *session.Stream) ev {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := st.Next(ctx)
	if err != nil {
		t.Fatalf("next event: %v", err)
	}
	var e ev
	if err := json.Unmarshal(b, &e.Envelope); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &e.raw); err != nil {
		t.Fatal(err)
	}
	return e
}

// until reads events until one of type want and returns all read.
func until(t *testing.T, st *session.Stream, want event.Type) []ev {
	t.Helper()
	var out []ev
	for {
		e := next(t, st)
		out = append(out, e)
		if e.Type == want {
			return out
		}
	}
}

func types(evs []ev) []string {
	var s []string
	for _, e := range evs {
		s = append(s, string(e.Type))
	}
	return s
}

func index(evs []ev, t event.Type) int {
	for i, e := range evs {
		if e.Type == t {
			return i
		}
	}
	return -1
}

var owner = session.Owner{PartnerID: "p1", EndUserID: "u1"}

func TestStartDisclosureAndSeq(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, nil)
	s, st, err := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	if err != nil {
		t.Fatal(err)
	}
	e1, e2 := next(t, st), next(t, st)
	if e1.Type != event.TypeSessionCreated || e1.Seq != 1 || e1.SessionID != s.ID() || e1.str("resume_token") != s.ResumeToken() {
		t.Fatalf("first event %+v", e1)
	}
	if e2.Type != event.TypeNotice || e2.str("kind") != "ai_disclosure" || !strings.Contains(e2.str("text"), "AI") || e2.Seq != 2 {
		t.Fatalf("second event %+v %s", e2, e2.raw["text"])
	}
	if err := s.Handle(context.Background(), &event.InputText{Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	evs := until(t, st, event.TypeReplyDone)
	for i, e := range evs {
		if e.Seq != int64(3+i) {
			t.Fatalf("seq %d at %d: %v", e.Seq, i, types(evs))
		}
	}
	if got := types(evs); strings.Join(got, ",") != "transcript.final,reply.delta,caption,reply.done" {
		t.Fatalf("events %v", got)
	}
}

func TestLocalCrisisCardBeforeAnyDelta(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, nil)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "I want to end my life tonight"})
	evs := until(t, st, event.TypeReplyDone)
	ci, di := index(evs, event.TypeSafetyCard), index(evs, event.TypeReplyDelta)
	if ci < 0 || di < 0 || ci > di {
		t.Fatalf("card at %d, first delta at %d: %v", ci, di, types(evs))
	}
	var card event.SafetyCard
	b, _ := json.Marshal(evs[ci].raw)
	_ = json.Unmarshal(b, &card)
	if !card.RequiresAck || card.Level != safety.LevelCrisis || len(card.Resources) != 1 || card.Resources[0].Actions[0].Value != "988" {
		t.Fatalf("card %+v", card)
	}
	if len(card.Surfaces) != 1 || card.Surfaces[0].Surface != "display" || len(card.Surfaces[0].Pages) == 0 {
		t.Fatalf("surfaces %+v", card.Surfaces)
	}
	p := card.Surfaces[0].Pages[0]
	if p.N != 1 || p.Of != len(card.Surfaces[0].Pages) || p.Title == "" || len(p.Ops) == 0 {
		t.Fatalf("page %+v", p)
	}
	if evs[len(evs)-1].str("safety_level") != "crisis" {
		t.Fatalf("reply.done level %s", evs[len(evs)-1].raw["safety_level"])
	}
}

// The engine raises safety the local detector missed; its deltas streamed
// during converse are still held behind the card.
func TestEngineSafetyHoldsDeltas(t *testing.T) {
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		onDelta("I'm really glad ")
		onDelta("you told me.")
		return session.Reply{Message: "I'm really glad you told me.",
			Safety: safety.Assessment{Level: safety.LevelElevated, DisplayRequired: true, Resources: []safety.Resource{textLine}, Source: safety.SourceEngine}}, nil
	}}
	m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "things are hard"})
	evs := until(t, st, event.TypeReplyDone)
	if got := strings.Join(types(evs), ","); got != "transcript.final,safety.card,reply.delta,caption,reply.done" {
		t.Fatalf("order %s", got)
	}
}

// A broken Merge that returns nothing cannot downgrade or drop resources.
func TestMergeNeverDowngrades(t *testing.T) {
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		return session.Reply{Message: "ok", Safety: safety.Assessment{Level: safety.LevelElevated, DisplayRequired: true, Resources: []safety.Resource{textLine}}}, nil
	}}
	m := newManager(t, session.DefaultConfig(), conv, keywordSafety{downgrade: true}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "I want to end my life"})
	evs := until(t, st, event.TypeReplyDone)
	var cards []event.SafetyCard
	for _, e := range evs {
		if e.Type == event.TypeSafetyCard {
			var c event.SafetyCard
			b, _ := json.Marshal(e.raw)
			_ = json.Unmarshal(b, &c)
			cards = append(cards, c)
		}
	}
	if len(cards) != 2 {
		t.Fatalf("want local card then merged card, got %d: %v", len(cards), types(evs))
	}
	last := cards[1]
	if last.Level != safety.LevelCrisis || len(last.Resources) != 2 {
		t.Fatalf("merged card %+v", last)
	}
	if index(evs, event.TypeReplyDelta) < 3 {
		t.Fatalf("delta before the merged card: %v", types(evs))
	}
}

func TestSafetyFinalStreamsEarly(t *testing.T) {
	release := make(chan struct{})
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		req.SafetyFinal(safety.Assessment{})
		onDelta("streamed ")
		select {
		case <-release:
		case <-ctx.Done():
			return session.Reply{}, ctx.Err()
		}
		onDelta("text")
		return session.Reply{Message: "streamed text"}, nil
	}}
	m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "hi"})
	evs := until(t, st, event.TypeReplyDelta) // arrives while Converse is still blocked
	close(release)
	evs = append(evs, until(t, st, event.TypeReplyDone)...)
	if got := strings.Join(types(evs), ","); got != "transcript.final,reply.delta,reply.delta,caption,reply.done" {
		t.Fatalf("order %s", got)
	}
}

func blocking() (*scripted, chan struct{}) {
	started := make(chan struct{}, 8)
	return &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		if req.Text == "fast" {
			return session.Reply{Message: "quick answer"}, nil
		}
		req.SafetyFinal(safety.Assessment{})
		onDelta("partial ")
		started <- struct{}{}
		<-ctx.Done()
		return session.Reply{}, ctx.Err()
	}}, started
}

func TestNewInputCancelsReply(t *testing.T) {
	conv, started := blocking()
	m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "slow"})
	<-started
	_ = s.Handle(context.Background(), &event.InputText{Text: "fast"})
	evs := until(t, st, event.TypeReplyDone)
	i := index(evs, event.TypeReplyInterrupted)
	if i < 0 || evs[i].str("reason") != "superseded" || evs[i].str("heard") != "partial " {
		t.Fatalf("events %v", types(evs))
	}
	if h := s.History(); len(h) != 4 || h[1].Text != "partial " || h[3].Text != "quick answer" {
		t.Fatalf("history keeps only what was delivered: %+v", h)
	}
}

func TestResponseCancel(t *testing.T) {
	conv, started := blocking()
	m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "slow"})
	<-started
	_ = s.Handle(context.Background(), &event.ResponseCancel{})
	evs := until(t, st, event.TypeReplyInterrupted)
	if evs[len(evs)-1].str("reason") != "cancelled" {
		t.Fatalf("%s", evs[len(evs)-1].raw["reason"])
	}
}

func TestQueuePolicy(t *testing.T) {
	gate := make(chan struct{})
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		if req.Text == "first" {
			<-gate
		}
		return session.Reply{Message: "re: " + req.Text}, nil
	}}
	cfg := session.DefaultConfig()
	cfg.OnBusy = session.BusyQueue
	m := newManager(t, cfg, conv, keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "first"})
	until(t, st, event.TypeTranscriptFinal)
	_ = s.Handle(context.Background(), &event.InputText{Text: "second"})
	close(gate)
	a := until(t, st, event.TypeReplyDone)
	b := until(t, st, event.TypeReplyDone)
	if a[len(a)-1].str("text") != "re: first" || b[len(b)-1].str("text") != "re: second" || index(append(a, b...), event.TypeReplyInterrupted) >= 0 {
		t.Fatalf("%v / %v", types(a), types(b))
	}
}

func TestAckTimeoutResendsAndNotifies(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo(), Safety: keywordSafety{}, Layout: testLayout, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "I want to end my life"})
	var l typedLog
	evs := typedUntil(t, st, &l, event.TypeReplyDone)
	cardID := evs[index(evs, event.TypeSafetyCard)].str("card_id")
	if len(l.spoken) != 0 {
		t.Fatalf("a card the glasses can confirm is spoken before its timeout: %+v", l.spoken)
	}
	timeout := time.Duration(s.Profile().AckTimeoutMS) * time.Millisecond

	clk.Advance(timeout - time.Millisecond)
	clk.Advance(time.Millisecond)
	re := typedUntil(t, st, &l, event.TypeNotice)
	// The notice names the surface that did not confirm, as the person
	// knows it.
	if len(re) != 2 || re[0].Type != event.TypeSafetyCard || re[0].str("card_id") != cardID || string(re[0].raw["resend"]) != "1" ||
		re[1].str("kind") != "safety_unacknowledged" || re[1].str("surface") != "display" || !strings.HasPrefix(re[1].str("text"), "Your glasses ") {
		t.Fatalf("after timeout: %v %s", types(re), re[1].raw["text"])
	}
	// The first re-send is spoken, once, as a whole: lead-in, then each
	// resource's name and number (digit by digit, said twice); on glasses
	// barge-in may cut it (the card stays on the display).
	if len(l.spoken) != 1 {
		t.Fatalf("spoken %d times after the first timeout, want 1", len(l.spoken))
	}
	sp := l.spoken[0]
	if sp.CardID != cardID || sp.Why != session.SpeakUnacknowledged || sp.Firm || len(sp.Sentences) != 2 ||
		!strings.Contains(sp.Sentences[0], "glasses") || sp.Sentences[1] != "988 Suicide & Crisis Lifeline. Call nine eight eight. Again: nine eight eight." {
		t.Fatalf("spoken %+v", sp)
	}
	// Later re-sends are not spoken again.
	clk.Advance(timeout)
	typedUntil(t, st, &l, event.TypeNotice)
	if len(l.spoken) != 1 {
		t.Fatalf("spoken %d times after the second timeout, want 1", len(l.spoken))
	}
	// The ack stops the re-sends.
	if err := s.Handle(context.Background(), &event.DisplayAck{CardID: cardID, Page: 1, Surface: "display"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * timeout)
	if got := s.Acked(cardID)["display"]; !got[0] {
		t.Fatalf("acked %v", got)
	}
	before := s.LastSeq()
	clk.Advance(10 * timeout)
	if s.LastSeq() != before {
		t.Fatal("events after the ack")
	}
	// Unknown card and page out of range are client errors.
	if err := s.Handle(context.Background(), &event.DisplayAck{CardID: "nope", Page: 1, Surface: "display"}); !errors.Is(err, session.ErrUnknownCard) {
		t.Fatalf("unknown card: %v", err)
	}
	if err := s.Handle(context.Background(), &event.DisplayAck{CardID: cardID, Page: 99, Surface: "display"}); !errors.Is(err, session.ErrBadPage) {
		t.Fatalf("bad page: %v", err)
	}
}

func TestResendsAreBounded(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	cfg := session.DefaultConfig()
	cfg.AckResends = 2
	m := newManager(t, cfg, echo(), keywordSafety{}, clk)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	_ = s.Handle(context.Background(), &event.InputText{Text: "end my life"})
	until(t, st, event.TypeReplyDone)
	for range 5 {
		clk.Advance(time.Minute)
	}
	if clk.Pending() != 0 {
		t.Fatalf("%d timers still armed", clk.Pending())
	}
	n := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		b, err := st.Next(ctx)
		cancel()
		if err != nil {
			break
		}
		if strings.Contains(string(b), `"type":"safety.card"`) {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d re-sends, want 2", n)
	}
}

func TestResume(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	rec := &recorder{done: make(chan string, 8)}
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo(), Safety: keywordSafety{}, Layout: testLayout, Clock: clk, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, _ := m.Open(owner, nil)
	seen := until(t, st, event.TypeNotice)
	last := seen[len(seen)-1].Seq
	st.Detach()
	// Events produced while away are kept.
	_ = s.Handle(context.Background(), &event.InputText{Text: "while away"})
	<-rec.done // the turn finished while nobody was attached
	if _, _, err := m.Open(session.Owner{PartnerID: "p1", EndUserID: "other"}, &event.Hello{Device: "browser", ResumeToken: s.ResumeToken(), LastSeq: last}); !errors.Is(err, session.ErrResumeUnknown) {
		t.Fatalf("other owner: %v", err)
	}
	s2, st2, err := m.Open(owner, &event.Hello{Device: "browser", ResumeToken: s.ResumeToken(), LastSeq: last})
	if err != nil || s2 != s {
		t.Fatalf("resume: %v", err)
	}
	e := next(t, st2)
	if e.Type != event.TypeSessionCreated || string(e.raw["resumed"]) != "true" || e.Seq != 0 {
		t.Fatalf("resume starts with %v", e.Type)
	}
	got := until(t, st2, event.TypeReplyDone)
	if got[0].Seq != last+1 || got[0].Type != event.TypeTranscriptFinal {
		t.Fatalf("replay from %d: %v", got[0].Seq, types(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq != got[i-1].Seq+1 {
			t.Fatalf("gap in replay: %v", got)
		}
	}
	// A second attach replaces the first stream.
	_, st3, err := m.Open(owner, &event.Hello{ResumeToken: s.ResumeToken(), LastSeq: s.LastSeq(), Device: "browser"})
	if err != nil {
		t.Fatal(err)
	}
	<-st2.Done()
	if !errors.Is(st2.Err(), session.ErrReplaced) {
		t.Fatalf("old stream: %v", st2.Err())
	}
	if _, _, err := m.Open(owner, &event.Hello{ResumeToken: s.ResumeToken(), LastSeq: s.LastSeq() + 5, Device: "browser"}); !errors.Is(err, session.ErrResumeAhead) {
		t.Fatalf("ahead: %v", err)
	}
	// Away longer than the window: the session is gone.
	st3.Detach()
	clk.Advance(session.DefaultConfig().ResumeWindow + time.Second)
	if _, ok := m.Get(s.ID()); ok {
		t.Fatal("session outlived its resume window")
	}
	if _, _, err := m.Open(owner, &event.Hello{Device: "browser", ResumeToken: s.ResumeToken()}); !errors.Is(err, session.ErrResumeUnknown) {
		t.Fatalf("expired: %v", err)
	}
}

func TestResumeTooOld(t *testing.T) {
	cfg := session.DefaultConfig()
	cfg.ReplayEvents = 16
	m := newManager(t, cfg, echo(), keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	st.Detach()
	for i := 0; i < 40; i++ {
		s.EmitError(event.ErrInvalidRequest, "filler")
	}
	if _, _, err := m.Open(owner, &event.Hello{Device: "browser", ResumeToken: s.ResumeToken(), LastSeq: 2}); !errors.Is(err, session.ErrResumeTooOld) {
		t.Fatalf("want too old, got %v", err)
	}
}

func TestSlowConsumerFailsStreamWithoutBlocking(t *testing.T) {
	cfg := session.DefaultConfig()
	cfg.ReplayEvents = 16
	m := newManager(t, cfg, echo(), keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	for i := 0; i < 100; i++ { // never blocks although nobody reads
		s.EmitError(event.ErrInvalidRequest, "filler")
	}
	<-st.Done()
	if !errors.Is(st.Err(), session.ErrSlowConsumer) {
		t.Fatalf("stream error %v", st.Err())
	}
	if _, err := st.Next(context.Background()); !errors.Is(err, session.ErrSlowConsumer) {
		t.Fatalf("next: %v", err)
	}
}

func TestActions(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		return session.Reply{Message: "Shall I remind you?", ProposedActions: []session.Action{
			{ID: "act_1", Type: "reminder", Title: "Remind me at 9", ExpiresAt: clk.Now().Add(time.Hour)},
			{ID: "act_2", Type: "message", Title: "Text Sam"},
			{ID: "act_3", Type: "message", Title: "Old", ExpiresAt: clk.Now().Add(time.Minute)},
		}}, nil
	}}
	m := newManager(t, session.DefaultConfig(), conv, keywordSafety{}, clk)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "remind me"})
	evs := until(t, st, event.TypeReplyDone)
	// The first action is offered as the reply's last sentence, with its
	// prompt card shown on the surface.
	if got := strings.Join(types(evs), ","); got != "transcript.final,reply.delta,action.proposed,action.proposed,action.proposed,display.card,reply.delta,caption,reply.done" {
		t.Fatalf("turn events %s", got)
	}
	ctx := context.Background()
	_ = s.Handle(ctx, &event.ActionApprove{ActionID: "act_1"})
	_ = s.Handle(ctx, &event.ActionDecline{ActionID: "act_2", Reason: "no"})
	if err := s.Handle(ctx, &event.ActionApprove{ActionID: "act_1"}); !errors.Is(err, session.ErrUnknownAction) {
		t.Fatalf("approve twice: %v", err)
	}
	clk.Advance(2 * time.Minute)
	_ = s.Handle(ctx, &event.ActionApprove{ActionID: "act_3"})
	want := []string{"act_1/approved", "act_2/declined", "error", "act_3/expired"}
	for _, w := range want {
		e := next(t, st)
		for e.Type != event.TypeActionUpdated && e.Type != event.TypeError {
			e = next(t, st)
		}
		got := string(e.Type)
		if e.Type == event.TypeActionUpdated {
			got = e.str("action_id") + "/" + e.str("status")
		}
		if got != w {
			t.Fatalf("got %s want %s", got, w)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := session.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for key, mut := range map[string]func(*session.Config){
		"session.on_busy":          func(c *session.Config) { c.OnBusy = "drop" },
		"session.replay_events":    func(c *session.Config) { c.ReplayEvents = 1 },
		"session.disclosure_every": func(c *session.Config) { c.DisclosureEvery = 4 * time.Hour },
		"session.resume_window":    func(c *session.Config) { c.ResumeWindow = 0 },
		"session.consent.max_asks": func(c *session.Config) { c.Consent.MaxAsks = 0 },
		"session.consent.expiry":   func(c *session.Config) { c.Consent.Expiry = 48 * time.Hour },
	} {
		c := session.DefaultConfig()
		mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v", key, err)
		}
	}
}

func TestBadHello(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, nil)
	if _, _, err := m.Open(owner, &event.Hello{Device: "toaster"}); !errors.Is(err, session.ErrBadHello) {
		t.Fatalf("unknown device: %v", err)
	}
	if _, _, err := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay, Surfaces: []string{"nope"}}); !errors.Is(err, session.ErrBadHello) {
		t.Fatalf("unknown surface: %v", err)
	}
}

// A long reply held behind safety leaves coalesced: a reader keeping up is
// never failed as slow by the burst.
func TestHeldBurstDoesNotOverflow(t *testing.T) {
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		var b strings.Builder
		for i := 0; i < 3000; i++ {
			onDelta("word ")
			b.WriteString("word ")
		}
		return session.Reply{Message: b.String()}, nil
	}}
	cfg := session.DefaultConfig()
	cfg.ReplayEvents = 16
	m := newManager(t, cfg, conv, keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "tell me a long story"})
	evs := until(t, st, event.TypeReplyDone)
	var text strings.Builder
	for _, e := range evs {
		if e.Type == event.TypeReplyDelta {
			text.WriteString(e.str("delta"))
		}
	}
	if text.Len() != 3000*5 || st.Err() != nil {
		t.Fatalf("got %d bytes of deltas, stream err %v", text.Len(), st.Err())
	}
}

// The real safety package as the session's SafetyLayer: a crisis text while
// the engine says nothing still puts resources first, for an unknown region
// and for a known one.
func TestLocalSafetyRealDetector(t *testing.T) {
	ls, err := session.NewLocalSafety("")
	if err != nil {
		t.Fatal(err)
	}
	gl, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, region := range []string{"", "GB", "US"} {
		m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo(), Safety: ls, Layout: gl})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close(context.Background())
		s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay, Region: region})
		until(t, st, event.TypeNotice)
		_ = s.Handle(context.Background(), &event.InputText{Text: "I want to end my life tonight"})
		evs := until(t, st, event.TypeReplyDone)
		ci, di := index(evs, event.TypeSafetyCard), index(evs, event.TypeReplyDelta)
		if ci < 0 || ci > di {
			t.Fatalf("region %q: %v", region, types(evs))
		}
		var card event.SafetyCard
		b, _ := json.Marshal(evs[ci].raw)
		_ = json.Unmarshal(b, &card)
		if card.Level != safety.LevelCrisis || len(card.Resources) == 0 || len(card.Surfaces[0].Pages) == 0 {
			t.Fatalf("region %q card %+v", region, card)
		}
		// The glasses layout (not the fallback) drew it: its title, n/N.
		for i, pg := range card.Surfaces[0].Pages {
			if pg.Title != glasses.SafetyTitle || pg.N != i+1 || pg.Of != len(card.Surfaces[0].Pages) {
				t.Fatalf("region %q page %+v", region, pg)
			}
		}
		// A harmless text in a fresh conversation gets no card.
		s2, st2, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay, Region: region})
		_ = s2.Handle(context.Background(), &event.InputText{Text: "this traffic is killing me"})
		if evs := until(t, st2, event.TypeReplyDone); index(evs, event.TypeSafetyCard) >= 0 {
			t.Fatalf("idiom got a card: %v", types(evs))
		}
	}
}

func TestDisclosureRepeats(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, clk)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "hi"})
	if evs := until(t, st, event.TypeReplyDone); index(evs, event.TypeNotice) >= 0 {
		t.Fatalf("disclosure repeated too early: %v", types(evs))
	}
	clk.Advance(safety.MaxDisclosureInterval)
	_ = s.Handle(context.Background(), &event.InputText{Text: "still here"})
	evs := until(t, st, event.TypeReplyDone)
	if i := index(evs, event.TypeNotice); i != 0 || evs[i].str("kind") != "ai_disclosure" {
		t.Fatalf("no disclosure after the interval: %v", types(evs))
	}
}

// The glasses package's layout for every profile: pages carry n/N and the
// ops; the resources' numbers appear whole.
func TestGlassesLayoutEveryProfile(t *testing.T) {
	gl, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	a := safety.Assessment{Level: safety.LevelCrisis, DisplayRequired: true, Resources: []safety.Resource{lifeline, textLine}}
	for _, p := range devices.Builtins() {
		for _, sf := range p.Surfaces {
			if !sf.Visual() {
				continue
			}
			pages, err := gl.SafetyPages("card_t", a.Resources, p.ID, sf)
			if err != nil {
				t.Fatalf("%s/%s: %v", p.ID, sf.ID, err)
			}
			var all []string
			for i, pg := range pages {
				if pg.N != i+1 || pg.Of != len(pages) || pg.Title == "" || len(pg.Ops) == 0 {
					t.Fatalf("%s page %+v", p.ID, pg)
				}
				all = append(all, pg.Lines...)
			}
			joined := strings.Join(all, "\n")
			for _, want := range []string{"988", "741741"} {
				if !strings.Contains(joined, want) {
					t.Fatalf("%s: %q missing in %q", p.ID, want, joined)
				}
			}
		}
	}
}

// failingLayout lays nothing out: not even a plain page.
type failingLayout struct{}

func (failingLayout) SafetyPages(string, []safety.Resource, string, devices.Surface) ([]glasses.OpsPage, error) {
	return nil, errors.New("cannot lay out")
}

func (failingLayout) PromptPages(string, string, string, string, devices.Surface) ([]glasses.OpsPage, error) {
	return nil, errors.New("cannot lay out")
}

// A resource the glasses fonts cannot draw still gets pages: the engine's
// plain fallback draws it, whole.
func TestLayoutFailureFallsBack(t *testing.T) {
	odd := safety.Resource{ID: "x-odd", Name: "Linea de ayuda \u2615", Actions: []safety.Action{{Type: safety.ActionCall, Value: "988"}}}
	a := safety.Assessment{Level: safety.LevelCrisis, DisplayRequired: true, Resources: []safety.Resource{odd}}
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo(), Safety: fixedSafety{a}, Layout: testLayout})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	_ = s.Handle(context.Background(), &event.InputText{Text: "anything"})
	evs := until(t, st, event.TypeReplyDone)
	var card event.SafetyCard
	b, _ := json.Marshal(evs[index(evs, event.TypeSafetyCard)].raw)
	_ = json.Unmarshal(b, &card)
	if len(card.Surfaces) != 1 || len(card.Surfaces[0].Pages) == 0 || card.Surfaces[0].Pages[0].Of < 1 {
		t.Fatalf("no fallback pages: %+v", card.Surfaces)
	}
	if card.Surfaces[0].Pages[0].Title == glasses.SafetyTitle {
		t.Fatalf("the engine drew a rune its fonts lack: %+v", card.Surfaces[0].Pages[0])
	}
	var lines []string
	for _, pg := range card.Surfaces[0].Pages {
		lines = append(lines, pg.Lines...)
	}
	if got := strings.Join(lines, " "); !strings.Contains(got, odd.Name) || !strings.Contains(got, "988") {
		t.Fatalf("fallback pages lost text: %q", got)
	}
}

// A layout that draws nothing still leaves the structured card: every
// resource, no pages.
func TestLayoutFailureKeepsTheCard(t *testing.T) {
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo(), Safety: keywordSafety{}, Layout: failingLayout{}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	_ = s.Handle(context.Background(), &event.InputText{Text: "I want to end my life"})
	evs := until(t, st, event.TypeReplyDone)
	ci, di := index(evs, event.TypeSafetyCard), index(evs, event.TypeReplyDelta)
	if ci < 0 || ci > di {
		t.Fatalf("card not first: %v", types(evs))
	}
	var card event.SafetyCard
	b, _ := json.Marshal(evs[ci].raw)
	_ = json.Unmarshal(b, &card)
	if len(card.Resources) != 1 || card.Resources[0].ID != lifeline.ID || len(card.Surfaces) != 1 {
		t.Fatalf("card %+v", card)
	}
}

// input.key pages a card server-side with the glasses pager's rules.
func TestKeysPageTheCard(t *testing.T) {
	two := safety.Assessment{Level: safety.LevelCrisis, DisplayRequired: true, Resources: []safety.Resource{lifeline, textLine}}
	m := newManager(t, session.DefaultConfig(), echo(), fixedSafety{two}, nil)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.EvenG1})
	until(t, st, event.TypeNotice)
	ctx := context.Background()
	_ = s.Handle(ctx, &event.InputText{Text: "anything"})
	evs := until(t, st, event.TypeReplyDone)
	var card event.SafetyCard
	b, _ := json.Marshal(evs[index(evs, event.TypeSafetyCard)].raw)
	_ = json.Unmarshal(b, &card)
	n := len(card.Surfaces[0].Pages)
	if n < 2 {
		t.Fatalf("want a multi-page card on even-g1, got %d pages", n)
	}
	surface := card.Surfaces[0].Surface
	key := func(k string) { _ = s.Handle(ctx, &event.InputKey{Key: k, Surface: surface}) }
	key(event.KeyBack) // sticky on page 1: nothing
	key(event.KeyNext)
	e := next(t, st)
	var dc event.DisplayCard
	b, _ = json.Marshal(e.raw)
	_ = json.Unmarshal(b, &dc)
	if e.Type != event.TypeDisplayCard || dc.Page.N != 2 || dc.CardID != card.CardID {
		t.Fatalf("next: %s %+v", e.Type, dc)
	}
	key(event.KeyBack)
	if e := next(t, st); e.Type != event.TypeDisplayCard || !strings.Contains(string(e.raw["page"]), `"n":1`) {
		t.Fatalf("back: %v", e.raw)
	}
	for i := 1; i < n; i++ {
		key(event.KeySelect)
		next(t, st)
	}
	key(event.KeySelect) // Done on the last page
	if e := next(t, st); e.Type != event.TypeDisplayClear || e.str("card_id") != card.CardID {
		t.Fatalf("done: %s %v", e.Type, e.raw)
	}
	if err := s.Handle(ctx, &event.InputKey{Key: event.KeyNext, Surface: "nope"}); !errors.Is(err, session.ErrUnknownSurface) {
		t.Fatalf("unknown surface: %v", err)
	}
}

// fixedSafety assesses every text the same way.
type fixedSafety struct{ a safety.Assessment }

func (f fixedSafety) Assess([]string, string, string) safety.Assessment { return f.a }
func (f fixedSafety) Merge(engine, local safety.Assessment) safety.Assessment {
	return keywordSafety{}.Merge(engine, local)
}

type recorder struct {
	mu   sync.Mutex
	log  []string
	done chan string // one per ReplyDone
}

func (r *recorder) add(s string) { r.mu.Lock(); r.log = append(r.log, s); r.mu.Unlock() }
func (r *recorder) SafetyCard(_ *session.Session, c event.SafetyCard) {
	r.add("card:" + c.Level.String())
}
func (r *recorder) ReplyDelta(_ *session.Session, _, d string) { r.add("delta:" + d) }
func (r *recorder) ReplyDone(_ *session.Session, turnID, text string) {
	r.add("done:" + text)
	r.done <- turnID
}
func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

// A voice pipeline observes the card before any reply text, and can cut a
// reply short with what was actually heard.
func TestObserverAndInterrupt(t *testing.T) {
	rec := &recorder{done: make(chan string, 8)}
	release := make(chan struct{})
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		if req.Text == "long story" {
			req.SafetyFinal(safety.Assessment{})
			onDelta("Once upon a time, ")
			onDelta("there was a lighthouse keeper ")
			select {
			case <-release:
			case <-ctx.Done():
				return session.Reply{}, ctx.Err()
			}
		}
		onDelta("Here you go.")
		return session.Reply{Message: "Here you go."}, nil
	}}
	// A fake clock: the card's ack timeout must not re-send it mid-test
	// however slow the machine.
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: conv, Safety: keywordSafety{}, Layout: testLayout,
		Observer: rec, Clock: clocktest.NewClock(time.Unix(1_800_000_000, 0))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)

	s.Submit("I want to end my life")
	until(t, st, event.TypeReplyDone)
	<-rec.done
	if got := rec.get(); len(got) != 3 || got[0] != "card:crisis" || !strings.HasPrefix(got[1], "delta:") || !strings.HasPrefix(got[2], "done:") {
		t.Fatalf("observer order %v", got)
	}

	// Barge-in while the reply is still being generated.
	s.Submit("long story")
	until(t, st, event.TypeReplyDelta)
	until(t, st, event.TypeReplyDelta)
	if !s.Interrupt("turn_2", "Once upon a", "barge_in") {
		t.Fatal("interrupt refused")
	}
	evs := until(t, st, event.TypeReplyInterrupted)
	last := evs[len(evs)-1]
	if last.str("heard") != "Once upon a" || last.str("reason") != "barge_in" {
		t.Fatalf("interrupted %v", last.raw)
	}
	h := s.History()
	if h[len(h)-1].Text != "Once upon a" {
		t.Fatalf("history %+v", h)
	}

	// Barge-in after the reply was complete but still playing.
	s.Submit("short")
	until(t, st, event.TypeReplyDone)
	if !s.Interrupt("turn_3", "Here", "barge_in") {
		t.Fatal("interrupt of the finished turn refused")
	}
	if e := next(t, st); e.Type != event.TypeReplyInterrupted || e.str("heard") != "Here" {
		t.Fatalf("%v", e.raw)
	}
	if h := s.History(); h[len(h)-1].Text != "Here" {
		t.Fatalf("history %+v", h)
	}
	if s.Interrupt("turn_1", "x", "barge_in") {
		t.Fatal("an old turn was interrupted")
	}
	close(release)
}

func TestHandleJSON(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	ctx := context.Background()
	for _, c := range []struct{ in, field string }{
		{`{"type":"input.text","text":5}`, "text"},
		{`{"type":"nope"}`, "type"},
		{`{`, ""},
	} {
		if err := s.HandleJSON(ctx, []byte(c.in)); err == nil {
			t.Fatalf("%s accepted", c.in)
		}
		e := next(t, st)
		var body event.Error
		b, _ := json.Marshal(e.raw)
		_ = json.Unmarshal(b, &body)
		if e.Type != event.TypeError || body.Error.Field != c.field || body.Error.Type != event.ErrInvalidRequest {
			t.Fatalf("%s: %v", c.in, e.raw)
		}
	}
	if err := s.HandleJSON(ctx, []byte(`{"type":"hello","device":"browser","resume_token":"rt_x"}`)); !errors.Is(err, session.ErrAlreadyAttached) {
		t.Fatalf("resume hello: %v", err)
	}
	next(t, st)
	if err := s.HandleJSON(ctx, []byte(`{"type":"input.text","text":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	until(t, st, event.TypeReplyDone)
}

// A device without render confirmation cannot ack: no timers, must speak.
func TestNoRenderConfirmation(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, clk)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.Mentra})
	_ = s.Handle(context.Background(), &event.InputText{Text: "I want to end my life"})
	evs := until(t, st, event.TypeReplyDone)
	e := evs[index(evs, event.TypeSafetyCard)]
	if string(e.raw["requires_ack"]) != "false" || string(e.raw["must_speak"]) != "true" || clk.Pending() != 0 {
		t.Fatalf("mentra card %s %s, %d timers", e.raw["requires_ack"], e.raw["must_speak"], clk.Pending())
	}
}

func TestOnClosed(t *testing.T) {
	var mu sync.Mutex
	closed := map[string]int{}
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: echo(), Safety: keywordSafety{}, Layout: testLayout,
		OnClosed: func(s *session.Session) { mu.Lock(); closed[s.ID()]++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := m.Open(owner, nil)
	b, _, _ := m.Open(owner, nil)
	if err := m.End(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	_ = a.Close(context.Background())
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if closed[a.ID()] != 1 || closed[b.ID()] != 1 || m.Len() != 0 {
		t.Fatalf("closed %v, live %d", closed, m.Len())
	}
}

// typedLog is a Subscriber that records what it is given.
type typedLog struct {
	got    []string
	card   event.SafetyCard
	spoken []session.SpokenSafety
	text   strings.Builder
}

func (l *typedLog) SpeakSafety(sp session.SpokenSafety) {
	l.got = append(l.got, "speak/"+sp.Why)
	l.spoken = append(l.spoken, sp)
}

// typedUntil reads events, dispatching each to l, until one of type want,
// and returns all read.
func typedUntil(t *testing.T, st *session.Stream, l *typedLog, want event.Type) []ev {
	t.Helper()
	var out []ev
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		e, err := st.NextEvent(ctx)
		cancel()
		if err != nil {
			t.Fatalf("next event: %v (so far %v)", err, types(out))
		}
		e.Dispatch(l)
		var x ev
		if err := json.Unmarshal(e.Data, &x.Envelope); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(e.Data, &x.raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
		if x.Type == want {
			return out
		}
	}
}

func (l *typedLog) Notice(n event.Notice)         { l.got = append(l.got, "notice/"+n.Kind) }
func (l *typedLog) SafetyCard(c event.SafetyCard) { l.got = append(l.got, "card"); l.card = c }
func (l *typedLog) ReplyDelta(d event.ReplyDelta) {
	l.got = append(l.got, "delta")
	l.text.WriteString(d.Delta)
}
func (l *typedLog) ReplyDone(d event.ReplyDone)             { l.got = append(l.got, "done/"+d.Level.String()) }
func (l *typedLog) ReplyInterrupted(event.ReplyInterrupted) { l.got = append(l.got, "interrupted") }

// A stream's typed events are the values its JSON was encoded from, in
// wire order: the disclosure, the card before the reply, the reply.
func TestStreamDispatchesTypedEvents(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, nil)
	s, st, err := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Handle(context.Background(), &event.InputText{Text: "I want to end my life"})
	var l typedLog
	var wire event.SafetyCard
	for {
		e, err := st.NextEvent(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		e.Dispatch(&l)
		if e.Type == event.TypeSafetyCard {
			if err := json.Unmarshal(e.Data, &wire); err != nil {
				t.Fatal(err)
			}
		}
		if e.Type == event.TypeReplyDone {
			break
		}
	}
	got := strings.Join(l.got, ",")
	if !strings.HasPrefix(got, "notice/ai_disclosure,card,delta") || !strings.HasSuffix(got, "done/crisis") {
		t.Fatalf("typed events %s", got)
	}
	if !reflect.DeepEqual(l.card, wire) {
		t.Fatalf("typed card %+v\nwire card %+v", l.card, wire)
	}
	if l.card.Level != safety.LevelCrisis || len(l.card.Resources) != 1 || l.text.Len() == 0 {
		t.Fatalf("card %+v, text %q", l.card, l.text.String())
	}
}
