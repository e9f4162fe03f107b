package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
)

// GlassesPath is where the Meta Ray-Ban Display web app lives; its assets
// are under GlassesPath + "/".
const GlassesPath = "/glasses"

// GlassesOptions configure the glasses app.
type GlassesOptions struct {
	// DevMode: the gateway has no partner keys, so the app connects without
	// a token (dev mode serves loopback clients only). Otherwise it pairs.
	DevMode bool
}

// asset is one prepared response: its bytes, gzipped once, and headers.
type asset struct {
	ctype, cache, etag string
	raw, gz            []byte
}

// Glasses serves the glasses web app: GET /glasses is the page (revalidated
// on every load), /glasses/sw.js its service worker (same), and
// /glasses/<name>.<hash>.<ext> the immutable, content-hashed assets. The
// build id, a hash of every byte the app is made of, names the service
// worker's cache, so a gateway with another build never serves this one's
// files from it. Glasses has no state after NewGlasses and starts no
// goroutines.
type Glasses struct {
	build string
	csp   string
	files map[string]*asset // by URL path
}

// NewGlasses prepares the app: hashes, the page with its stylesheet
// inlined, gzip encodings.
func NewGlasses(o GlassesOptions) (*Glasses, error) {
	read := func(name string) (string, error) {
		b, err := fs.ReadFile(static, "static/glasses/"+name)
		if err != nil {
			return "", fmt.Errorf("web: glasses: %w", err)
		}
		return string(b), nil
	}
	var src [6]string
	for i, name := range []string{"index.html", "glasses.css", "glasses.js", "sw.js", "manifest.webmanifest", "boot.js"} {
		s, err := read(name)
		if err != nil {
			return nil, err
		}
		src[i] = s
	}
	page, css, js, sw, manifest, boot := src[0], src[1], src[2], src[3], src[4], strings.TrimSpace(src[5])
	png, err := glassesIcon()
	if err != nil {
		return nil, err
	}
	auth := "pair"
	if o.DevMode {
		auth = "dev"
	}
	whole := sha256.New()
	for _, s := range append(src[:], string(png), auth) {
		fmt.Fprintf(whole, "%d:%s", len(s), s)
	}
	g := &Glasses{build: hex.EncodeToString(whole.Sum(nil))[:16], files: map[string]*asset{}}

	jsPath := hashed("app", "js", js)
	iconPath := hashed("icon", "png", string(png))
	manifest = strings.ReplaceAll(manifest, "{{ICON}}", iconPath)
	manifestPath := hashed("manifest", "webmanifest", manifest)
	assets, _ := json.Marshal([]string{jsPath})
	sw = strings.NewReplacer("{{BUILD}}", g.build, "{{ASSETS}}", string(assets)).Replace(sw)
	page = strings.NewReplacer("{{BUILD}}", g.build, "{{AUTH}}", auth, "{{JS}}", jsPath, "{{ICON}}", iconPath,
		"{{MANIFEST}}", manifestPath, "{{CSS}}", css, "{{BOOT}}", boot).Replace(page)
	cssSum, bootSum := sha256.Sum256([]byte(css)), sha256.Sum256([]byte(boot))
	g.csp = "default-src 'none'; script-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(bootSum[:]) + "'; " +
		"style-src 'sha256-" + base64.StdEncoding.EncodeToString(cssSum[:]) + "'; " +
		"img-src 'self'; connect-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

	const immutable = "public, max-age=31536000, immutable"
	for p, a := range map[string]*asset{
		GlassesPath:            {ctype: "text/html; charset=utf-8", cache: "no-cache", raw: []byte(page)},
		GlassesPath + "/sw.js": {ctype: "text/javascript; charset=utf-8", cache: "no-cache", raw: []byte(sw)},
		jsPath:                 {ctype: "text/javascript; charset=utf-8", cache: immutable, raw: []byte(js)},
		iconPath:               {ctype: "image/png", cache: immutable, raw: png},
		manifestPath:           {ctype: "application/manifest+json", cache: immutable, raw: []byte(manifest)},
	} {
		if err := a.prepare(); err != nil {
			return nil, err
		}
		g.files[p] = a
	}
	return g, nil
}

// hashed names an asset by its content: /glasses/<base>.<12 hex>.<ext>.
func hashed(base, ext, content string) string {
	sum := sha256.Sum256([]byte(content))
	return fmt.Sprintf("%s/%s.%s.%s", GlassesPath, base, hex.EncodeToString(sum[:6]), ext)
}

func (a *asset) prepare() error {
	sum := sha256.Sum256(a.raw)
	a.etag = `"` + hex.EncodeToString(sum[:8]) + `"`
	if a.ctype == "image/png" {
		return nil // already compressed
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("web: glasses: gzip: %w", err)
	}
	if _, err := zw.Write(a.raw); err != nil {
		return fmt.Errorf("web: glasses: gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("web: glasses: gzip: %w", err)
	}
	a.gz = b.Bytes()
	return nil
}

// Build is the app's build id: it changes whenever any byte of the app does.
func (g *Glasses) Build() string { return g.build }

// Paths lists the URL paths served, the page first.
func (g *Glasses) Paths() []string {
	out := []string{GlassesPath}
	for p := range g.files {
		if p != GlassesPath {
			out = append(out, p)
		}
	}
	return out
}

// ServeHTTP serves the page and its assets; any other path (an asset of
// another build included) is 404, so nothing stale is ever served.
func (g *Glasses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", g.csp)
	a, ok := g.files[r.URL.Path]
	if !ok {
		h.Set("Cache-Control", "no-store")
		http.NotFound(w, r)
		return
	}
	if r.URL.Path == GlassesPath+"/sw.js" {
		// The worker controls the page at /glasses, one level up.
		h.Set("Service-Worker-Allowed", GlassesPath)
		h.Set("Content-Security-Policy", "default-src 'none'; connect-src 'self'")
	}
	if r.URL.Path == GlassesPath {
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
	}
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", a.cache)
	body, etag := a.raw, a.etag
	if a.gz != nil {
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			body, etag = a.gz, strings.TrimSuffix(a.etag, `"`)+`-gz"`
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, etag) {
		h.Del("Content-Type")
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
