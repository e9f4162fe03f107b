package session_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// fakeClassifier hands out classifications the test answers by hand, on
// the session's fake clock (Wait's budget is a timer on it).
type fakeClassifier struct {
	clk   clock.Clock
	mu    sync.Mutex
	texts []string
	all   []*fakeClassification
	made  chan *fakeClassification
}

func newFakeClassifier(clk clock.Clock) *fakeClassifier {
	return &fakeClassifier{clk: clk, made: make(chan *fakeClassification, 16)}
}

func (f *fakeClassifier) StartClassify(ctx context.Context, text string) session.Classification {
	c := &fakeClassification{clk: f.clk, done: make(chan struct{}), reached: [2]chan struct{}{make(chan struct{}), make(chan struct{})}}
	f.mu.Lock()
	f.texts = append(f.texts, text)
	f.all = append(f.all, c)
	f.mu.Unlock()
	f.made <- c
	return c
}

// next is the classification of the next turn.
func (f *fakeClassifier) next(t *testing.T) *fakeClassification {
	t.Helper()
	select {
	case c := <-f.made:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no turn was classified")
		return nil
	}
}

type fakeClassification struct {
	clk     clock.Clock
	mu      sync.Mutex
	level   safety.Level
	fin     bool
	stopped bool
	done    chan struct{}
	reached [2]chan struct{}
}

// answer raises the level to l; final ends the classification.
func (c *fakeClassification) answer(l safety.Level, final bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for x := c.level + 1; x <= l; x++ {
		close(c.reached[x-1])
	}
	c.level = max(c.level, l)
	if final && !c.fin {
		c.fin = true
		close(c.done)
	}
}

func (c *fakeClassification) Wait(budget time.Duration) safety.Level {
	select {
	case <-c.done:
		return c.Level()
	default:
	}
	if budget > 0 {
		fired := make(chan struct{})
		t := c.clk.AfterFunc(budget, func() { close(fired) })
		defer t.Stop()
		select {
		case <-c.done:
		case <-c.reached[1]:
		case <-fired:
		}
	}
	return c.Level()
}

func (c *fakeClassification) Level() safety.Level {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.level
}

func (c *fakeClassification) Reached(l safety.Level) <-chan struct{} { return c.reached[l-1] }
func (c *fakeClassification) Done() <-chan struct{}                  { return c.done }

func (c *fakeClassification) Stop() {
	c.answer(safety.LevelNone, true)
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}

const budget = 300 * time.Millisecond

func classifiedManager(t *testing.T, conv session.Converser, clk *clocktest.Clock) (*session.Manager, *fakeClassifier) {
	t.Helper()
	fc := newFakeClassifier(clk)
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: conv, Safety: &session.LocalSafety{Detector: safety.NewDetector(), DefaultRegion: "US"},
		Layout: testLayout, Clock: clk, Classifier: fc, ClassifyBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m, fc
}

// waitBudget waits until the turn waits on the classifier's budget, then
// lets it pass.
func waitBudget(t *testing.T, clk *clocktest.Clock) {
	t.Helper()
	clk.WaitArmed(t, func(a clocktest.Armed) bool { return a.D > 0 && a.D <= budget })
	clk.Advance(budget)
}

// The local detector says none, the classifier says crisis within the
// budget: the card (the catalog's crisis resources) goes out before the
// reply's first text, and the turn is crisis. Only the turn's text is
// classified.
func TestClassifierCrisisBeforeTheReply(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m, fc := classifiedManager(t, echo(), clk)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "the usual, nothing new"})
	fc.next(t).answer(safety.LevelCrisis, true)
	evs := until(t, st, event.TypeReplyDone)
	ci, di := index(evs, event.TypeSafetyCard), index(evs, event.TypeReplyDelta)
	if ci < 0 || di < ci || final(evs).str("safety_level") != "crisis" {
		t.Fatalf("card %d, first delta %d, level %s: %v", ci, di, final(evs).str("safety_level"), types(evs))
	}
	var c event.SafetyCard
	decodeEv(t, evs[ci], &c)
	if c.Level != safety.LevelCrisis || len(c.Resources) == 0 {
		t.Fatalf("card %+v", c)
	}
	if fc.texts[0] != "the usual, nothing new" {
		t.Fatalf("classified %q", fc.texts)
	}
}

