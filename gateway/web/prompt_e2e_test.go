package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/gatewaytest"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/web"
)

// remindCompanion proposes a reminder for every "remind me to …" message
// (ids act_1, act_2, … in order) and otherwise reflects the message.
type remindCompanion struct {
	mu sync.Mutex // guards n
	n  int
}

func (c *remindCompanion) Converse(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	_, what, ok := strings.Cut(req.Text, "remind me to ")
	if !ok {
		msg := "I hear you. You said: " + req.Text
		onDelta(msg)
		return session.Reply{Message: msg, Model: "remind", Provider: "test"}, nil
	}
	c.mu.Lock()
	c.n++
	id := fmt.Sprintf("act_%d", c.n)
	c.mu.Unlock()
	msg := "I can set that reminder up."
	onDelta(msg)
	return session.Reply{Message: msg, Model: "remind", Provider: "test", ProposedActions: []session.Action{{
		ID: id, Type: "reminder", Title: "Remind you to " + what, Summary: "A reminder today at 18:00.",
		Input: json.RawMessage(`{"at":"18:00"}`)}}}, nil
}

type decided struct {
	ActionID string
	session.Decision
}

// actionRecorder is the ActionHandler: it records every decision that
// reached the upstream side.
type actionRecorder struct {
	mu  sync.Mutex // guards got
	got []decided
}

func (r *actionRecorder) Approve(_ context.Context, _ string, a session.Action, d session.Decision) error {
	return r.add(a, d)
}

func (r *actionRecorder) Decline(_ context.Context, _ string, a session.Action, d session.Decision) error {
	return r.add(a, d)
}

func (r *actionRecorder) add(a session.Action, d session.Decision) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, decided{ActionID: a.ID, Decision: d})
	return nil
}

func (r *actionRecorder) decisions(id string) []session.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []session.Decision
	for _, g := range r.got {
		if g.ActionID == id {
			out = append(out, g.Decision)
		}
	}
	return out
}

// hudState is window.__hud: what the HUD emulator draws.
type hudState struct {
	Kind     string   `json:"kind"`
	CardID   string   `json:"card_id"`
	Surface  string   `json:"surface"`
	Profile  string   `json:"profile"`
	Page     int      `json:"page"`
	Of       int      `json:"of"`
	Focus    string   `json:"focus"`
	Controls []string `json:"controls"`
	Title    string   `json:"title"`
	Lines    []string `json:"lines"`
	Ops      int      `json:"ops"`
	Width    int      `json:"width"`
	Height   int      `json:"height"`
	Text     string   `json:"text"`
	Status   string   `json:"status"`
}

