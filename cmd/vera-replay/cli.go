package main

import (
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// sessionsURL turns -url into the voice session collection URL: the
// gateway's base URL (http://host:port, with or without a path prefix)
// gets /v1/voice/sessions appended; a URL that already ends in it is kept.
// loopback reports whether the host is a loopback address or localhost.
func sessionsURL(raw string) (u string, loopback bool, err error) {
	p, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", false, err
	}
	if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", false, errors.New("want http://HOST:PORT or https://HOST:PORT, e.g. http://127.0.0.1:8080")
	}
	path := strings.TrimRight(p.Path, "/")
	if !strings.HasSuffix(path, rtc.DefaultBasePath) {
		path += rtc.DefaultBasePath
	}
	p.Path, p.RawPath = path, ""
	host := p.Hostname()
	ip := net.ParseIP(host)
	loopback = strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback())
	return p.String(), loopback, nil
}
