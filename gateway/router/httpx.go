package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// errOversized: a response body passed router.max_body_bytes.
var errOversized = errors.New("response body over router.max_body_bytes")

// boundedReader fails with errOversized, rather than truncating silently,
// once more than n bytes were read.
type boundedReader struct {
	r io.Reader
	n int64 // bytes still allowed
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n < 0 {
		return 0, errOversized
	}
	if int64(len(p)) > b.n+1 {
		p = p[:b.n+1]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	if b.n < 0 {
		return n, errOversized
	}
	return n, err
}

// readKind classifies a body read error: oversized is a protocol fault,
// anything else (reset, unexpected EOF) a connection fault.
func readErr(err error, what string) error {
	if errors.Is(err, errOversized) {
		return perr(KindProtocol, "%s: %w", what, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return perr(KindConnection, "%s: %w", what, err)
}

// do sends req and classifies transport failures.
func do(ctx context.Context, client *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, &ProviderError{Kind: KindConnection, Err: err}
	}
	return resp, nil
}

// mediaType returns the response's media type, lower case, without params.
func mediaType(resp *http.Response) string {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// wantType fails with KindProtocol unless the response has one of types
// (a type ending in "/" matches its whole family, e.g. "audio/").
func wantType(resp *http.Response, types ...string) error {
	mt := mediaType(resp)
	for _, t := range types {
		if mt == t || (strings.HasSuffix(t, "/") && strings.HasPrefix(mt, t)) {
			return nil
		}
	}
	return &ProviderError{Kind: KindProtocol, Status: resp.StatusCode,
		Err: fmt.Errorf("content type %q, want %s", resp.Header.Get("Content-Type"), strings.Join(types, " or "))}
}

// decodeJSON reads a bounded JSON body into v.
func decodeJSON(resp *http.Response, maxBody int64, v any) error {
	if err := wantType(resp, "application/json"); err != nil {
		return err
	}
	body, err := io.ReadAll(&boundedReader{r: resp.Body, n: maxBody})
	if err != nil {
		return readErr(err, "read body")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return perr(KindProtocol, "decode body: %w", err)
	}
	return nil
}

// errorEnvelope covers the VERA envelope {"error":{"type","message",
// "request_id"}} and OpenAI's {"error":{"message","type","code"}}.
type errorEnvelope struct {
	Error struct {
		Type      string `json:"type"`
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
	} `json:"error"`
}

// httpFailure turns a non-2xx response into a ProviderError: 429 is
// rate_limited (with Retry-After), 502/503/504 unavailable, other 5xx
// server_error, other 4xx rejected. An envelope type of rate_limited or
// engine_unavailable wins over the status.
func httpFailure(resp *http.Response, maxBody int64, now time.Time) *ProviderError {
	pe := &ProviderError{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), now)}
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		pe.Kind = KindRateLimited
	case s == http.StatusBadGateway || s == http.StatusServiceUnavailable || s == http.StatusGatewayTimeout:
		pe.Kind = KindUnavailable
	case s >= 500:
		pe.Kind = KindServer
	default:
		pe.Kind = KindRejected
	}
	msg := http.StatusText(resp.StatusCode)
	if mediaType(resp) == "application/json" {
		body, _ := io.ReadAll(&boundedReader{r: resp.Body, n: min(maxBody, 64<<10)})
		var env errorEnvelope
		if json.Unmarshal(body, &env) == nil && (env.Error.Type != "" || env.Error.Message != "") {
			pe.Type, pe.RequestID = env.Error.Type, env.Error.RequestID
			if env.Error.Message != "" {
				msg = env.Error.Message
			}
			switch env.Error.Type {
			case "rate_limited":
				pe.Kind = KindRateLimited
			case "engine_unavailable":
				pe.Kind = KindUnavailable
			}
		}
	}
	if pe.RequestID == "" {
		pe.RequestID = resp.Header.Get("Request-Id")
	}
	pe.Err = errors.New(msg)
	return pe
}

// retryAfter parses Retry-After as seconds or an HTTP date; 0 when absent
// or unparseable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(min(s, 86400)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
