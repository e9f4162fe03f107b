package gateway

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWriteErrorOutsideTheServer: a handler served without the server's
// middleware (a sub-package's own tests) still answers with an envelope
// whose request_id is the X-Request-Id it sends: the caller's when valid,
// a fresh one otherwise. Non-API errors never leak their text.
func TestWriteErrorOutsideTheServer(t *testing.T) {
	for _, c := range []struct{ sent, want string }{
		{"trace-1", "trace-1"}, {"bad id <x>", "req_"}, {"", "req_"},
	} {
		req := httptest.NewRequest("POST", "/x", nil)
		if c.sent != "" {
			req.Header.Set("X-Request-Id", c.sent)
		}
		rec := httptest.NewRecorder()
		WriteError(rec, req, &Error{Type: InvalidRequest, Message: "no", HTTPStatus: 415, RetryAfter: 2})
		var e envelope
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		hdr := rec.Header().Get("X-Request-Id")
		if rec.Code != 415 || e.Error.Type != InvalidRequest || e.Error.RequestID != hdr || !strings.HasPrefix(hdr, c.want) ||
			rec.Header().Get("Retry-After") != "2" {
			t.Errorf("sent %q: %d %s (X-Request-Id %q)", c.sent, rec.Code, rec.Body, hdr)
		}
	}
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest("GET", "/", nil), errors.New("dial 10.0.0.7: refused"))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "10.0.0.7") || !strings.Contains(rec.Body.String(), `"internal_error"`) {
		t.Fatalf("internal error = %d %s", rec.Code, rec.Body)
	}
}

// TestRequirePrincipal: behind the middleware the stored principal comes
// back; without one the caller gets 401 and the envelope.
func TestRequirePrincipal(t *testing.T) {
	req := httptest.NewRequest("POST", "/x", nil)
	rec := httptest.NewRecorder()
	if _, ok := RequirePrincipal(rec, req); ok || rec.Code != 401 || !strings.Contains(rec.Body.String(), `"authentication_error"`) {
		t.Fatalf("no principal: ok, %d %s", rec.Code, rec.Body)
	}
	want := Principal{PartnerID: "p", Via: "key", Scopes: []string{ScopeSessionsWrite}}
	rec = httptest.NewRecorder()
	got, ok := RequirePrincipal(rec, req.WithContext(WithPrincipal(req.Context(), want)))
	if !ok || got.PartnerID != "p" || !got.Has(ScopeSessionsWrite) || rec.Body.Len() != 0 {
		t.Fatalf("stored principal: %+v %v, wrote %q", got, ok, rec.Body)
	}
}
