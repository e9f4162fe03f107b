package web_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/session"
)

var updateGlassesShots = flag.Bool("update-glasses-screenshots", false,
	"write docs/glasses-card.png and docs/glasses-prompt.png from TestBrowserGlasses")

// glassesView is what the glasses app shows, read from its DOM.
type glassesView struct {
	Screen   string   `json:"screen"`
	Kind     string   `json:"kind"`
	Ind      string   `json:"ind"`
	Title    string   `json:"title"`
	Lines    []string `json:"lines"`
	Layout   []string `json:"layout"` // the gateway's lines for this page
	Controls []string `json:"controls"`
	Hrefs    []string `json:"hrefs"`
	Focus    string   `json:"focus"`
	Ring     string   `json:"ring"`
	Clipped  int      `json:"clipped"`
	Outside  int      `json:"outside"`
	Visible  int      `json:"visible_pages"`
	CardID   string   `json:"card_id"`
	Page     int      `json:"page"`
	Of       int      `json:"of"`
	Reply    string   `json:"reply"`
	You      string   `json:"you"`
	Chip     string   `json:"chip"`
	Status   string   `json:"status"`
}

const viewJS = `(() => {
  const S = __glasses, $ = (id) => document.getElementById(id);
  const a = document.activeElement || document.body;
  const pg = document.querySelector('#sheet .page.on');
  const q = (sel) => pg ? pg.querySelector(sel) : null;
  const box = q('.lines') ? q('.lines').getBoundingClientRect() : null;
  const lines = pg ? [...pg.querySelectorAll('.ln')] : [];
  const inside = (r, b) => r.top >= b.top - 0.5 && r.bottom <= b.bottom + 0.5 && r.left >= b.left - 0.5 && r.right <= b.right + 0.5;
  const screen = {top: 0, left: 0, bottom: innerHeight, right: innerWidth};
  const ctl = pg ? [...pg.querySelectorAll('.controls .focusable')] : [];
  const card = S.screen === 'card' ? S.cards[S.cards.length - 1] : null;
  const pr = S.screen === 'prompt' ? S.prompt : null;
  const page = card ? card.surf.pages[card.page - 1] : pr ? pr.pages[pr.page - 1] : null;
  const cs = getComputedStyle(a);
  // What a person sees: a page is on screen when it is visible (visibility,
  // and the opacity of it and every ancestor) and its box meets the screen;
  // the one on screen must lie wholly inside it.
  const shown = (el) => { for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
    const c = getComputedStyle(e); if (Number(c.opacity) === 0 || c.display === 'none') return false; }
    return getComputedStyle(el).visibility === 'visible'; };
  const meets = (r) => r.width > 0 && r.height > 0 && r.right > 0 && r.bottom > 0 && r.left < innerWidth && r.top < innerHeight;
  const seen = [...document.querySelectorAll('#sheet .page')].filter((p) => shown(p) && shown($('sheet')) && meets(p.getBoundingClientRect()));
  const visible = seen.length === 1 && seen[0] === pg && inside(pg.getBoundingClientRect(), screen) ? 1 : seen.length === 1 ? -1 : seen.length;
  return {screen: S.screen, kind: $('sheet').dataset.kind || '', ind: q('.ind') ? q('.ind').textContent : '',
    title: q('.title') ? q('.title').textContent : '', lines: lines.map((l) => l.textContent), layout: page ? page.lines : [],
    controls: ctl.map((c) => c.dataset.ctl), hrefs: ctl.map((c) => c.getAttribute('href') || ''),
    focus: a.dataset.ctl || a.id || a.tagName, ring: cs.outlineStyle + ' ' + cs.outlineWidth,
    clipped: box ? lines.filter((l) => !inside(l.getBoundingClientRect(), box)).length : 0,
    outside: S.screen === 'talk' || !pg ? 0 : [...lines, ...ctl, q('.ind'), q('.title')].filter((el) => !inside(el.getBoundingClientRect(), screen)).length,
    visible_pages: visible,
    card_id: card ? card.ev.card_id : pr ? pr.cardId : '', page: page ? page.n : 0, of: page ? page.of : 0,
    reply: $('reply').textContent, you: $('you').hidden ? '' : $('you').textContent,
    chip: $('pending').hidden ? '' : $('pending').textContent, status: $('status').textContent};
})()`

