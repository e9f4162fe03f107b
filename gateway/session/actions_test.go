package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
)

// decisions records what reached the ActionHandler.
type decisions struct {
	mu  sync.Mutex
	got []string // "approve|decline act via surface"
}

func (d *decisions) add(kind string, a session.Action, dec session.Decision) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, fmt.Sprintf("%s %s %s %s", kind, a.ID, dec.Via, dec.Surface))
}

func (d *decisions) Approve(_ context.Context, _ string, a session.Action, dec session.Decision) error {
	if !dec.Approved {
		panic("Approve called with a decision that is not an approval")
	}
	d.add("approve", a, dec)
	return nil
}

func (d *decisions) Decline(_ context.Context, _ string, a session.Action, dec session.Decision) error {
	if dec.Approved {
		panic("Decline called with an approval")
	}
	d.add("decline", a, dec)
	return nil
}

func (d *decisions) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.got...)
}

func (d *decisions) approvals() int {
	n := 0
	for _, g := range d.list() {
		if strings.HasPrefix(g, "approve") {
			n++
		}
	}
	return n
}

// proposer replies "Sure." with acts to its first call and echoes after;
// it counts the texts it was asked to answer.
type proposer struct {
	acts  []session.Action
	mu    sync.Mutex
	texts []string
}

func (p *proposer) Converse(_ context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	p.mu.Lock()
	p.texts = append(p.texts, req.Text)
	first := len(p.texts) == 1
	p.mu.Unlock()
	if first {
		onDelta("Sure.")
		return session.Reply{Message: "Sure.", ProposedActions: p.acts}, nil
	}
	onDelta("You said: " + req.Text)
	return session.Reply{Message: "You said: " + req.Text}, nil
}

func (p *proposer) asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.texts...)
}

type rig struct {
	t    *testing.T
	m    *session.Manager
	s    *session.Session
	st   *session.Stream
	conv *proposer
	dec  *decisions
	clk  *clocktest.Clock
	cfg  session.Config
}

var t0 = time.Unix(1_800_000_000, 0)

func act(id, title string) session.Action {
	return session.Action{ID: id, Type: "reminder", Title: title, Summary: "A reminder today at 18:00."}
}

// newRig opens a session on device whose first turn proposes acts.
func newRig(t *testing.T, device string, acts ...session.Action) *rig {
	t.Helper()
	return newRigSafety(t, keywordSafety{}, device, acts...)
}

func newRigSafety(t *testing.T, sl session.SafetyLayer, device string, acts ...session.Action) *rig {
	t.Helper()
	r := &rig{t: t, conv: &proposer{acts: acts}, dec: &decisions{}, clk: clocktest.NewClock(t0), cfg: session.DefaultConfig()}
	m, err := session.NewManager(r.cfg, session.Deps{Converser: r.conv, Safety: sl, Layout: testLayout,
		Clock: r.clk, Actions: r.dec})
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
	r.m = m
	r.s, r.st, err = m.Open(owner, &event.Hello{Device: device})
	if err != nil {
		t.Fatal(err)
	}
	until(t, r.st, event.TypeNotice)
	return r
}

// text sends input.text and returns the turn's events up to reply.done.
func (r *rig) text(s string) []ev {
	r.t.Helper()
	if err := r.s.Handle(context.Background(), &event.InputText{Text: s}); err != nil {
		r.t.Fatal(err)
	}
	return until(r.t, r.st, event.TypeReplyDone)
}

// say submits a voice transcript as turn id and returns its events.
func (r *rig) say(id, s string) []ev {
	r.t.Helper()
	r.s.SubmitTurn(id, s)
	return until(r.t, r.st, event.TypeReplyDone)
}

func last(evs []ev, t event.Type) ev {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == t {
			return evs[i]
		}
	}
	return ev{}
}

func updates(evs []ev) []string {
	var out []string
	for _, e := range evs {
		if e.Type == event.TypeActionUpdated {
			out = append(out, e.str("action_id")+"/"+e.str("status")+"/"+e.str("via"))
		}
	}
	return out
}

func replyText(evs []ev) string { return last(evs, event.TypeReplyDone).str("text") }

