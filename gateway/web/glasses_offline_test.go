package web_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/web"
)

// workerState is what the glasses app's service worker holds.
type workerState struct {
	Build      string   `json:"build"`
	Script     string   `json:"script"`
	Caches     []string `json:"caches"`
	Entries    []string `json:"entries"`
	Controlled bool     `json:"controlled"`
	Screen     string   `json:"screen"`
	// ByWorker: the page itself came through the service worker.
	ByWorker bool `json:"by_worker"`
}

const workerJS = `(async () => {
  const keys = (await caches.keys()).filter((k) => k.startsWith('vera-glasses-'));
  const entries = [];
  for (const k of keys) for (const r of await (await caches.open(k)).keys()) entries.push(new URL(r.url).pathname);
  return {build: document.querySelector('meta[name="vera-build"]').content,
    script: new URL(document.querySelector('script[src]').src).pathname,
    caches: keys, entries, controlled: !!navigator.serviceWorker.controller,
    screen: window.__glasses ? __glasses.screen : '',
    by_worker: performance.getEntriesByType('navigation')[0].workerStart > 0};
})()`

// TestBrowserGlassesOfflineAndUpgrade: after one launch the app starts
// with the gateway unreachable (from the worker's cache of its build), and
// once the gateway is upgraded the next launch runs the new build and the
// old build's cache is gone — never a stale app.
func TestBrowserGlassesOfflineAndUpgrade(t *testing.T) {
	bin := fixtures.ChromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (CI installs it via .ci/deps.sh)")
	}
	if fixtures.InLoopbackNamespace(t, "TestBrowserGlassesOfflineAndUpgrade") {
		return
	}
	g := newGlassesServer(t, echoCompanion{})
	browser := fixtures.StartChromiumWith(t, bin, t.TempDir(), g.URL+"/glasses?sw-test=1", "600,600", "--mute-audio")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	page, err := browser.DialPage(ctx, "sw-test=1")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	state := func() workerState {
		t.Helper()
		var s workerState
		if err := page.Eval(ctx, workerJS, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	waitLoaded := func(what string) {
		t.Helper()
		for {
			err := page.WaitFor(ctx, `document.readyState === 'complete' && window.__glasses`, what)
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), "context") || ctx.Err() != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitLoaded("first launch")
	old := g.app.Build()
	if err := page.WaitFor(ctx, `navigator.serviceWorker.controller && caches.keys().then((k) => k.includes('vera-glasses-`+old+`'))`, "the worker"); err != nil {
		t.Fatal(err)
	}
	s := state()
	if s.Build != old || !slices.Equal(s.Caches, []string{"vera-glasses-" + old}) || !slices.Contains(s.Entries, "/glasses") ||
		!slices.Contains(s.Entries, s.Script) || s.Screen != "pair" {
		t.Fatalf("after the first launch: %+v", s)
	}

	// The gateway is unreachable: the app still starts, from the cache.
	g.serve.Store(nil)
	if _, err := page.Call(ctx, "Page.reload", map[string]any{"ignoreCache": false}); err != nil {
		t.Fatal(err)
	}
	waitLoaded("offline launch")
	if s := state(); s.Build != old || s.Screen != "pair" || !s.ByWorker || !s.Controlled {
		t.Fatalf("offline launch: %+v", s)
	}

	// An upgraded gateway (another build) is what the next launch runs,
	// and the old build's cache goes.
	next, err := web.NewGlasses(web.GlassesOptions{DevMode: true})
	if err != nil {
		t.Fatal(err)
	}
	g.serve.Store(next)
	if _, err := page.Call(ctx, "Page.reload", map[string]any{"ignoreCache": false}); err != nil {
		t.Fatal(err)
	}
	waitLoaded("launch after the upgrade")
	if s := state(); s.Build != next.Build() || s.Build == old {
		t.Fatalf("after the upgrade the page is build %s, want %s (old %s)", s.Build, next.Build(), old)
	}
	if err := page.WaitFor(ctx, `caches.keys().then((k) => k.length === 1 && k[0] === 'vera-glasses-`+next.Build()+`')`, "the old cache gone"); err != nil {
		t.Fatalf("%v: %+v", err, state())
	}
	if s := state(); !slices.Contains(s.Entries, s.Script) || !strings.Contains(s.Script, "/glasses/app.") {
		t.Fatalf("the new build's cache: %+v", s)
	}
}
