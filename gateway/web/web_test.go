package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/gateway/web"
	"github.com/veraneural/vera-gateway/safety"
)

func get(t *testing.T, h http.Handler, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func TestServesPageAndAssets(t *testing.T) {
	h := web.Handler()
	cases := []struct {
		path, ctype, contains string
	}{
		{"/", "text/html", `<canvas id="hud-canvas" width="600" height="600"`},
		{"/index.html", "text/html", `aria-live="assertive"`},
		{"/", "text/html", `<button type="button" id="rename"`},
		{"/web/app.js", "javascript", "'input.key'"},
		{"/web/app.js", "javascript", "display.ack"},
		{"/web/app.css", "text/css", "@font-face"},
		{"/web/fonts/go-regular.ttf", "font/ttf", ""},
		{"/web/fonts/go-bold.ttf", "font/ttf", ""},
	}
	for _, c := range cases {
		resp := get(t, h, http.MethodGet, c.path)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", c.path, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, c.ctype) {
			t.Errorf("%s: content type %q", c.path, ct)
		}
		if !strings.Contains(string(body), c.contains) || len(body) == 0 {
			t.Errorf("%s: body lacks %q", c.path, c.contains)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", c.path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", c.path)
		}
	}
}

func TestRefusesOtherPaths(t *testing.T) {
	h := web.Handler()
	for _, p := range []string{"/web/", "/web/nope.js", "/web/../go.mod", "/web/index.html", "/v1/other", "/web/.hidden"} {
		if resp := get(t, h, http.MethodGet, p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
	if resp := get(t, h, http.MethodPost, "/"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
	if resp := get(t, h, http.MethodHead, "/web/app.js"); resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD: %d", resp.StatusCode)
	}
}

// Every text colour pair the stylesheet declares meets WCAG AA (4.5:1).
func TestContrastAA(t *testing.T) {
	pairs := [][2]string{
		{"#e8eaed", "#101317"}, // text on page
		{"#b8c0cc", "#101317"}, // muted on page
		{"#b8c0cc", "#1a1f26"}, // muted on panel
		{"#e8eaed", "#23405f"}, // user bubble
		{"#e8eaed", "#262c35"}, // VERA bubble
		{"#ffd6d6", "#3b1d1d"}, // safety card
		{"#ffffff", "#3b1d1d"}, // safety links and heading
		{"#0b0e12", "#8ab4f8"}, // button
		{"#e8eaed", "#4a5566"}, // disabled button
		{"#a8e6b0", "#1a1f26"}, // action state
		{"#ffffff", "#000000"}, // caption
		{"#0b0e12", "#e8eaed"}, // select
		{"#0b0e12", "#ff8a80"}, // pressed mic
		{"#e8eaed", "#1a1f26"}, // session title, secondary buttons, actions
		{"#ffb4a9", "#1a1f26"}, // action declined, expired or failed
		{"#e8eaed", "#0b0e12"}, // rename field
	}
	for _, p := range pairs {
		if r := contrast(p[0], p[1]); r < 4.5 {
			t.Errorf("%s on %s: %.2f:1 < 4.5:1", p[0], p[1], r)
		}
	}
	css := string(mustRead(t, web.Handler(), "/web/app.css"))
	for _, p := range pairs {
		for _, c := range p {
			if c != "#ffffff" && c != "#000000" && !strings.Contains(strings.ToLower(css), c) {
				t.Errorf("colour %s is not in app.css any more; update the pairs", c)
			}
		}
	}
}

// Focus indicators and control outlines are non-text contrast: at least
// 3:1 against what they sit on (WCAG 1.4.11).
func TestNonTextContrast(t *testing.T) {
	pairs := [][2]string{
		{"#ffd479", "#101317"}, // focus ring on the page
		{"#ffd479", "#1a1f26"}, // focus ring on panels and the header
		{"#ffd479", "#000000"}, // focus ring around the HUD
		{"#8ab4f8", "#1a1f26"}, // secondary button outline
	}
	for _, p := range pairs {
		if r := contrast(p[0], p[1]); r < 3 {
			t.Errorf("%s on %s: %.2f:1 < 3:1", p[0], p[1], r)
		}
	}
	css := strings.ToLower(string(mustRead(t, web.Handler(), "/web/app.css")))
	for _, p := range pairs {
		for _, c := range p {
			if c != "#000000" && !strings.Contains(css, c) {
				t.Errorf("colour %s is not in app.css any more; update the pairs", c)
			}
		}
	}
}

// The HUD emulator's own drawing (focus ring, the brief outcome of a
// settled action) meets AA on the glasses panel and button fills; the
// server's prompt pages use the same fills.
func TestHUDContrast(t *testing.T) {
	text := [][2]string{
		{"#A8E6B0", "#1A1B1F"}, // outcome: approved, done
		{"#FFB4A9", "#1A1B1F"}, // outcome: declined, expired, failed
		{"#FFFFFF", "#1A1B1F"}, // outcome: the action's title
	}
	for _, p := range text {
		if r := contrast(p[0], p[1]); r < 4.5 {
			t.Errorf("%s on %s: %.2f:1 < 4.5:1", p[0], p[1], r)
		}
	}
	ring := [][2]string{
		{"#8AB4F8", "#2B2F38"}, // focus ring beside a button's fill
		{"#8AB4F8", "#1A1B1F"}, // and on the panel
	}
	for _, p := range ring {
		if r := contrast(p[0], p[1]); r < 3 {
			t.Errorf("focus ring %s on %s: %.2f:1 < 3:1", p[0], p[1], r)
		}
	}
	js := string(mustRead(t, web.Handler(), "/web/app.js"))
	for _, c := range []string{"#A8E6B0", "#FFB4A9", "#1A1B1F", "#8AB4F8"} {
		if !strings.Contains(js, "'"+c+"'") {
			t.Errorf("colour %s is not in app.js any more; update the pairs", c)
		}
	}
}

func mustRead(t *testing.T, h http.Handler, path string) []byte {
	resp := get(t, h, http.MethodGet, path)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The region picker offers exactly the catalog's regions (plus automatic
// and "another country", which gets the international directory).
func TestRegionPickerMatchesCatalog(t *testing.T) {
	page := string(mustRead(t, web.Handler(), "/"))
	i := strings.Index(page, `<select id="region">`)
	if i < 0 {
		t.Fatal("no region picker")
	}
	sel := page[i : i+strings.Index(page[i:], "</select>")]
	var got []string
	for _, m := range regexp.MustCompile(`<option value="([A-Z]*)"`).FindAllStringSubmatch(sel, -1) {
		if m[1] != "" && m[1] != "XX" {
			got = append(got, m[1])
		}
	}
	cat, err := safety.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if want := cat.Regions(); !slices.Equal(got, want) {
		t.Fatalf("region picker %v, catalog %v", got, want)
	}
}
