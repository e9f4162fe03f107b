package web_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// closeCodeRe finds a websocket close code in a status line.
var closeCodeRe = regexp.MustCompile(`\b(1000|1001|1005|1006|1008|1009|1011|4000|4001)\b`)

// deskView is what the desktop client shows around its cards and status.
type deskView struct {
	Status      string   `json:"status"`
	Device      string   `json:"device"`
	Enabled     []string `json:"enabled"`
	DeviceNote  string   `json:"device_note"`
	Region      string   `json:"region"`
	Pinned      []string `json:"pinned"`
	Folded      []string `json:"folded"`
	PinnedAbove bool     `json:"pinned_above"`
	Hint        string   `json:"hint"`
	Notices     []string `json:"notices"`
	Titles      []string `json:"titles"`
	Resources   []string `json:"resources"`
}

const deskViewJS = `(() => {
  const $ = (id) => document.getElementById(id);
  const notices = [...document.querySelectorAll('#transcript li.vera')].filter((li) => li.querySelector('.who').textContent === 'Notice');
  return {status: $('status').textContent, device: $('profile').value,
    enabled: [...$('profile').options].filter((o) => !o.disabled).map((o) => o.value), device_note: $('device-note').textContent,
    region: $('region').value,
    pinned: [...document.querySelectorAll('#cards > .safety')].map((c) => c.id),
    folded: [...document.querySelectorAll('#transcript .card-fold .safety')].map((c) => c.id),
    pinned_above: $('cards').getBoundingClientRect().bottom <= $('transcript').getBoundingClientRect().top + 1,
    hint: $('hud-hint').textContent,
    notices: notices.map((li) => li.querySelector('.body').textContent), titles: notices.map((li) => li.title),
    resources: [...document.querySelectorAll('#cards > .safety li strong')].map((s) => s.textContent)};
})()`