// TestBrowserActionPrompt drives the real page in headless Chromium with
// real key presses, mouse clicks and typing (DevTools input events) against
// the real chat handler, session, consent, safety detector and glasses
// layout. A proposed action shows as Approve/Decline on the phone panel and
// as the server's prompt page on the HUD emulator; it is settled by keys on
// the HUD, a tap, or a typed yes — each reaching the ActionHandler with how
// and where — and a safety card always covers a pending prompt.
func TestBrowserActionPrompt(t *testing.T) {
	bin := fixtures.ChromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (CI installs it via .ci/deps.sh)")
	}
	rec := &actionRecorder{}
	// Session timers (action expiry, answer windows, ack timeouts) run on
	// a fake clock: they fire only when the test advances it.
	clock := clocktest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	st := gatewaytest.NewStack(t, gatewaytest.Options{Converser: &remindCompanion{},
		Deps: func(_ *gatewaytest.Stack, d *session.Deps) { d.Actions, d.Clock = rec, clock },
		Chat: true, ChatAuth: devAuth,
		Mux: func(mux *http.ServeMux) { mux.Handle("/", web.Handler()) }})
	browser := fixtures.StartChromium(t, bin, t.TempDir(), st.Server.URL+"/?region=US&prompt-test=1")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	page, err := browser.DialPage(ctx, "prompt-test=1")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	fail := func(format string, args ...any) {
		t.Helper()
		var events []map[string]any
		_ = page.Eval(ctx, `__vera.events.map((e) => ({type: e.type, seq: e.seq, kind: e.kind}))`, &events)
		var console []string
		for _, l := range browser.Log() {
			if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
				console = append(console, l)
			}
		}
		t.Fatalf(format+"\nevents: %v\nconsole: %s", append(args, events, strings.Join(console, "\n"))...)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			fail("%v", err)
		}
	}
	hud := func() hudState {
		t.Helper()
		var h hudState
		must(page.Eval(ctx, `window.__hud || {}`, &h))
		return h
	}
	text := func(selector string) string {
		t.Helper()
		var s string
		must(page.Eval(ctx, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, selector), &s))
		return s
	}
	// say types a message into the composer and sends it with Enter.
	say := func(msg string) {
		t.Helper()
		must(page.Click(ctx, "#message"))
		must(page.InsertText(ctx, msg))
		must(page.Press(ctx, "Enter"))
	}
	// replied waits until the reply to the n-th user message is done.
	replied := func(n int) {
		t.Helper()
		must(page.WaitFor(ctx, fmt.Sprintf(`[...__vera.turns.values()].filter((t) => t.heardText).length >= %d &&
			[...__vera.turns.values()].every((t) => t.ended)`, n), fmt.Sprintf("reply %d", n)))
	}
	promptOnHUD := func(id string) string {
		return fmt.Sprintf(`window.__hud && __hud.kind === 'prompt' && __hud.card_id === 'prompt_%s'`, id)
	}
	decision := func(id string) session.Decision {
		t.Helper()
		// The page shows action.updated after the handler returned.
		ds := rec.decisions(id)
		if len(ds) != 1 {
			fail("%s: %d decisions reached the handler: %+v", id, len(ds), ds)
		}
		return ds[0]
	}
	// Focus behaves as in a focused window; the viewport holds the page's
	// header and the whole 600×600 HUD for the screenshot.
	_, _ = page.Call(ctx, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true})
	must2 := func(_ json.RawMessage, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must2(page.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1320, "height": 1000,
		"deviceScaleFactor": 1, "mobile": false}))
	// The page may still be navigating when the target shows up: until it
	// has loaded, evaluation fails with a destroyed context; try again.
	for {
		err := page.WaitFor(ctx, `window.__vera && __vera.sessionId && document.fonts.status === 'loaded'`, "session.created")
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "context") || ctx.Err() != nil {
			fail("%v", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	var sid string
	must(page.Eval(ctx, `__vera.sessionId`, &sid))

	// A device switch (dev mode offers every profile) re-negotiates the
	// session: same session, no "reconnected" or "resumed" flash.
	for _, dev := range []string{"even-g2", "meta-rayban-display"} {
		must(page.Eval(ctx, fmt.Sprintf(`(() => { const p = document.getElementById('profile'); p.value = %q;
			p.dispatchEvent(new Event('change')); return true; })()`, dev), nil))
		must(page.WaitFor(ctx, fmt.Sprintf(`!__vera.renegotiating && __vera.device === %q && /^Connected · /.test(document.getElementById('status').textContent)`, dev), "switched to "+dev))
		var status string
		must(page.Eval(ctx, `document.getElementById('status').textContent + ' ' + __vera.sessionId`, &status))
		if strings.Contains(status, "reconnected") || strings.Contains(status, "resumed") || !strings.HasSuffix(status, " "+sid) {
			t.Errorf("after switching to %s: %q", dev, status)
		}
		if s, ok := st.Sessions.Get(sid); !ok || s.Profile().ID != dev {
			t.Errorf("session profile after switching to %s", dev)
		}
	}

	// Titles: an automatic name shows in the header and the window title;
	// the person's own rename (a small button, then Enter) wins.
	if got := st.Sessions.SetTitle(sid, "Calling Sam later"); got != session.TitleSet {
		t.Fatalf("SetTitle: %s", got)
	}
	must(page.WaitFor(ctx, `document.title === 'Calling Sam later · VERA'`, "auto title"))
	if got := text("#session-title"); got != "Calling Sam later" {
		t.Errorf("header title %q", got)
	}
	must(page.Click(ctx, "#rename"))
	var expanded string
	must(page.Eval(ctx, `document.activeElement.id + ' ' + document.getElementById('rename').getAttribute('aria-expanded')`, &expanded))
	if expanded != "rename-input true" {
		t.Errorf("rename control: focus and aria-expanded %q", expanded)
	}
	must(page.InsertText(ctx, "Errands"))
	must(page.Press(ctx, "Enter"))
	must(page.WaitFor(ctx, `document.title === 'Errands · VERA' && document.activeElement.id === 'rename'`, "renamed title"))
	var formShown bool
	must(page.Eval(ctx, `getComputedStyle(document.getElementById('rename-form')).display !== 'none'`, &formShown))
	if formShown {
		t.Errorf("the rename form stays on screen after Save")
	}
	if s, ok := st.Sessions.Get(sid); !ok || s.Title() != "Errands" {
		t.Errorf("session title after rename: %v", s)
	}

	// (a) A proposed action: Approve/Decline on the phone panel, the
	// prompt on the HUD with focus on Decline; ← moves it to Approve, →
	// back, ← again, and Enter approves — a key on the glasses surface.
	say("please remind me to call Sam")
	must(page.WaitFor(ctx, promptOnHUD("act_1")+` && document.querySelector('#action-act_1 button.approve')`, "prompt act_1"))
	h := hud()
	if h.Focus != "decline" || strings.Join(h.Controls, ",") != "approve,decline" || h.Surface != "display" ||
		h.Profile != "meta-rayban-display" || h.Width != 600 || h.Height != 600 || h.Ops == 0 ||
		!strings.Contains(h.Title+" "+strings.Join(h.Lines, " "), "call Sam") || h.Page != h.Of {
		fail("HUD prompt %+v", h)
	}
	if got := text("#action-act_1 h3"); got != "Remind you to call Sam" {
		t.Errorf("phone panel title %q", got)
	}
	if got := text("#action-act_1 .summary"); got != "A reminder today at 18:00." {
		t.Errorf("phone panel summary %q", got)
	}
	var labels []string
	must(page.Eval(ctx, `[...document.querySelectorAll('#action-act_1 button')].map((b) => b.tagName + ':' + b.type + ':' + b.getAttribute('aria-label'))`, &labels))
	if strings.Join(labels, "|") != "BUTTON:button:Approve: Remind you to call Sam|BUTTON:button:Decline: Remind you to call Sam" {
		t.Errorf("phone panel controls %q", labels)
	}
	must(page.Click(ctx, "#hud"))
	var keysBefore int
	must(page.Eval(ctx, `__vera.keysSent.length`, &keysBefore))
	must(page.Press(ctx, "ArrowRight")) // already on the rightmost control: nothing to send
	var keysAfter int
	must(page.Eval(ctx, `__vera.keysSent.length`, &keysAfter))
	if keysAfter != keysBefore || hud().Focus != "decline" {
		t.Errorf("ArrowRight on Decline sent %d keys, focus %q", keysAfter-keysBefore, hud().Focus)
	}
	must(page.Press(ctx, "ArrowLeft"))
	must(page.WaitFor(ctx, promptOnHUD("act_1")+` && __hud.focus === 'approve'`, "focus on Approve"))
	must(page.Press(ctx, "ArrowRight"))
	must(page.WaitFor(ctx, promptOnHUD("act_1")+` && __hud.focus === 'decline'`, "focus back on Decline"))
	must(page.Press(ctx, "ArrowLeft"))
	must(page.WaitFor(ctx, promptOnHUD("act_1")+` && __hud.focus === 'approve'`, "focus on Approve again"))
	// The focus ring is drawn around the focused control only: sample the
	// canvas just outside each button's left edge, where the ring runs.
	var ring map[string][]int
	must(page.Eval(ctx, `(() => {
		const ctx = document.getElementById('hud-canvas').getContext('2d');
		const out = {};
		for (const op of __vera.hud.prompt.ops.filter((o) => o.op === 'button')) {
			out[op.id] = [...ctx.getImageData(op.x - 3, op.y + op.h / 2, 1, 1).data].slice(0, 3);
		}
		return out; })()`, &ring))
	isRing := func(px []int) bool { // #8AB4F8, give or take anti-aliasing
		near := func(a, b int) bool { return a-b <= 12 && b-a <= 12 }
		return len(px) == 3 && near(px[0], 0x8A) && near(px[1], 0xB4) && near(px[2], 0xF8)
	}
	if !isRing(ring["approve"]) || isRing(ring["decline"]) {
		t.Errorf("focus ring pixels %v: want it around Approve only", ring)
	}
	var hudText string
	must(page.Eval(ctx, `document.getElementById('hud-text').textContent`, &hudText))
	if !strings.HasSuffix(hudText, "Focused: Approve.") {
		t.Errorf("HUD text for screen readers %q", hudText)
	}
	// The screenshot shows the whole page from the top: header with the
	// title, the phone panel's prompt and the HUD's, focus on Approve.
	must(page.Eval(ctx, `window.scrollTo(0, 0)`, nil))
	shot, err := page.Screenshot(ctx)
	must(err)
	must(page.Press(ctx, "Enter"))
	must(page.WaitFor(ctx, `/^Approved/.test((document.querySelector('#action-act_1 .state') || {}).textContent)`, "act_1 approved"))
	if got := text("#action-act_1 .state"); got != "Approved (key on the glasses)" {
		t.Errorf("phone panel outcome %q", got)
	}
	if h := hud(); h.Kind != "outcome" || h.Text != "Approved" {
		t.Errorf("HUD after approval %+v", h)
	}
	outcomeShot, err := page.Screenshot(ctx)
	must(err)
	var buttons int
	must(page.Eval(ctx, `document.querySelectorAll('#action-act_1 button').length`, &buttons))
	if buttons != 0 {
		t.Errorf("%d buttons left on a settled action", buttons)
	}
	if d := decision("act_1"); !d.Approved || d.Via != session.ViaKey || d.Surface != "display" {
		t.Errorf("act_1 decision %+v, want approved via key on the glasses surface (display)", d)
	}
	var keySurfaces []string
	must(page.Eval(ctx, `__vera.keysSent.map((k) => k.key + '@' + k.surface)`, &keySurfaces))
	if strings.Join(keySurfaces, ",") != "prev@display,next@display,prev@display,select@display" {
		t.Errorf("keys sent %q", keySurfaces)
	}
	replied(1)

	// (b) A tap on Decline in the phone panel declines, with its surface.
	say("remind me to buy milk")
	must(page.WaitFor(ctx, promptOnHUD("act_2")+` && document.querySelector('#action-act_2 button.decline')`, "prompt act_2"))
	must(page.Click(ctx, "#action-act_2 button.decline"))
	must(page.WaitFor(ctx, `/^Declined/.test((document.querySelector('#action-act_2 .state') || {}).textContent)`, "act_2 declined"))
	if got := text("#action-act_2 .state"); got != "Declined (tapped)" {
		t.Errorf("phone panel outcome %q", got)
	}
	if h := hud(); h.Kind != "outcome" || h.Text != "Declined" {
		t.Errorf("HUD after a declining tap %+v", h)
	}
	if d := decision("act_2"); d.Approved || d.Via != session.ViaTap || d.Surface != "phone" {
		t.Errorf("act_2 decision %+v, want declined via tap on the phone", d)
	}
	var focused string
	must(page.Eval(ctx, `document.activeElement.id`, &focused))
	if focused != "action-act_2" {
		t.Errorf("focus after the tapped button went: %q, want the action's panel", focused)
	}
	replied(2)

	// (c) A typed "yes" answering the offer approves (via text, in chat).
	say("remind me to water the plants")
	must(page.WaitFor(ctx, promptOnHUD("act_3"), "prompt act_3"))
	replied(3)
	var offer string
	must(page.Eval(ctx, `[...__vera.turns.values()].pop().text`, &offer))
	if !strings.Contains(offer, "Say yes or no.") {
		t.Fatalf("the reply did not offer the action: %q", offer)
	}
	say("yes")
	must(page.WaitFor(ctx, `/^Approved/.test((document.querySelector('#action-act_3 .state') || {}).textContent)`, "act_3 approved"))
	if got := text("#action-act_3 .state"); got != "Approved (typed answer)" {
		t.Errorf("phone panel outcome %q", got)
	}
	if d := decision("act_3"); !d.Approved || d.Via != session.ViaText || d.Surface != session.SurfaceChat {
		t.Errorf("act_3 decision %+v, want approved via text in chat", d)
	}
	if h := hud(); h.Kind == "prompt" {
		t.Errorf("prompt still on the HUD after approval: %+v", h)
	}
	replied(4)

	// (d) A crisis message while a prompt is pending: the safety card
	// covers the prompt on the HUD (the prompt is never drawn over it) and
	// takes the keys; once the person closes the card with Done, the
	// prompt is back with focus on Decline, and Enter there declines.
	say("remind me to call mum")
	must(page.WaitFor(ctx, promptOnHUD("act_4"), "prompt act_4"))
	replied(5)
	say("I feel like a burden to everyone")
	must(page.WaitFor(ctx, `window.__hud && __hud.kind === 'safety'`, "safety card on the HUD"))
	replied(6)
	h = hud()
	if h.Kind != "safety" || h.Page != 1 || h.CardID == "" || strings.HasPrefix(h.CardID, "prompt_") {
		fail("HUD during the crisis turn %+v", h)
	}
	must(page.Eval(ctx, `window.scrollTo(0, 0)`, nil))
	coveredShot, err := page.Screenshot(ctx)
	must(err)
	if n := len(rec.decisions("act_4")); n != 0 {
		t.Fatalf("the crisis message decided act_4 (%d decisions)", n)
	}
	var pending bool
	must(page.Eval(ctx, `!!document.querySelector('#action-act_4 button.approve') && __vera.prompt && __vera.prompt.card_id === 'prompt_act_4'`, &pending))
	if !pending {
		t.Errorf("act_4 is no longer pending on the phone panel")
	}
	must(page.Click(ctx, "#hud"))
	for i := 1; i < h.Of; i++ {
		must(page.Press(ctx, "ArrowDown"))
		if got := hud(); got.Kind != "safety" || got.Page != i+1 {
			fail("paging the safety card: %+v", got)
		}
	}
	if got := hud(); got.Focus != "done" {
		fail("last page of the safety card focuses %q, want done", got.Focus)
	}
	must(page.Press(ctx, "Enter")) // Done: the card closes here and on the server
	must(page.WaitFor(ctx, promptOnHUD("act_4")+` && __hud.focus === 'decline'`, "prompt act_4 back after the card"))
	must(page.Press(ctx, "Enter")) // focus on Decline: a stray Enter never approves
	must(page.WaitFor(ctx, `/^Declined/.test((document.querySelector('#action-act_4 .state') || {}).textContent)`, "act_4 declined"))
	if d := decision("act_4"); d.Approved || d.Via != session.ViaKey || d.Surface != "display" {
		t.Errorf("act_4 decision %+v, want declined via key", d)
	}

	// (e) An action nobody answers expires: a decline upstream, never an
	// approval. This turn raises the level (elevated to crisis), so it
	// brings a second safety card and no offer: the action waits on the
	// phone panel only, and its outcome is never drawn over the card.
	say("remind me to stretch, i want to end my life tonight")
	must(page.WaitFor(ctx, `document.querySelector('#action-act_5 button.approve') && window.__hud && __hud.kind === 'safety'`,
		"act_5 on the phone panel, safety card on the HUD"))
	// The card closed with Done folds into the conversation where it
	// arrived; the new one is pinned above the conversation.
	var cards struct {
		Pinned []string `json:"pinned"`
		Folded []string `json:"folded"`
		Above  bool     `json:"above"`
	}
	must(page.Eval(ctx, `({pinned: [...document.querySelectorAll('#cards > .safety')].map((c) => c.id),
		folded: [...document.querySelectorAll('#transcript .card-fold .safety')].map((c) => c.id),
		above: document.getElementById('cards').getBoundingClientRect().bottom <= document.getElementById('transcript').getBoundingClientRect().top + 1})`, &cards))
	if len(cards.Pinned) != 1 || len(cards.Folded) != 1 || cards.Folded[0] != "card-"+h.CardID || cards.Pinned[0] == cards.Folded[0] || !cards.Above {
		t.Errorf("cards after a second one: %+v (closed: %s)", cards, h.CardID)
	}
	replied(7)
	clock.Advance(session.DefaultConfig().Consent.Expiry + time.Minute)
	must(page.WaitFor(ctx, `/^Expired/.test((document.querySelector('#action-act_5 .state') || {}).textContent)`, "act_5 expired"))
	if got := text("#action-act_5 .state"); got != "Expired, not done (no answer in time)" {
		t.Errorf("phone panel outcome %q", got)
	}
	if h := hud(); h.Kind != "safety" {
		t.Errorf("HUD after expiry %+v, want the safety card still there", h)
	}
	if d := decision("act_5"); d.Approved || d.Via != session.ViaExpiry {
		t.Errorf("act_5 decision %+v, want declined on expiry", d)
	}

	// The HUD drew a prompt only while no safety card was on it, and no
	// prompt page was acknowledged (display.ack is for safety cards).
	var trace struct {
		Errors     []string `json:"errors"`
		PromptAcks int      `json:"prompt_acks"`
	}
	must(page.Eval(ctx, `({errors: __vera.events.filter((e) => e.type === 'error').map((e) => String(e.seq)),
		prompt_acks: __vera.acksSent.filter((a) => a.card_id.startsWith('prompt_')).length})`, &trace))
	if len(trace.Errors) != 0 || trace.PromptAcks != 0 {
		t.Errorf("error events %v, prompt acks %d", trace.Errors, trace.PromptAcks)
	}
	for _, l := range browser.Log() {
		if strings.Contains(l, "Uncaught") {
			t.Errorf("page error: %s", l)
		}
	}

	dir := fixtures.ArtifactDir(t.TempDir())
	for name, b := range map[string][]byte{"web-client-prompt.png": shot, "web-client-prompt-outcome.png": outcomeShot,
		"web-client-prompt-covered.png": coveredShot} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("artifacts: %s/web-client-prompt{,-outcome,-covered}.png", dir)
	if *updateScreenshot {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "web-client-prompt.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