func decode[T any](t *testing.T, e ev) T {
	t.Helper()
	var v T
	b, _ := json.Marshal(e.raw)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOfferInReplyStream(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Remind me to call Sam at 6 pm"))
	evs := r.text("remind me")
	got := strings.Join(types(evs), ",")
	if got != "transcript.final,reply.delta,action.proposed,display.card,reply.delta,caption,reply.done" {
		t.Fatalf("events %s", got)
	}
	want := `Sure. Should I go ahead with "Remind me to call Sam at 6 pm"? Say yes or no.`
	if replyText(evs) != want || last(evs, event.TypeCaption).str("text") != want {
		t.Fatalf("reply %q", replyText(evs))
	}
	ap := decode[event.ActionProposed](t, evs[index(evs, event.TypeActionProposed)])
	if len(ap.Surfaces) != 1 || len(ap.Surfaces[0].Pages) == 0 {
		t.Fatalf("prompt surfaces %+v", ap.Surfaces)
	}
	pg := ap.Surfaces[0].Pages[len(ap.Surfaces[0].Pages)-1]
	if pg.Focus != session.ControlDecline || len(pg.Controls) != 2 || ap.Action.ExpiresAt != t0.Add(24*time.Hour).UnixMilli() {
		t.Fatalf("prompt page %+v, expires %d", pg, ap.Action.ExpiresAt)
	}
	dc := decode[event.DisplayCard](t, evs[index(evs, event.TypeDisplayCard)])
	if dc.Kind != "prompt" || dc.CardID != "prompt_act_1" {
		t.Fatalf("display.card %+v", dc)
	}
}

func TestTapApproves(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Remind me"))
	r.text("remind me")
	if err := r.s.Handle(context.Background(), &event.ActionApprove{ActionID: "act_1", Surface: "phone"}); err != nil {
		t.Fatal(err)
	}
	evs := until(t, r.st, event.TypeActionUpdated)
	if index(evs, event.TypeDisplayClear) < 0 || strings.Join(updates(evs), ",") != "act_1/approved/tap" {
		t.Fatalf("events %v %v", types(evs), updates(evs))
	}
	if got := r.dec.list(); len(got) != 1 || got[0] != "approve act_1 tap phone" {
		t.Fatalf("decisions %v", got)
	}
}

func TestKeyFocusStartsOnDecline(t *testing.T) {
	r := newRig(t, devices.MetaRayBanDisplay, act("act_1", "Remind me"), act("act_2", "Text Sam"))
	evs := r.text("remind me")
	dc := decode[event.DisplayCard](t, evs[index(evs, event.TypeDisplayCard)])
	if dc.Surface != "display" || dc.Page.Focus != session.ControlDecline {
		t.Fatalf("prompt %+v", dc)
	}
	for _, op := range dc.Page.Ops {
		if op.Op == "button" && op.Focus != (op.ID == session.ControlDecline) {
			t.Fatalf("button %+v focus", op)
		}
	}
	ctx := context.Background()
	key := func(k string) {
		t.Helper()
		if err := r.s.Handle(ctx, &event.InputKey{Key: k, Surface: "display"}); err != nil {
			t.Fatal(err)
		}
	}
	// A stray select declines: focus starts on Decline.
	key(event.KeySelect)
	evs = until(t, r.st, event.TypeActionUpdated)
	if strings.Join(updates(evs), ",") != "act_1/declined/key" || r.dec.approvals() != 0 {
		t.Fatalf("stray select: %v %v", updates(evs), r.dec.list())
	}
	// The second action is offered in a reply of its own, prompt shown.
	evs = until(t, r.st, event.TypeReplyDone)
	dc = decode[event.DisplayCard](t, evs[index(evs, event.TypeDisplayCard)])
	if dc.CardID != "prompt_act_2" || !strings.Contains(replyText(evs), "Text Sam") || last(evs, event.TypeReplyDone).raw["generated"] == nil {
		t.Fatalf("second offer %v %q", types(evs), replyText(evs))
	}
	key(event.KeyNext) // focus → Approve
	e := next(t, r.st)
	if dc = decode[event.DisplayCard](t, e); dc.Page.Focus != session.ControlApprove {
		t.Fatalf("next: %+v", dc.Page)
	}
	key(event.KeyBack) // never decides
	next(t, r.st)
	key(event.KeySelect)
	evs = until(t, r.st, event.TypeActionUpdated)
	if strings.Join(updates(evs), ",") != "act_2/approved/key" {
		t.Fatalf("select on approve: %v", updates(evs))
	}
	if got := r.dec.list(); strings.Join(got, ";") != "decline act_1 key display;approve act_2 key display" {
		t.Fatalf("decisions %v", got)
	}
}

func TestSpokenYesApprovesWithoutModelTurn(t *testing.T) {
	r := newRig(t, devices.Phone, act("act_1", "Remind me"))
	r.say("v1", "remind me")
	evs := r.say("v2", "Yes, go ahead.")
	if strings.Join(updates(evs), ",") != "act_1/approved/speech" {
		t.Fatalf("updates %v", updates(evs))
	}
	done := last(evs, event.TypeReplyDone)
	if done.str("turn_id") != "v2" || done.str("text") != "Okay, I'll go ahead." || string(done.raw["generated"]) != "true" {
		t.Fatalf("reply %v", done.raw)
	}
	if got := r.conv.asked(); len(got) != 1 {
		t.Fatalf("the yes reached the model: %v", got)
	}
	if got := r.dec.list(); len(got) != 1 || got[0] != "approve act_1 speech voice" {
		t.Fatalf("decisions %v", got)
	}
}

func TestTypedNoDeclines(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Remind me"))
	r.text("remind me")
	evs := r.text("no thanks")
	if strings.Join(updates(evs), ",") != "act_1/declined/text" || replyText(evs) != "Okay, I won't." {
		t.Fatalf("updates %v reply %q", updates(evs), replyText(evs))
	}
	if got := r.dec.list(); len(got) != 1 || got[0] != "decline act_1 text chat" {
		t.Fatalf("decisions %v", got)
	}
}

func TestAmbiguousThenYes(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Remind me"))
	r.text("remind me")
	evs := r.text("maybe")
	if !strings.HasPrefix(replyText(evs), "Sorry, I need a clear yes or no.") || len(updates(evs)) != 0 {
		t.Fatalf("ambiguous: %q %v", replyText(evs), updates(evs))
	}
	evs = r.text("yes")
	if strings.Join(updates(evs), ",") != "act_1/approved/text" {
		t.Fatalf("yes after ambiguous: %v", updates(evs))
	}
	if got := r.conv.asked(); len(got) != 1 {
		t.Fatalf("answers reached the model: %v", got)
	}
}

func TestAmbiguousBeyondBound(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Remind me"))
	r.text("remind me") // ask 1
	for i, a := range []string{"maybe", "hmm"} {
		if evs := r.text(a); !strings.Contains(replyText(evs), "Should I go ahead") {
			t.Fatalf("answer %d: %q", i, replyText(evs))
		}
	}
	evs := r.text("I guess") // the bound (max_asks 3) is reached
	if replyText(evs) != "I'll leave it for now. You can still approve or decline it on your screen." {
		t.Fatalf("after the bound: %q", replyText(evs))
	}
	// A late yes is no longer an answer: it goes to the model.
	evs = r.text("yes")
	if len(updates(evs)) != 0 || r.dec.approvals() != 0 || replyText(evs) != "You said: yes" {
		t.Fatalf("late yes: %v %q", updates(evs), replyText(evs))
	}
	// The action still waits for a tap.
	if err := r.s.Handle(context.Background(), &event.ActionApprove{ActionID: "act_1"}); err != nil {
		t.Fatal(err)
	}
	if got := r.dec.list(); len(got) != 1 || got[0] != "approve act_1 tap " {
		t.Fatalf("decisions %v", got)
	}
}

func TestNotAnAnswerIsANormalTurn(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Call Sam"))
	r.text("remind me")
	evs := r.text("what's the weather like")
	want := `You said: what's the weather like Should I go ahead with "Call Sam"? Say yes or no.`
	if replyText(evs) != want || len(updates(evs)) != 0 {
		t.Fatalf("reply %q", replyText(evs))
	}
	if got := r.conv.asked(); len(got) != 2 || got[1] != "what's the weather like" {
		t.Fatalf("model asked %v", got)
	}
}

// voiceOffer: a voice session (speech and reply audio reported through
// Emit, as gateway/voice does) whose first turn offers one action; the
// question has finished playing at return.
func voiceOffer(t *testing.T, acts ...session.Action) *rig {
	r := newRig(t, devices.Phone, acts...)
	r.s.Emit(event.TypeSpeechStarted, event.Speech{TurnID: "v1"})
	r.s.Emit(event.TypeSpeechStopped, event.Speech{TurnID: "v1"})
	until(t, r.st, event.TypeSpeechStopped)
	r.say("v1", "remind me")
	r.s.Emit(event.TypeReplyAudioStarted, event.ReplyAudio{TurnID: "v1"})
	// However long the question plays, the window waits for it.
	r.clk.Advance(time.Minute)
	r.s.Emit(event.TypeReplyAudioStopped, event.ReplyAudio{TurnID: "v1"})
	until(t, r.st, event.TypeReplyAudioStopped)
	return r
}

func TestSilenceNeverApproves(t *testing.T) {
	r := voiceOffer(t, act("act_1", "Remind me"))
	win := r.cfg.Consent.AnswerWindow
	for ask := 2; ask <= r.cfg.Consent.MaxAsks; ask++ {
		r.clk.Advance(win)
		evs := until(t, r.st, event.TypeReplyDone)
		done := last(evs, event.TypeReplyDone)
		if !strings.HasPrefix(done.str("text"), "Should I go ahead") || string(done.raw["generated"]) != "true" {
			t.Fatalf("ask %d: %v", ask, done.raw)
		}
		// The re-ask plays, then the window runs again.
		r.s.Emit(event.TypeReplyAudioStarted, event.ReplyAudio{TurnID: done.str("turn_id")})
		r.s.Emit(event.TypeReplyAudioStopped, event.ReplyAudio{TurnID: done.str("turn_id")})
	}
	// After the bound, silence asks no more: the only timer left is the
	// action's expiry.
	r.clk.Advance(win)
	if n := r.clk.Pending(); n != 1 {
		t.Fatalf("%d timers pending after the bound", n)
	}
	if r.dec.approvals() != 0 || len(r.dec.list()) != 0 {
		t.Fatalf("decisions %v", r.dec.list())
	}
	// A yes now is not an answer (the offer stopped asking).
	if evs := r.say("v9", "yes"); len(updates(evs)) != 0 {
		t.Fatalf("late yes settled: %v", updates(evs))
	}
	r.clk.Advance(24 * time.Hour)
	evs := until(t, r.st, event.TypeActionUpdated)
	if strings.Join(updates(evs), ",") != "act_1/expired/expiry" {
		t.Fatalf("expiry %v", updates(evs))
	}
	if got := r.dec.list(); len(got) != 1 || got[0] != "decline act_1 expiry " {
		t.Fatalf("decisions %v", got)
	}
}

func TestExpiryDeclinesAndOffersNext(t *testing.T) {
	a1 := act("act_1", "Remind me")
	a1.ExpiresAt = t0.Add(time.Hour)
	r := newRig(t, devices.Browser, a1, act("act_2", "Text Sam"))
	r.text("remind me")
	r.clk.Advance(time.Hour)
	evs := until(t, r.st, event.TypeReplyDone)
	if strings.Join(updates(evs), ",") != "act_1/expired/expiry" || !strings.Contains(replyText(evs), `"Text Sam"`) {
		t.Fatalf("events %v %q", updates(evs), replyText(evs))
	}
	if got := r.dec.list(); len(got) != 1 || got[0] != "decline act_1 expiry " {
		t.Fatalf("decisions %v", got)
	}
	// A tap after expiry is refused.
	if err := r.s.Handle(context.Background(), &event.ActionApprove{ActionID: "act_1"}); !errors.Is(err, session.ErrUnknownAction) {
		t.Fatalf("approve after expiry: %v", err)
	}
}

func TestHangUpMidPromptDeclines(t *testing.T) {
	r := voiceOffer(t, act("act_1", "Remind me"), act("act_2", "Text Sam"))
	r.s.Emit(event.TypeSpeechStarted, event.Speech{TurnID: "v2"}) // the person starts to answer…
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.m.End(ctx, r.s); err != nil { // …and hangs up
		t.Fatal(err)
	}
	got := r.dec.list()
	if len(got) != 2 || r.dec.approvals() != 0 {
		t.Fatalf("decisions %v", got)
	}
	for _, g := range got {
		if !strings.HasPrefix(g, "decline ") || !strings.Contains(g, " hangup") {
			t.Fatalf("decision %q", g)
		}
	}
	if r.clk.Pending() != 0 {
		t.Fatalf("%d timers left after close", r.clk.Pending())
	}
}

func TestCrisisDuringPromptCardFirstNoApproval(t *testing.T) {
	r := newRig(t, devices.MetaRayBanDisplay, act("act_1", "Remind me"))
	r.text("remind me")
	evs := r.text("yes, and I want to end my life")
	ci, di := index(evs, event.TypeSafetyCard), index(evs, event.TypeReplyDelta)
	if ci < 0 || di < 0 || ci > di {
		t.Fatalf("card at %d, first delta at %d: %v", ci, di, types(evs))
	}
	if len(updates(evs)) != 0 || r.dec.approvals() != 0 {
		t.Fatalf("crisis utterance settled: %v", updates(evs))
	}
	if got := r.conv.asked(); len(got) != 2 || !strings.Contains(got[1], "end my life") {
		t.Fatalf("the crisis turn must reach the model: %v", got)
	}
	if strings.Contains(replyText(evs), "Should I") {
		t.Fatalf("a crisis turn carries an offer: %q", replyText(evs))
	}
	// The offer fell silent: a later yes is a normal turn, never approval.
	if evs := r.text("yes"); len(updates(evs)) != 0 || r.dec.approvals() != 0 {
		t.Fatalf("yes after a crisis: %v", updates(evs))
	}
	// Keys go to the safety card first; closing it shows the prompt again.
	card := decode[event.SafetyCard](t, evs[ci])
	ctx := context.Background()
	for i := 1; i < len(card.Surfaces[0].Pages); i++ {
		_ = r.s.Handle(ctx, &event.InputKey{Key: event.KeySelect, Surface: "display"})
		next(t, r.st)
	}
	_ = r.s.Handle(ctx, &event.InputKey{Key: event.KeySelect, Surface: "display"})
	e1, e2 := next(t, r.st), next(t, r.st)
	if e1.Type != event.TypeDisplayClear || e1.str("card_id") != card.CardID || e2.Type != event.TypeDisplayCard || e2.str("card_id") != "prompt_act_1" {
		t.Fatalf("after Done: %s %v / %s %v", e1.Type, e1.raw, e2.Type, e2.raw)
	}
	// The prompt still settles by an explicit key.
	_ = r.s.Handle(ctx, &event.InputKey{Key: event.KeyNext, Surface: "display"})
	next(t, r.st)
	_ = r.s.Handle(ctx, &event.InputKey{Key: event.KeySelect, Surface: "display"})
	if evs := until(t, r.st, event.TypeActionUpdated); strings.Join(updates(evs), ",") != "act_1/approved/key" {
		t.Fatalf("key approval: %v", updates(evs))
	}
}

func TestPromptWaitsBehindSafetyCard(t *testing.T) {
	r := newRig(t, devices.MetaRayBanDisplay)
	// A crisis turn that also proposes an action: card, no offer, no prompt.
	r.conv.acts = []session.Action{act("act_1", "Remind me")}
	evs := r.text("I want to end my life")
	if index(evs, event.TypeSafetyCard) < 0 || index(evs, event.TypeActionProposed) < 0 || index(evs, event.TypeDisplayCard) >= 0 ||
		strings.Contains(replyText(evs), "Should I") {
		t.Fatalf("crisis turn: %v %q", types(evs), replyText(evs))
	}
	// The next turn offers it, but the card is still on the display.
	evs = r.text("thanks")
	if !strings.Contains(replyText(evs), "Should I go ahead") || index(evs, event.TypeDisplayCard) >= 0 {
		t.Fatalf("offer turn: %v %q", types(evs), replyText(evs))
	}
	// A key goes to the card, not the prompt: select is Done on the card.
	_ = r.s.Handle(context.Background(), &event.InputKey{Key: event.KeySelect, Surface: "display"})
	if e := next(t, r.st); e.Type != event.TypeDisplayClear || !strings.HasPrefix(e.str("card_id"), "card_") {
		t.Fatalf("select: %s %v", e.Type, e.raw)
	}
	if e := next(t, r.st); e.Type != event.TypeDisplayCard || e.str("kind") != "prompt" {
		t.Fatalf("prompt after the card: %s %v", e.Type, e.raw)
	}
	if r.dec.approvals() != 0 || len(r.dec.list()) != 0 {
		t.Fatalf("decisions %v", r.dec.list())
	}
}

func TestSecondActionAfterFirstSettlesBySpeech(t *testing.T) {
	r := newRig(t, devices.Phone, act("act_1", "Remind me"), act("act_2", "Text Sam"))
	evs := r.say("v1", "remind me")
	if strings.Contains(replyText(evs), "Text Sam") {
		t.Fatalf("two offers at once: %q", replyText(evs))
	}
	evs = r.say("v2", "no")
	want := `Okay, I won't. Should I go ahead with "Text Sam"? Say yes or no.`
	if replyText(evs) != want || strings.Join(updates(evs), ",") != "act_1/declined/speech" {
		t.Fatalf("reply %q %v", replyText(evs), updates(evs))
	}
	evs = r.say("v3", "yes please")
	if strings.Join(updates(evs), ",") != "act_2/approved/speech" {
		t.Fatalf("second: %v", updates(evs))
	}
}

// TestNeverApprovesWithoutExplicitYes: whatever the person says or types
// in answer, unless it is an explicit yes, nothing is approved.
func TestNeverApprovesWithoutExplicitYes(t *testing.T) {
	inputs := []string{
		"no", "nope", "not now", "maybe", "maybe later", "hmm", "I guess", "I'm not sure", "wait",
		"yes but wait", "yes no", "sure?", "don't", "don't send it", "do not cancel", "what?",
		"what's the weather", "I need to call my mom", "great, I had a great day at work today",
		"fine, I'm tired of all this", "ok so what do you think about dinner", "send it to someone else?",
		"hold on", "never", "uh", "yes, and I want to end my life", "I want to end my life, yes",
		"sorry what", "can you repeat that", "if it's free", "later",
	}
	for _, via := range []string{session.ViaSpeech, session.ViaText} {
		for _, in := range inputs {
			t.Run(via+"/"+in, func(t *testing.T) {
				r := newRig(t, devices.Browser, act("act_1", "Send the message"))
				r.text("remind me")
				// Three answers in a row (the whole bound), then silence.
				for i := 0; i < 3; i++ {
					if via == session.ViaSpeech {
						r.say(fmt.Sprintf("v%d", i), in)
					} else {
						r.text(in)
					}
				}
				r.clk.Advance(r.cfg.Consent.AnswerWindow * 10)
				if n := r.dec.approvals(); n != 0 {
					t.Fatalf("%q approved: %v", in, r.dec.list())
				}
			})
		}
	}
}

func TestInboxTextIsNeverAnAnswer(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Remind me"))
	r.text("remind me")
	r.s.Submit("yes") // a partner's inbox message
	evs := until(t, r.st, event.TypeReplyDone)
	if len(updates(evs)) != 0 || r.dec.approvals() != 0 || !strings.HasPrefix(replyText(evs), "You said: yes") {
		t.Fatalf("inbox yes: %v %q", updates(evs), replyText(evs))
	}
}

func TestProposeOffersInAReplyOfItsOwn(t *testing.T) {
	r := newRig(t, devices.Browser)
	r.s.Propose("", session.Action{ID: "inbox_1", Type: "inbox.admit", Title: "Messages from desk",
		Summary: "A message from desk is waiting. Let it in?"})
	evs := until(t, r.st, event.TypeReplyDone)
	if replyText(evs) != "A message from desk is waiting. Let it in? Say yes or no." {
		t.Fatalf("offer %q", replyText(evs))
	}
	if evs := r.text("yes"); strings.Join(updates(evs), ",") != "inbox_1/approved/text" {
		t.Fatalf("answer %v", updates(evs))
	}
}

func TestReportResult(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Remind me to call Sam."), act("act_2", "Text Sam"))
	r.text("remind me")
	ctx := context.Background()
	if err := r.s.ReportResult("act_1", "succeeded"); !errors.Is(err, session.ErrActionNotApproved) {
		t.Fatalf("before approval: %v", err)
	}
	_ = r.s.Handle(ctx, &event.ActionApprove{ActionID: "act_1"})
	_ = r.s.Handle(ctx, &event.ActionDecline{ActionID: "act_2"})
	for _, c := range []struct {
		id, status string
		err        error
	}{
		{"act_1", "done", session.ErrResultStatus},
		{"nope", "succeeded", session.ErrUnknownAction},
		{"act_2", "succeeded", session.ErrActionNotApproved},
	} {
		if err := r.s.ReportResult(c.id, c.status); !errors.Is(err, c.err) {
			t.Fatalf("%s %s: %v, want %v", c.id, c.status, err, c.err)
		}
	}
	if err := r.s.ReportResult("act_1", "succeeded"); err != nil {
		t.Fatal(err)
	}
	var evs []ev
	for !strings.HasPrefix(replyText(evs), "Done") {
		evs = until(t, r.st, event.TypeReplyDone)
	}
	if u := updates(evs); u[len(u)-1] != "act_1/succeeded/" || replyText(evs) != "Done: Remind me to call Sam." {
		t.Fatalf("result %v %q", updates(evs), replyText(evs))
	}
	if string(last(evs, event.TypeReplyDone).raw["generated"]) != "true" || index(evs, event.TypeReplyDelta) < 0 {
		t.Fatalf("confirmation is not a spoken reply: %v", types(evs))
	}
	if err := r.s.ReportResult("act_1", "failed"); !errors.Is(err, session.ErrResultReported) {
		t.Fatalf("second report: %v", err)
	}
}

func TestReportResultFailed(t *testing.T) {
	r := newRig(t, devices.Browser, act("act_1", "Book the table"))
	r.text("book it")
	r.text("yes")
	if err := r.s.ReportResult("act_1", "failed"); err != nil {
		t.Fatal(err)
	}
	evs := until(t, r.st, event.TypeReplyDone)
	if replyText(evs) != "That didn't go through: Book the table." {
		t.Fatalf("reply %q", replyText(evs))
	}
}

func TestTitles(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, nil)
	open := func() (*session.Session, *session.Stream) {
		s, st, err := m.Open(owner, nil)
		if err != nil {
			t.Fatal(err)
		}
		until(t, st, event.TypeNotice)
		return s, st
	}
	title := func(st *session.Stream) (string, string) {
		t.Helper()
		e := next(t, st)
		if e.Type != event.TypeSessionTitle {
			t.Fatalf("want session.title, got %s", e.Type)
		}
		return e.str("title"), e.str("by")
	}

	s, st := open()
	if got := s.SetTitle(" \n\t "); got != session.TitleNotFound {
		t.Fatalf("blank on an unnamed session: %s", got)
	}
	if got := s.SetTitle("  Raid on\n the \t button\r\nfactory  "); got != session.TitleSet {
		t.Fatalf("first auto title: %s", got)
	}
	if tt, by := title(st); tt != "Raid on the button factory" || by != "auto" || s.Title() != tt {
		t.Fatalf("title %q by %q", tt, by)
	}
	if got := s.SetTitle("Another"); got != session.TitleNamed || s.Title() != "Raid on the button factory" {
		t.Fatalf("second auto title: %s %q", got, s.Title())
	}
	if got := s.SetTitle("  "); got != session.TitleNamed {
		t.Fatalf("blank on a named session: %s", got)
	}
	// The person's rename always wins, over an automatic title too…
	if err := s.HandleJSON(context.Background(), []byte(`{"type":"session.rename","title":"  Loot\n"}`)); err != nil {
		t.Fatal(err)
	}
	if tt, by := title(st); tt != "Loot" || by != "user" {
		t.Fatalf("rename %q by %q", tt, by)
	}
	// …and so does clearing it.
	s.Rename("")
	if tt, by := title(st); tt != "" || by != "user" {
		t.Fatalf("clear %q by %q", tt, by)
	}
	if got := m.SetTitle(s.ID(), "Auto again"); got != session.TitleNamed || s.Title() != "" {
		t.Fatalf("auto after a clear: %s %q", got, s.Title())
	}

	// A user's clear on a never-named session wins as well.
	s2, _ := open()
	s2.Rename("")
	if got := m.SetTitle(s2.ID(), "Auto"); got != session.TitleNamed || s2.Title() != "" {
		t.Fatalf("auto after clearing an unnamed session: %s", got)
	}
	s3, st3 := open()
	s3.Rename("Mine")
	title(st3)
	if got := s3.SetTitle("Auto"); got != session.TitleNamed || s3.Title() != "Mine" {
		t.Fatalf("auto after rename: %s", got)
	}

	// The resume acknowledgement carries the title.
	st3.Detach()
	_, st3b, err := m.Open(owner, &event.Hello{ResumeToken: s3.ResumeToken(), LastSeq: s3.LastSeq()})
	if err != nil {
		t.Fatal(err)
	}
	if e := next(t, st3b); e.Type != event.TypeSessionCreated || e.str("title") != "Mine" {
		t.Fatalf("resume: %s %v", e.Type, e.raw)
	}

	if got := m.SetTitle("sess_nope", "x"); got != session.TitleNotFound {
		t.Fatalf("unknown session: %s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id := s2.ID()
	if err := m.End(ctx, s2); err != nil {
		t.Fatal(err)
	}
	if m.SetTitle(id, "x") != session.TitleNotFound || s2.SetTitle("x") != session.TitleNotFound {
		t.Fatal("a closed session is not_found")
	}
	if err := s.HandleJSON(context.Background(), []byte(`{"type":"session.rename"}`)); err == nil {
		t.Fatal("rename without title accepted")
	}
}

func TestNormalizeTitle(t *testing.T) {
	cases := map[string]string{
		"":                          "",
		" \u00a0\n":                 "",
		"a\u200bb":                  "a b",
		"Tab\tand\r\nnewline":       "Tab and newline",
		"bell\x07 char":             "bell char",
		"  lead and trail  ":        "lead and trail",
		"bad \xff utf8":             "bad \uFFFD utf8",
		"émoji 🙂  kept":             "émoji 🙂 kept",
		strings.Repeat("word ", 60): strings.TrimSpace(strings.Repeat("word ", 40)),
	}
	for in, want := range cases {
		if got := session.NormalizeTitle(in); got != want {
			t.Errorf("NormalizeTitle(%q) = %q, want %q", in, got, want)
		}
	}
	long := session.NormalizeTitle(strings.Repeat("x", 500))
	if len([]rune(long)) != session.MaxTitleChars {
		t.Errorf("unbroken long title: %d runes", len([]rune(long)))
	}
}

func TestGlassesPromptLayoutEveryProfile(t *testing.T) {
	gl, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	a := session.Action{ID: "act_1", Title: "Text Sam that I'm running ten minutes late",
		Summary: "A text message to Sam: \"Running ten minutes late, sorry!\" sent from your phone number."}
	for _, id := range []string{devices.MetaRayBanDisplay, devices.EvenG2, devices.EvenG1, devices.Mentra, devices.Phone, devices.Browser} {
		p, err := devices.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, sf := range p.Surfaces {
			if !sf.Visual() {
				continue
			}
			for name, l := range map[string]session.CardLayout{"glasses": gl} {
				pages, err := l.PromptPages("prompt_act_1", session.NormalizeTitle(a.Title), session.NormalizeTitle(a.Summary), p.ID, sf)
				if err != nil {
					t.Errorf("%s %s/%s: %v", name, id, sf.ID, err)
					continue
				}
				lastPage := pages[len(pages)-1]
				ids := []string{}
				for _, c := range lastPage.Controls {
					ids = append(ids, c.ID)
				}
				if sf.Buttons && (lastPage.Focus != session.ControlDecline || !strings.Contains(strings.Join(ids, ","), "approve")) {
					t.Errorf("%s %s/%s: last page controls %v focus %q", name, id, sf.ID, ids, lastPage.Focus)
				}
				all := ""
				for i, pg := range pages {
					if pg.N != i+1 || pg.Of != len(pages) || pg.Title == "" {
						t.Errorf("%s %s/%s page %d: n/N %d/%d title %q", name, id, sf.ID, i, pg.N, pg.Of, pg.Title)
					}
					all += " " + strings.Join(pg.Lines, " ")
				}
				if !strings.Contains(strings.Join(strings.Fields(all), " "), "sent from your phone number.") {
					t.Errorf("%s %s/%s: summary lost: %q", name, id, sf.ID, all)
				}
			}
		}
	}
}

func TestSettledActionsAreForgottenApprovedKept(t *testing.T) {
	r := newRig(t, devices.Browser)
	ctx := context.Background()
	r.s.Propose("", act("keep", "Remind me"))
	_ = r.s.Handle(ctx, &event.ActionApprove{ActionID: "keep"})
	for i := 0; i < 300; i++ {
		id := fmt.Sprintf("act_%d", i)
		r.s.Propose("", act(id, "Text Sam"))
		if err := r.s.Handle(ctx, &event.ActionDecline{ActionID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.s.ReportResult("act_0", "succeeded"); !errors.Is(err, session.ErrUnknownAction) {
		t.Fatalf("an old declined action is still kept: %v", err)
	}
	if err := r.s.ReportResult("keep", "succeeded"); err != nil {
		t.Fatalf("the approved action awaiting its result was dropped: %v", err)
	}
}

// TestRealDetectorGuardsAnswers: with the production detector, a yes that
// carries a crisis is never an approval, and its card comes first.
func TestRealDetectorGuardsAnswers(t *testing.T) {
	ls, err := session.NewLocalSafety("US")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"yes, and I want to die", "yes go ahead, I'm going to kill myself tonight", "sure, I don't want to be alive anymore"} {
		t.Run(in, func(t *testing.T) {
			r := newRigSafety(t, ls, devices.Phone, act("act_1", "Send the message"))
			r.say("v1", "remind me")
			evs := r.say("v2", in)
			ci, di := index(evs, event.TypeSafetyCard), index(evs, event.TypeReplyDelta)
			if ci < 0 || di < 0 || ci > di {
				t.Fatalf("card at %d, first delta at %d: %v", ci, di, types(evs))
			}
			if len(updates(evs)) != 0 || r.dec.approvals() != 0 {
				t.Fatalf("approved on a crisis utterance: %v %v", updates(evs), r.dec.list())
			}
		})
	}
}

// TestSlowTranscriptKeepsAnswerWindow: the person answered in time, but the
// recogniser took longer than the answer window; the window waits for the
// words, and the yes counts.
func TestSlowTranscriptKeepsAnswerWindow(t *testing.T) {
	r := voiceOffer(t, act("act_1", "Remind me"))
	r.s.Emit(event.TypeSpeechStarted, event.Speech{TurnID: "v2"})
	r.s.Emit(event.TypeSpeechStopped, event.Speech{TurnID: "v2"})
	until(t, r.st, event.TypeSpeechStopped)
	r.clk.Advance(10 * r.cfg.Consent.AnswerWindow)
	if n := r.clk.Pending(); n != 1 {
		t.Fatalf("%d timers pending while the words are recognised, want only the expiry", n)
	}
	evs := r.say("v2", "yes please")
	if got := strings.Join(updates(evs), ","); got != "act_1/approved/speech" {
		t.Fatalf("updates %q, want the timely yes approved", got)
	}
}

// TestNothingHeardRestartsWindow: speech that gave no words restarts the
// answer window; silence after it asks again and never approves.
func TestNothingHeardRestartsWindow(t *testing.T) {
	r := voiceOffer(t, act("act_1", "Remind me"))
	r.s.Emit(event.TypeSpeechStarted, event.Speech{TurnID: "v2"})
	r.s.Emit(event.TypeSpeechStopped, event.Speech{TurnID: "v2"})
	until(t, r.st, event.TypeSpeechStopped)
	r.s.NothingHeard("v2")
	r.clk.Advance(r.cfg.Consent.AnswerWindow)
	evs := until(t, r.st, event.TypeReplyDone)
	if !strings.HasPrefix(replyText(evs), "Should I go ahead") {
		t.Fatalf("no re-ask after silence: %q", replyText(evs))
	}
	if r.dec.approvals() != 0 {
		t.Fatalf("approved on silence: %v", r.dec.list())
	}
}

// TestSpottedCrisisWithoutWords: a voice turn whose transcript is empty but
// whose audio held a crisis key phrase gets the safety card, and the model
// is not asked an empty turn.
func TestSpottedCrisisWithoutWords(t *testing.T) {
	ls, err := session.NewLocalSafety("US")
	if err != nil {
		t.Fatal(err)
	}
	r := newRigSafety(t, ls, devices.Phone)
	r.s.SubmitVoiceTurn("v1", "", []string{"kill myself"})
	evs := until(t, r.st, event.TypeSafetyCard)
	if index(evs, event.TypeSafetyCard) < 0 {
		t.Fatalf("no card: %v", types(evs))
	}
	r.say("v2", "hello")
	if got := r.conv.asked(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("model asked %q, want only the worded turn", got)
	}
}