// A classifier that says nothing within the budget holds the reply no
// longer than the budget and lowers nothing; its crisis after that is a
// late detection: the card at once, the rest of the reply cut short
// (reply.interrupted, reason safety, heard = what was sent), and the
// resources spoken.
func TestLateClassifierCrisisInterruptsTheReply(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	more := make(chan struct{})
	conv := &scripted{fn: func(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
		req.SafetyFinal(safety.Assessment{})
		onDelta("First part. ")
		select {
		case <-more:
		case <-ctx.Done():
			return session.Reply{}, ctx.Err()
		}
		onDelta("never sent")
		return session.Reply{Message: "First part. never sent"}, nil
	}}
	m, fc := classifiedManager(t, conv, clk)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	var l typedLog
	typedUntil(t, st, &l, event.TypeNotice)
	// The premise: a text the real local detector judges none ("just
	// thinking out loud" was one until the round-2 detector, which shows an
	// elevated card on it).
	const text = "I would like to go home"
	if a := safety.NewDetector().Assess(nil, text, nil, safety.RegionPrefs{User: "US"}); a.Level != safety.LevelNone || a.DisplayRequired {
		t.Fatalf("the local detector judges %q %v: pick a text it calls none", text, a.Level)
	}
	_ = s.Handle(context.Background(), &event.InputText{Text: text})
	cl := fc.next(t)
	waitBudget(t, clk)
	evs := typedUntil(t, st, &l, event.TypeReplyDelta)
	if len(cardsOf(evs)) != 0 {
		t.Fatalf("a card with no verdict: %v", types(evs))
	}
	cl.answer(safety.LevelCrisis, true)
	evs = typedUntil(t, st, &l, event.TypeReplyInterrupted)
	close(more)
	if got := types(evs); len(got) != 2 || got[0] != string(event.TypeSafetyCard) {
		t.Fatalf("late crisis: %v", got)
	}
	if r := evs[1]; r.str("reason") != session.ReasonSafety || r.str("heard") != "First part. " {
		t.Fatalf("interrupted %s", r.raw)
	}
	if len(l.spoken) != 1 || l.spoken[0].Why != session.SpeakLate || l.spoken[0].Firm || l.spoken[0].TurnID != evs[0].str("turn_id") {
		t.Fatalf("late crisis spoken %+v", l.spoken)
	}
	if h := s.History(); len(h) != 2 || h[1].Text != "First part. " {
		t.Fatalf("history %+v", h)
	}
	// The crisis is in force: the next turn shows no second card and is
	// not spoken again.
	_ = s.Handle(context.Background(), &event.InputText{Text: "sorry"})
	fc.next(t).answer(safety.LevelNone, true)
	evs = typedUntil(t, st, &l, event.TypeReplyDone)
	if len(cardsOf(evs)) != 0 || final(evs).str("safety_level") != "crisis" || len(l.spoken) != 1 {
		t.Fatalf("after a late crisis: %v, level %s, spoken %d", types(evs), final(evs).str("safety_level"), len(l.spoken))
	}
}

