package titles

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/gateway"
)

// Attacks on the title route, each with the refusal it must get.
// THREATS.md lists them with their mitigations.

// TestAbuseTitleFormatControls: a partner's title with bidi overrides,
// isolates, invisible marks or joiners would show the person one thing
// and be another (a right-to-left override turns "gpj.exe" around); every
// format character is stripped before the title is stored or sent, and a
// title that is nothing but them is blank (400).
func TestAbuseTitleFormatControls(t *testing.T) {
	m := newManager(t)
	srv, err := gateway.New(gateway.DefaultConfig(), gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount(Route(m.Get))
	put := func(id, title string) int {
		body := `{"title":"` + title + `"}`
		req := httptest.NewRequest(http.MethodPut, "/v1/sessions/"+id+"/title", strings.NewReader(body))
		req.RemoteAddr, req.Host = "127.0.0.1:40000", "localhost"
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	for in, want := range map[string]string{
		`Invoice \u202egpj.exe`:                  "Invoice gpj.exe",
		`\u2067Plan\u2069 for \u2066today\u2069`: "Plan for today",
		`Call\u200e\u200f mum\ufeff`:             "Call mum",
		`Ride\u2060home\u00ad`:                   "Ridehome",
	} {
		s := open(t, m, gateway.DevPartnerID)
		if code := put(s.ID(), in); code != 200 {
			t.Fatalf("PUT %q = %d", in, code)
		}
		if got := s.Title(); got != want {
			t.Errorf("title %q stored as %q, want %q", in, got, want)
		}
	}
	s := open(t, m, gateway.DevPartnerID)
	if code := put(s.ID(), `\u202e\u2066\u200f`); code != 400 {
		t.Fatalf("a title of format characters only = %d, want 400", code)
	}
}
