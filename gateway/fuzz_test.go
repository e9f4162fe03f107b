package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// FuzzDecodeJSON: any body either decodes or is refused with a 4xx *Error
// (never a panic), and an accepted body means one thing: it is valid JSON,
// encoding/json reads the same value from it, and no object in it holds a
// key twice or in two spellings.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"end_user_id":"usr_1","device":"phone","ttl_seconds":60}`,
		`{"end_user_id":"a","end_user_id":"b"}`,
		`{"END_USER_ID":"a"}`,
		`{"end_user_id":"a","\u0064evice":"x","device":"y"}`,
		strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70),
		`{"device":"x"} {"device":"y"}`,
		`{"ttl_seconds":1e400}`,
		`"\ud800"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got clientTokenRequest
		err := decodeJSONBytes(raw, &got)
		if err != nil {
			if st := err.Status(); st < 400 || st > 499 {
				t.Fatalf("refusal %v has status %d", err, st)
			}
			return
		}
		if !json.Valid(bytes.TrimSpace(raw)) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		var want clientTokenRequest
		if e := json.Unmarshal(raw, &want); e != nil || want != got {
			t.Fatalf("accepted %q as %+v; encoding/json reads %+v (%v)", raw, got, want, e)
		}
		if dup := duplicateKey(raw); dup != "" {
			t.Fatalf("accepted %q with the key %q twice", raw, dup)
		}
	})
}

// duplicateKey finds a key repeated (case-insensitively) in one object, by
// the standard decoder's tokens.
func duplicateKey(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type obj struct {
		keys  map[string]bool
		isObj bool
		key   bool // the next string token is a key
	}
	var stack []*obj
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		top := (*obj)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.isObj {
					top.key = true
				}
				stack = append(stack, &obj{keys: map[string]bool{}, isObj: v == '{', key: v == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].isObj {
					stack[len(stack)-1].key = true
				}
				continue
			}
		case string:
			if top != nil && top.isObj && top.key {
				k := strings.ToLower(v)
				if top.keys[k] {
					return v
				}
				top.keys[k] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.isObj {
			top.key = true
		}
	}
}

// FuzzProxyHeader: whatever a trusted proxy's connection starts with, the
// PROXY header reader returns without panicking, reads at most the
// header's own bytes (the v2 length field bounds it to 64 KiB), and leaves
// a request that had no header untouched.
func FuzzProxyHeader(f *testing.F) {
	f.Add([]byte("PROXY TCP4 198.51.100.7 127.0.0.1 5000 80\r\nGET / HTTP/1.1\r\n"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	f.Add([]byte("PROXY TCP6 ::1 ::1 1 2\r\n"))
	f.Add(append(append([]byte{}, proxyV2Sig...), 0x21, 0x11, 0, 12, 198, 51, 100, 7, 127, 0, 0, 1, 0x13, 0x88, 0, 80))
	f.Add(append(append([]byte{}, proxyV2Sig...), 0x20, 0x00, 0, 0))
	f.Add([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(in), 256)
		src, _, err := readProxyHeader(br)
		rest, _ := io.ReadAll(br)
		if err == nil && !src.IsValid() && !bytes.HasPrefix(in, []byte("PROXY ")) && !bytes.HasPrefix(in, proxyV2Sig) && !bytes.Equal(rest, in) {
			t.Fatalf("no header, yet the request lost bytes: %q -> %q", in, rest)
		}
		if len(rest) > len(in) {
			t.Fatalf("read more than was sent")
		}
	})
}
