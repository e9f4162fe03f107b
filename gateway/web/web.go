package web

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
)

//go:embed static
var static embed.FS

// AssetPrefix is the URL path under which the page's assets are served.
const AssetPrefix = "/web/"

// csp allows only the page's own scripts, styles and connections (the
// websocket and the voice endpoint are same-origin).
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"media-src 'self' blob: mediastream:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// fonts are the Go fonts the glasses package measures with, served so the
// HUD emulator draws with the same metrics.
var fonts = map[string][]byte{
	"fonts/go-regular.ttf": goregular.TTF,
	"fonts/go-bold.ttf":    gobold.TTF,
}

// Handler returns the web client: GET "/" is the page, GET "/web/<file>"
// its assets. Mount it at "/" and "/web/" (other paths get 404).
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// The embed pattern above guarantees the directory; unreachable.
		return http.NotFoundHandler()
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		// Microphone for the voice button; nothing else.
		h.Set("Permissions-Policy", "microphone=(self), camera=(), geolocation=()")
		switch {
		case r.URL.Path == "/" || r.URL.Path == "/index.html":
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/"
			files.ServeHTTP(w, r2)
		case strings.HasPrefix(r.URL.Path, AssetPrefix):
			name := strings.TrimPrefix(path.Clean(r.URL.Path), AssetPrefix)
			if ttf, ok := fonts[name]; ok {
				h.Set("Content-Type", "font/ttf")
				h.Set("Cache-Control", "public, max-age=86400")
				http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(ttf))
				return
			}
			if name == "" || name == "index.html" || strings.HasPrefix(name, ".") {
				http.NotFound(w, r)
				return
			}
			if _, err := fs.Stat(sub, name); err != nil {
				http.NotFound(w, r)
				return
			}
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + name
			files.ServeHTTP(w, r2)
		default:
			http.NotFound(w, r)
		}
	})
}