// TestBrowserDeviceAndRegion drives the desktop client in Chromium against
// the gateway edge with a partner key: a page opened with a client token
// minted for Even G2 connects as that device and offers no other; the
// region picker re-negotiates without a "resumed" flash and brings that
// region's resources; the current card is pinned above the conversation,
// and a required card nobody closed is never folded away; errors and a
// dropped connection read as sentences, never codes.
func TestBrowserDeviceAndRegion(t *testing.T) {
	bin := fixtures.ChromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (CI installs it via .ci/deps.sh)")
	}
	if fixtures.InLoopbackNamespace(t, "TestBrowserDeviceAndRegion") {
		return
	}
	g := newGlassesServer(t, echoCompanion{})
	tok := g.clientToken(t, "u_desk_1", "even-g2")
	browser := fixtures.StartChromium(t, bin, t.TempDir(), g.URL+"/?desk-test=1&token="+tok)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	page, err := browser.DialPage(ctx, "desk-test=1")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			var events any
			_ = page.Eval(ctx, `__vera.events.map((e) => e.type + ':' + e.seq)`, &events)
			t.Fatalf("%v\nevents: %v", err, events)
		}
	}
	view := func() deskView {
		t.Helper()
		var v deskView
		must(page.Eval(ctx, deskViewJS, &v))
		return v
	}
	for {
		err := page.WaitFor(ctx, `window.__vera && __vera.sessionId`, "session.created")
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "context") || ctx.Err() != nil {
			must(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	v := view()
	if v.Device != "even-g2" || !slices.Equal(v.Enabled, []string{"even-g2"}) || !strings.Contains(v.DeviceNote, "token") ||
		!strings.HasPrefix(v.Status, "Connected · Even Realities G2") {
		t.Fatalf("token-bound page: %+v", v)
	}
	if !strings.Contains(v.Hint, "↓ ↑ page") || !strings.Contains(v.Hint, "← → move between its buttons") {
		t.Errorf("HUD hint %q", v.Hint)
	}
	var sid string
	must(page.Eval(ctx, `__vera.sessionId`, &sid))
	if s, ok := g.mgr.Get(sid); !ok || s.Profile().ID != "even-g2" || s.Owner().EndUserID != "u_desk_1" {
		t.Fatalf("session %s: %v", sid, ok)
	}

	// The region picker: a hello on the live connection, not a resume.
	must(page.Eval(ctx, `(() => { const r = document.getElementById('region'); r.value = 'GB';
		r.dispatchEvent(new Event('change')); return true; })()`, nil))
	must(page.WaitFor(ctx, `!__vera.renegotiating && __vera.events.filter((e) => e.type === 'session.created').length === 2`, "re-negotiated"))
	if v := view(); strings.Contains(v.Status, "reconnect") || strings.Contains(v.Status, "resumed") || v.Region != "GB" {
		t.Errorf("after the region switch: %+v", v)
	}

	say := func(text string) {
		t.Helper()
		must(page.Click(ctx, "#message"))
		must(page.InsertText(ctx, text))
		must(page.Press(ctx, "Enter"))
	}
	say("I feel like a burden to everyone")
	must(page.WaitFor(ctx, `document.querySelectorAll('#cards > .safety').length === 1`, "the card"))
	v = view()
	if !v.PinnedAbove || len(v.Pinned) != 1 || len(v.Folded) != 0 {
		t.Fatalf("card placement: %+v", v)
	}
	if !slices.ContainsFunc(v.Resources, func(r string) bool { return strings.Contains(r, "Samaritans") }) {
		t.Errorf("GB resources: %q", v.Resources)
	}
	first := v.Pinned[0]
	must(page.WaitFor(ctx, `[...__vera.turns.values()].every((t) => t.ended)`, "the reply"))
	// The next turn raises the level (elevated to crisis), so it brings
	// another card while the first was never closed with Done: both stay
	// pinned, newest on top. (At the same level the card in force covers
	// the turn and none is sent again.)
	say("I want to end my life tonight")
	must(page.WaitFor(ctx, `document.querySelectorAll('#cards > .safety').length === 2`, "a second card"))
	v = view()
	if len(v.Folded) != 0 || v.Pinned[1] != first || !v.PinnedAbove {
		t.Fatalf("an unacknowledged card was folded: %+v", v)
	}

	// A message too long for the gateway, sent past the composer's check:
	// the error reads as a sentence; the gateway's words are a tooltip.
	must(page.Eval(ctx, `(__vera.ws.send(JSON.stringify({type: 'input.text', text: 'x'.repeat(8001)})), true)`, nil))
	must(page.WaitFor(ctx, `[...document.querySelectorAll('#transcript li')].some((li) => /too long/.test(li.textContent))`, "the error"))
	v = view()
	last := v.Notices[len(v.Notices)-1]
	if last != "That message is too long (at most 8000 characters)." || !strings.Contains(v.Titles[len(v.Titles)-1], "invalid_request") {
		t.Errorf("error bubble %q (title %q)", last, v.Titles[len(v.Titles)-1])
	}
	// A dropped connection: a sentence while it reconnects, then back (the
	// one session.created with resumed: true; the region's hello above
	// re-negotiated, resumed: false).
	var statuses []string
	must(page.Eval(ctx, `(() => { window.__statuses = []; new MutationObserver(() => __statuses.push(document.getElementById('status').textContent))
		.observe(document.getElementById('status'), {childList: true, characterData: true, subtree: true});
		__vera.ws.close(4000, 'test: network change'); return true; })()`, nil))
	must(page.WaitFor(ctx, `__vera.events.filter((e) => e.type === 'session.created' && e.resumed).length >= 1 && /reconnected/.test(document.getElementById('status').textContent)`, "reconnected"))
	must(page.Eval(ctx, `__statuses`, &statuses))
	for _, s := range statuses {
		if closeCodeRe.MatchString(s) {
			t.Errorf("status %q shows a code", s)
		}
	}
	if !slices.ContainsFunc(statuses, func(s string) bool { return strings.HasPrefix(s, "Connection lost. Reconnecting in") }) {
		t.Errorf("statuses while reconnecting: %q", statuses)
	}
	for _, l := range browser.Log() {
		if strings.Contains(l, "Uncaught") {
			t.Errorf("page error: %s", l)
		}
	}
	t.Log(fmt.Sprintf("statuses: %q", statuses))
}
