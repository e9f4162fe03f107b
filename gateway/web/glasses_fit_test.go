package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// TestBrowserGlassesFitsBeforePaint: a card page that does not fit its box
// in this browser's fonts (the glasses' may differ from the gateway's
// measure) is scaled to fit before its first paint, without the card's
// message task reading layout: the app fits it from a ResizeObserver after
// the frame's layout. The card event is handed to the app's own websocket
// handler, as the socket would; its first line's Element Timing paint must
// come after the fit, and no line may be cut.
func TestBrowserGlassesFitsBeforePaint(t *testing.T) {
	bin := fixtures.ChromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (CI installs it via .ci/deps.sh)")
	}
	if fixtures.InLoopbackNamespace(t, "TestBrowserGlassesFitsBeforePaint") {
		return
	}
	g := newGlassesServer(t, echoCompanion{})
	code := g.code(t, "usr_9f4k7")
	browser := fixtures.StartChromiumWith(t, bin, t.TempDir(), g.URL+"/glasses?region=US&glasses-fit=1#pair="+code, "600,600", "--mute-audio")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page, err := browser.DialPage(ctx, "glasses-fit=1")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	if _, err := page.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 600, "height": 600,
		"deviceScaleFactor": 1, "mobile": false}); err != nil {
		t.Fatal(err)
	}
	for {
		err := page.WaitFor(ctx, `window.__glasses && __glasses.sessionId && __glasses.screen === 'talk' && __glasses.t.warm > 0`, "connected, the skeleton built")
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "context") || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Sixteen body lines: about 580 px of text for a box of about 380.
	var r struct {
		Fit       float64 `json:"fit"`
		Cut       int     `json:"cut"`
		Scrolls   bool    `json:"scrolls"`
		Lines     int     `json:"lines"`
		FittedAt  float64 `json:"fitted"`
		Rx        float64 `json:"rx"`
		Painted   float64 `json:"painted"`
		Indicator string  `json:"ind"`
	}
	if err := page.Eval(ctx, `new Promise((done) => {
  const S = __glasses, lines = Array.from({length: 16}, (_, i) => 'Line ' + (i + 1) + ' of a resource that the glasses show');
  const ev = {type: 'safety.card', card_id: 'c_fit', resources: [{id: 'r', name: 'Help', actions: [{type: 'call', value: '988'}]}],
    surfaces: [{surface: 'display', pages: [{n: 1, of: 1, title: 'Help is here', lines, styles: lines.map(() => 'body'),
      controls: [{id: 'done', label: 'Done'}], focus: 'done', ops: []}]}]};
  new PerformanceObserver((l, o) => { const e = l.getEntries().find((x) => (x.renderTime || x.loadTime) >= S.t.cardRx && S.t.cardRx > 0);
    if (!e) return; o.disconnect();
    setTimeout(() => { const box = document.querySelector('#sheet .page.on .lines'), b = box.getBoundingClientRect();
      const ln = [...box.querySelectorAll('.ln')];
      done({fit: Number(box.dataset.fit), lines: ln.length, scrolls: box.scrollHeight > box.clientHeight + 1,
        cut: box.scrollHeight > box.clientHeight + 1 ? 0 : ln.filter((l) => l.getBoundingClientRect().bottom > b.bottom + 0.5).length,
        fitted: S.t.fittedAt || 0, rx: S.t.cardRx, painted: e.renderTime || e.loadTime,
        ind: document.querySelector('#sheet .page.on .ind').textContent}); }, 100); }).observe({type: 'element'});
  S.ws.onmessage({data: JSON.stringify(ev)});
})`, &r); err != nil {
		t.Fatal(err)
	}
	if r.Lines != 16 || r.Indicator != "1/1" || r.Cut != 0 {
		t.Fatalf("the page: %+v", r)
	}
	if !(r.Fit < 1 && r.Fit >= 0.6) {
		t.Fatalf("the page was not scaled to fit: %+v", r)
	}
	if r.FittedAt < r.Rx || r.Painted < r.FittedAt {
		t.Fatalf("the page was painted before it was fitted (event %.1f, fitted %.1f, painted %.1f)", r.Rx, r.FittedAt, r.Painted)
	}
}
