package web_test

import (
	"bytes"
	"compress/gzip"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/gateway/web"
)

func newGlasses(t *testing.T, dev bool) *web.Glasses {
	t.Helper()
	g, err := web.NewGlasses(web.GlassesOptions{DevMode: dev})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func fetch(t *testing.T, h http.Handler, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

var assetRe = regexp.MustCompile(`/glasses/(app|icon|manifest)\.[0-9a-f]{12}\.(js|png|webmanifest)`)

// TestGlassesAssetsHashedAndCached: the page and the worker revalidate on
// every load; everything they name is content-hashed and immutable; an
// asset of another build is 404; the build id names the worker's cache.
func TestGlassesAssetsHashedAndCached(t *testing.T) {
	g := newGlasses(t, false)
	res, page := fetch(t, g, "/glasses", nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		res.Header.Get("Cache-Control") != "no-cache" || res.Header.Get("ETag") == "" {
		t.Fatalf("page: %d %v", res.StatusCode, res.Header)
	}
	html := string(page)
	for _, want := range []string{`<meta name="viewport" content="width=600, height=600`, `<meta name="mrbd-web-app-capable" content="yes">`,
		`<meta name="vera-build" content="` + g.Build() + `">`, `data-auth="pair"`, `<style>`, `id="msg"`, `class="focusable"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, "{{") {
		t.Errorf("page has an unfilled placeholder")
	}
	urls := assetRe.FindAllString(html, -1)
	if len(urls) != 3 {
		t.Fatalf("page names %d hashed assets: %v", len(urls), urls)
	}
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "style-src 'sha256-") || strings.Contains(csp, "unsafe") {
		t.Errorf("page CSP %q", csp)
	}
	for _, u := range urls {
		r, b := fetch(t, g, u, nil)
		if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || len(b) == 0 {
			t.Errorf("%s: %d %q", u, r.StatusCode, r.Header.Get("Cache-Control"))
		}
		// The name carries the content: another build's name is not served.
		stale := u[:strings.LastIndex(u, ".")-12] + "000000000000" + u[strings.LastIndex(u, "."):]
		if r, _ := fetch(t, g, stale, nil); r.StatusCode != 404 || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d, want 404 no-store", stale, r.StatusCode)
		}
		if strings.HasSuffix(u, ".png") {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() != 128 || img.Bounds().Dy() != 128 {
				t.Errorf("icon: %v %v", err, img)
			}
		}
		if strings.HasSuffix(u, ".webmanifest") && !strings.Contains(string(b), `"start_url": "/glasses"`) {
			t.Errorf("manifest %s", b)
		}
	}
	res, sw := fetch(t, g, "/glasses/sw.js", nil)
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-cache" || res.Header.Get("Service-Worker-Allowed") != "/glasses" ||
		!strings.Contains(res.Header.Get("Content-Type"), "javascript") {
		t.Fatalf("worker: %d %v", res.StatusCode, res.Header)
	}
	var js string
	for _, u := range urls {
		if strings.HasSuffix(u, ".js") {
			js = u
		}
	}
	if !strings.Contains(string(sw), "const BUILD = '"+g.Build()+"'") || !strings.Contains(string(sw), `["`+js+`"]`) {
		t.Errorf("worker does not carry the build and the script: %s", sw[:300])
	}
	for _, p := range []string{"/glasses/", "/glasses/app.js", "/glasses/index.html", "/glasses/../web/app.js", "/glasses/sw.js/x"} {
		if r, _ := fetch(t, g, p, nil); r.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", p, r.StatusCode)
		}
	}
}

// TestGlassesBuildChangesWithTheApp: the build id (and so the worker's
// bytes and cache name) differs between app variants; it is stable for one.
func TestGlassesBuildChangesWithTheApp(t *testing.T) {
	a, b, dev := newGlasses(t, false), newGlasses(t, false), newGlasses(t, true)
	if a.Build() != b.Build() || len(a.Build()) != 16 {
		t.Fatalf("builds %q %q", a.Build(), b.Build())
	}
	if dev.Build() == a.Build() {
		t.Fatal("the dev-mode page has the same build id as the paired one")
	}
	_, page := fetch(t, dev, "/glasses", nil)
	if !strings.Contains(string(page), `data-auth="dev"`) {
		t.Error("dev page is not marked dev")
	}
}

func TestGlassesGzipAndRevalidation(t *testing.T) {
	g := newGlasses(t, false)
	plain, raw := fetch(t, g, "/glasses", nil)
	res, zipped := fetch(t, g, "/glasses", map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
	if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" || len(zipped) >= len(raw) {
		t.Fatalf("gzip: %v, %d vs %d bytes", res.Header, len(zipped), len(raw))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if !bytes.Equal(unzipped, raw) {
		t.Fatal("gzipped page differs from the plain one")
	}
	if res.Header.Get("ETag") == plain.Header.Get("ETag") {
		t.Error("both encodings share an ETag")
	}
	if r, _ := fetch(t, g, "/glasses", map[string]string{"Accept-Encoding": "gzip;q=0"}); r.Header.Get("Content-Encoding") != "" {
		t.Error("gzip sent although refused")
	}
	for _, enc := range []string{"", "gzip"} {
		first, _ := fetch(t, g, "/glasses", map[string]string{"Accept-Encoding": enc})
		again, body := fetch(t, g, "/glasses", map[string]string{"Accept-Encoding": enc, "If-None-Match": first.Header.Get("ETag")})
		if again.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("revalidation (%q): %d, %d bytes", enc, again.StatusCode, len(body))
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/glasses", nil)
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

// Every text colour pair of the glasses app meets WCAG AA (4.5:1), and its
// focus ring 3:1 against what it sits on. The card's own colours come from
// the gateway's ops; the stylesheet's defaults are the same values.
func TestGlassesContrast(t *testing.T) {
	text := [][2]string{
		{"#ffffff", "#000000"}, // captions
		{"#cfd3d9", "#000000"}, // status, the person's words, notices
		{"#ffd479", "#000000"}, // reconnecting, pairing notes
		{"#e8eaed", "#000000"}, // pairing hint
		{"#ffffff", "#1c1e21"}, // the message box
		{"#9aa0a6", "#1c1e21"}, // its placeholder
		{"#f1f3f4", "#2b2f38"}, // buttons
		{"#e8eaed", "#1a1b1f"}, // card body
		{"#ffd479", "#1a1b1f"}, // card heading
		{"#ffffff", "#1a1b1f"}, // card title, emphasis
		{"#cfd3d9", "#1a1b1f"}, // n/N
	}
	for _, p := range text {
		if r := contrast(p[0], p[1]); r < 4.5 {
			t.Errorf("%s on %s: %.2f:1 < 4.5:1", p[0], p[1], r)
		}
	}
	for _, bg := range []string{"#000000", "#1a1b1f", "#2b2f38"} {
		if r := contrast("#8ab4f8", bg); r < 3 {
			t.Errorf("focus ring on %s: %.2f:1 < 3:1", bg, r)
		}
	}
	_, page := fetch(t, newGlasses(t, false), "/glasses", nil)
	css := strings.ToLower(string(page))
	for _, p := range text {
		for _, c := range p {
			if c != "#000000" && c != "#ffffff" && !strings.Contains(css, c) {
				t.Errorf("colour %s is not in the glasses stylesheet any more; update the pairs", c)
			}
		}
	}
}