// A late crisis after the reply's text is complete still shows its card
// at once and is spoken (in voice, the transport cuts the audio).
func TestLateClassifierCrisisAfterTheReply(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m, fc := classifiedManager(t, echo(), clk)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.VoiceOnly})
	var l typedLog
	typedUntil(t, st, &l, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "never mind"})
	cl := fc.next(t)
	waitBudget(t, clk)
	typedUntil(t, st, &l, event.TypeReplyDone)
	cl.answer(safety.LevelElevated, false)
	evs := typedUntil(t, st, &l, event.TypeSafetyCard)
	if final(evs).str("level") != "elevated" || len(l.spoken) != 1 || l.spoken[0].Why != session.SpeakMustSpeak || !l.spoken[0].Firm {
		t.Fatalf("late elevated on voice-only: %v spoken %+v", types(evs), l.spoken)
	}
	cl.answer(safety.LevelCrisis, true)
	evs = typedUntil(t, st, &l, event.TypeSafetyCard)
	if final(evs).str("level") != "crisis" || len(l.spoken) != 2 || l.spoken[1].Why != session.SpeakLate || !l.spoken[1].Firm {
		t.Fatalf("late crisis on voice-only: %v spoken %+v", types(evs), l.spoken)
	}
}

// A classifier never lowers the local detector's crisis, and a
// classification still running when the session closes is stopped.
func TestClassifierNeverLowers(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m, fc := classifiedManager(t, echo(), clk)
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.MetaRayBanDisplay})
	until(t, st, event.TypeNotice)
	_ = s.Handle(context.Background(), &event.InputText{Text: "I am going to kill myself tonight"})
	cl := fc.next(t)
	evs := until(t, st, event.TypeSafetyCard)
	if final(evs).str("level") != "crisis" {
		t.Fatalf("local crisis: %v", types(evs))
	}
	waitBudget(t, clk)
	evs = until(t, st, event.TypeReplyDone)
	if final(evs).str("safety_level") != "crisis" {
		t.Fatalf("level %s", final(evs).str("safety_level"))
	}
	if err := m.End(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if !cl.stopped {
		t.Fatal("the classification was not stopped when the session closed")
	}
}

// An utterance the classifier flags is never an answer to the offered
// action: its card goes out, nothing is approved, and it is a normal turn.
func TestClassifierFlagsAnAnswer(t *testing.T) {
	clk := clocktest.NewClock(t0)
	fc := newFakeClassifier(clk)
	conv := &proposer{acts: []session.Action{act("act_1", "Remind me")}}
	dec := &decisions{}
	m, err := session.NewManager(session.DefaultConfig(), session.Deps{Converser: conv, Safety: keywordSafety{}, Layout: testLayout,
		Clock: clk, Actions: dec, Classifier: fc, ClassifyBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	s, st, _ := m.Open(owner, &event.Hello{Device: devices.Phone})
	until(t, st, event.TypeNotice)
	s.SubmitTurn("v1", "remind me")
	fc.next(t).answer(safety.LevelNone, true)
	until(t, st, event.TypeReplyDone)
	s.SubmitTurn("v2", "Yes, go ahead.")
	fc.next(t).answer(safety.LevelCrisis, true)
	evs := until(t, st, event.TypeReplyDone)
	if len(cardsOf(evs)) != 1 || index(evs, event.TypeActionUpdated) >= 0 || len(dec.list()) != 0 {
		t.Fatalf("a flagged answer: %v, decisions %v", types(evs), dec.list())
	}
	if got := conv.asked(); len(got) != 2 {
		t.Fatalf("the flagged utterance did not reach the model: %v", got)
	}
}

// Only the person's own words go to the classifier: a partner's inbox
// message (Submit) is not sent.
func TestClassifierSkipsInboxText(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	m, fc := classifiedManager(t, echo(), clk)
	s, st, _ := m.Open(owner, nil)
	until(t, st, event.TypeNotice)
	s.Submit("a message from the front desk")
	until(t, st, event.TypeReplyDone)
	s.SubmitTurn("v1", "thanks")
	fc.next(t).answer(safety.LevelNone, true)
	until(t, st, event.TypeReplyDone)
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.texts) != 1 || fc.texts[0] != "thanks" {
		t.Fatalf("classified %q", fc.texts)
	}
}
