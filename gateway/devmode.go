package gateway

import (
	"mime"
	"net"
	"net/http"
	"strings"
)

// devModeRefusal keeps dev mode (no keys, loopback clients only) safe on a
// developer's laptop, where a web page in the same browser is the attacker:
//
//   - DNS rebinding: a page on evil.example whose name later resolves to
//     127.0.0.1 reaches the gateway as same-origin, but its requests carry
//     Host: evil.example. Only loopback Host values are served.
//   - Cross-site simple requests: a form post or an untyped fetch needs no
//     CORS preflight, so a page could reach state-changing routes. A POST,
//     PUT or PATCH whose content type is CORS-simple (none, text/plain or a
//     form encoding) is refused; JSON, application/sdp and
//     application/trickle-ice-sdpfrag need a preflight, which the gateway
//     never grants, and stay fine.
func devModeRefusal(r *http.Request) *Error {
	if !loopbackHostHeader(r.Host) {
		return Errorf(PermissionError, "dev mode serves only a loopback Host (localhost, 127.0.0.1, [::1]): Host %q refused", r.Host)
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		if corsSimpleType(r.Header.Get("Content-Type")) {
			return &Error{Type: InvalidRequest, HTTPStatus: http.StatusUnsupportedMediaType,
				Message: "dev mode refuses state-changing requests without a non-simple Content-Type (cross-site forms and untyped fetches): send application/json, application/sdp or application/trickle-ice-sdpfrag"}
		}
	}
	return nil
}

// loopbackHostHeader reports whether a Host header names this machine's
// loopback: localhost (or a name under .localhost) or a loopback address,
// with or without a port.
func loopbackHostHeader(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// corsSimpleType reports whether a Content-Type lets a browser send the
// request cross-site without a preflight (Fetch standard: none,
// application/x-www-form-urlencoded, multipart/form-data, text/plain; an
// unparsable one is treated as simple too).
func corsSimpleType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return true
	}
	switch strings.ToLower(mt) {
	case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
		return true
	}
	return false
}