// TestBrowserGlasses drives the glasses app at /glasses in headless
// Chromium at 600×600 with real key presses and typing (DevTools input,
// as the Neural Band's D-pad, pinch and back arrive), against the real
// gateway edge with a partner key: the app pairs with a one-time code,
// a crisis message puts the safety card on screen first, it pages with
// ↓ and Enter, Escape never removes it, Done acknowledges it and returns
// to the conversation; a proposed action's prompt opens on Decline and
// Escape backs out of it without deciding; hiding the page closes the
// socket and showing it resumes the session with no event lost.
func TestBrowserGlasses(t *testing.T) {
	bin := fixtures.ChromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (CI installs it via .ci/deps.sh)")
	}
	extra := []string{}
	if *updateGlassesShots {
		extra = append(extra, "-update-glasses-screenshots")
	}
	if fixtures.InLoopbackNamespace(t, "TestBrowserGlasses", extra...) {
		return
	}
	g := newGlassesServer(t, &remindCompanion{})
	code := g.code(t, "u_glasses_e2e")
	browser := fixtures.StartChromiumWith(t, bin, t.TempDir(), g.URL+"/glasses?region=US&glasses-test=1", "600,600", "--mute-audio")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	page, err := browser.DialPage(ctx, "glasses-test=1")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	fail := func(format string, args ...any) {
		t.Helper()
		var trace any
		_ = page.Eval(ctx, `({trace: __glasses.trace, screen: __glasses.screen})`, &trace)
		var console []string
		for _, l := range browser.Log() {
			if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
				console = append(console, l)
			}
		}
		t.Fatalf(format+"\ntrace: %v\nconsole: %s", append(args, trace, strings.Join(console, "\n"))...)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			fail("%v", err)
		}
	}
	view := func() glassesView {
		t.Helper()
		var v glassesView
		must(page.Eval(ctx, viewJS, &v))
		return v
	}
	if _, err := page.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 600, "height": 600,
		"deviceScaleFactor": 1, "mobile": false}); err != nil {
		t.Fatal(err)
	}
	// The page may still be loading when its target appears.
	for {
		err := page.WaitFor(ctx, `window.__glasses && document.activeElement && document.activeElement.id === 'code'`, "the pairing screen")
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "context") || ctx.Err() != nil {
			fail("%v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var dims []int
	must(page.Eval(ctx, `[innerWidth, innerHeight]`, &dims))
	if !slices.Equal(dims, []int{600, 600}) {
		t.Fatalf("viewport %v", dims)
	}

	// Pairing: the code the partner's app shows, written with spaces in
	// lower case as the glasses' composer might give it.
	must(page.InsertText(ctx, strings.ToLower(strings.ReplaceAll(code, "-", " "))))
	must(page.Press(ctx, "Enter"))
	must(page.WaitFor(ctx, `__glasses.sessionId && __glasses.screen === 'talk' && document.activeElement.id === 'msg'`, "connected after pairing"))
	var kept bool
	must(page.Eval(ctx, `JSON.parse(localStorage.getItem('vera.glasses.pairing')).refresh_token.startsWith('vera_rt_')`, &kept))
	if !kept {
		t.Fatal("the refresh credential was not kept")
	}
	var sid string
	must(page.Eval(ctx, `__glasses.sessionId`, &sid))
	sess, ok := g.mgr.Get(sid)
	if !ok || sess.Owner().EndUserID != "u_glasses_e2e" || sess.Profile().ID != "meta-rayban-display" {
		t.Fatalf("session %s: %v %+v", sid, ok, sess)
	}

	say := func(text string) {
		t.Helper()
		must(page.Eval(ctx, `document.getElementById('msg').focus()`, nil))
		must(page.InsertText(ctx, text))
		must(page.Press(ctx, "Enter"))
	}

	// (a) A proposed action: the prompt opens on Decline; Escape backs
	// out of it and nothing is decided; it waits as a chip, reopens, and
	// Enter on Decline declines.
	say("please remind me to call Sam")
	must(page.WaitFor(ctx, `__glasses.screen === 'prompt' && document.activeElement.dataset.ctl === 'decline'`, "the prompt"))
	v := view()
	if !slices.Equal(v.Controls, []string{"approve", "decline"}) || !strings.Contains(v.Title+strings.Join(v.Lines, " "), "call Sam") ||
		v.Clipped != 0 || v.Outside != 0 || v.Ring != "solid 4px" {
		fail("prompt: %+v", v)
	}
	shot, err := page.Screenshot(ctx)
	must(err)
	shots := map[string][]byte{"glasses-prompt.png": shot}
	must(page.Press(ctx, "Escape"))
	must(page.WaitFor(ctx, `__glasses.screen === 'talk' && document.activeElement.id === 'msg' && !document.getElementById('pending').hidden`, "backed out"))
	if v := view(); !strings.Contains(v.Chip, "call Sam") {
		fail("chip after backing out: %+v", v)
	}
	if d := g.actions.decisions("act_1"); len(d) != 0 {
		t.Fatalf("Escape decided: %+v", d)
	}
	must(page.Press(ctx, "ArrowUp"))
	if v := view(); v.Focus != "pending" {
		fail("ArrowUp from the message box: %+v", v)
	}
	must(page.Press(ctx, "Enter"))
	must(page.WaitFor(ctx, `__glasses.screen === 'prompt' && document.activeElement.dataset.ctl === 'decline'`, "the prompt again"))
	must(page.Press(ctx, "ArrowLeft"))
	if v := view(); v.Focus != "approve" {
		fail("ArrowLeft on the prompt: %+v", v)
	}
	must(page.Press(ctx, "ArrowRight"))
	must(page.Press(ctx, "Enter"))
	must(page.WaitFor(ctx, `__glasses.screen === 'talk' && /^Declined/.test(document.getElementById('notice').textContent)`, "declined"))
	if d := g.actions.decisions("act_1"); len(d) != 1 || d[0].Approved || d[0].Via != session.ViaTap || d[0].Surface != "display" {
		t.Fatalf("act_1 decisions %+v, want one decline tapped on the display", d)
	}

	// (b) A crisis message: the card comes first and covers the screen.
	say("I want to end my life tonight")
	// The card is drawn first and its Next focused right after its first frame.
	must(page.WaitFor(ctx, `__glasses.screen === 'card' && document.querySelector('#sheet .page.on .ind').textContent.startsWith('1/') && document.activeElement.dataset.ctl === 'next'`, "safety card"))
	v = view()
	if v.Kind != "card" || v.Page != 1 || v.Of < 2 || v.Ind != fmt.Sprintf("1/%d", v.Of) || v.Title == "" || v.Focus != "next" {
		fail("card page 1: %+v", v)
	}
	if v.Ring != "solid 4px" {
		t.Errorf("focus ring on %s: %q", v.Focus, v.Ring)
	}
	if !regexp.MustCompile(`\d{3}`).MatchString(strings.Join(v.Lines, " ")) {
		t.Errorf("page 1 shows no number: %q", v.Lines)
	}
	var order struct {
		Card  int `json:"card"`
		Delta int `json:"delta"`
	}
	must(page.WaitFor(ctx, `__glasses.turn && /You said/.test(__glasses.turn.text)`, "the reply behind the card"))
	must(page.Eval(ctx, `(() => { const ty = __glasses.trace.types, from = ty.lastIndexOf('transcript.final');
		return {card: ty.indexOf('safety.card', from), delta: ty.indexOf('reply.delta', from)}; })()`, &order))
	if order.Card < 0 || order.Delta < 0 || order.Card > order.Delta {
		fail("safety.card at %d, first reply.delta at %d", order.Card, order.Delta)
	}
	if s := view(); s.Screen != "card" {
		fail("the reply took the screen from the card: %+v", s)
	}
	cardID, of := v.CardID, v.Of
	if shot, err = page.Screenshot(ctx); err != nil {
		fail("%v", err)
	}
	shots["glasses-card.png"] = shot
	checkPage := func(v glassesView, n int) {
		t.Helper()
		// A person reads the page: it is drawn and acknowledged.
		must(page.WaitFor(ctx, fmt.Sprintf(`__glasses.trace.acks.some((a) => a.card_id === %q && a.page === %d)`, cardID, n),
			fmt.Sprintf("the ack of page %d", n)))
		if v.Screen != "card" || v.CardID != cardID || v.Page != n || v.Ind != fmt.Sprintf("%d/%d", n, of) {
			fail("want page %d/%d of %s: %+v", n, of, cardID, v)
		}
		// Never truncated: every line the gateway laid out is on screen,
		// whole, inside the card.
		if !slices.Equal(v.Lines, v.Layout) || v.Clipped != 0 || v.Outside != 0 || v.Visible != 1 {
			fail("page %d: lines %q, layout %q, %d clipped, %d off screen, %d pages on screen (-1: one, but not this page wholly inside it)", n, v.Lines, v.Layout, v.Clipped, v.Outside, v.Visible)
		}
	}
	checkPage(v, 1)

	// Focus along the control row, then back: the Call link is a tel: link.
	must(page.Press(ctx, "ArrowRight"))
	if v := view(); !strings.HasPrefix(v.Focus, "call:") || !strings.HasPrefix(v.Hrefs[1], "tel:") {
		fail("ArrowRight: %+v", v)
	}
	must(page.Press(ctx, "ArrowLeft"))
	if v := view(); v.Focus != "next" {
		fail("ArrowLeft: %+v", v)
	}
	// Escape on page 1: the card is sticky.
	must(page.Press(ctx, "Escape"))
	checkPage(view(), 1)
	// ↓ pages, Enter on Next pages, Escape goes back a page, never away.
	must(page.Press(ctx, "ArrowDown"))
	checkPage(view(), 2)
	if of > 2 {
		must(page.Press(ctx, "Enter"))
		checkPage(view(), 3)
		must(page.Press(ctx, "Escape"))
		checkPage(view(), 2)
	}
	for n := view().Page; n < of; n++ {
		must(page.Press(ctx, "ArrowDown"))
		checkPage(view(), n+1)
	}
	if v := view(); v.Focus != "done" {
		fail("last page focuses %q, want done", v.Focus)
	}
	must(page.WaitFor(ctx, fmt.Sprintf(`new Set(__glasses.trace.acks.filter((a) => a.card_id === %q).map((a) => a.page)).size === %d`, cardID, of),
		"an ack for every page"))
	// Done: the card leaves this screen and the gateway's.
	must(page.Press(ctx, "Enter"))
	must(page.WaitFor(ctx, `__glasses.screen === 'talk' && document.activeElement.id === 'msg' && __glasses.cleared.size === 1`, "back to the conversation"))
	for surface, pages := range sess.Acked(cardID) {
		if slices.Contains(pages, false) {
			t.Errorf("surface %s: pages acknowledged %v", surface, pages)
		}
	}
	if v := view(); !strings.Contains(v.Reply, "You said: I want to end my life tonight") {
		t.Errorf("the reply after the card: %+v", v)
	}

	// The crisis is in force and its card is not sent again: it stays one
	// pinch away. ↑ from the message box reaches "Help lines", Enter shows
	// the same card from its first page, Done closes it again.
	must(page.WaitFor(ctx, `!document.getElementById('help').hidden`, "help lines offered after Done"))
	must(page.Press(ctx, "ArrowUp"))
	must(page.WaitFor(ctx, `document.activeElement.id === 'help'`, "focus on help lines"))
	must(page.Press(ctx, "Enter"))
	must(page.WaitFor(ctx, fmt.Sprintf(`__glasses.screen === 'card' && __glasses.cards.length === 1 && __glasses.cards[0].ev.card_id === %q`, cardID), "the card again"))
	if v := view(); v.Page != 1 || v.Of != of {
		fail("help lines showed page %d of %d, want 1 of %d", v.Page, v.Of, of)
	}
	for n := 1; n < of; n++ {
		must(page.Press(ctx, "ArrowDown"))
		checkPage(view(), n+1)
	}
	must(page.Press(ctx, "Enter"))
	must(page.WaitFor(ctx, `__glasses.screen === 'talk' && __glasses.cards.length === 0`, "back to the conversation again"))

	// (c) Hidden: the socket closes. Meanwhile the session goes on (a
	// message from elsewhere gets a reply). Visible again: resumed, and
	// every event arrived once, in order.
	var before int
	must(page.Eval(ctx, `__glasses.resumes`, &before))
	var other struct {
		TargetID string `json:"targetId"`
	}
	raw, err := page.Call(ctx, "Target.createTarget", map[string]any{"url": "about:blank"})
	must(err)
	must(json.Unmarshal(raw, &other))
	must(page.WaitFor(ctx, `document.visibilityState === 'hidden' && !__glasses.ws && __glasses.trace.statuses.includes('Paused')`, "paused while hidden"))
	turns := len(sess.History())
	sess.Submit("are you still there")
	deadline := time.Now().Add(20 * time.Second)
	for len(sess.History()) < turns+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(sess.History()) < turns+2 {
		t.Fatal("the session did not answer while the glasses were hidden")
	}
	if _, err := page.Call(ctx, "Target.closeTarget", map[string]any{"targetId": other.TargetID}); err != nil {
		t.Fatal(err)
	}
	must(page.WaitFor(ctx, fmt.Sprintf(`document.visibilityState === 'visible' && __glasses.resumes === %d && /are you still there/.test(document.getElementById('reply').textContent)`, before+1),
		"resumed with the missed reply"))
	var seqs []int64
	must(page.Eval(ctx, `__glasses.trace.seqs`, &seqs))
	for i, s := range seqs {
		if s != int64(i+1) {
			fail("events after resume: seq %d at %d (%v)", s, i, seqs)
		}
	}
	if last := sess.LastSeq(); seqs[len(seqs)-1] != last {
		t.Errorf("the app saw up to seq %d, the session wrote %d", seqs[len(seqs)-1], last)
	}
	if v := view(); !strings.Contains(v.You, "are you still there") || v.Status != "" {
		t.Errorf("after resume: %+v", v)
	}
	var errs []string
	must(page.Eval(ctx, `__glasses.trace.errors`, &errs))
	if len(errs) != 0 {
		t.Errorf("error events: %v", errs)
	}
	for _, l := range browser.Log() {
		if strings.Contains(l, "Uncaught") {
			t.Errorf("page error: %s", l)
		}
	}

	dir := fixtures.ArtifactDir(t.TempDir())
	for name, b := range shots {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if *updateGlassesShots {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("artifacts: %s/glasses-{card,prompt}.png (card %s, %d pages)", dir, cardID, of)
}
