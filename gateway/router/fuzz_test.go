package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzSSE: any byte stream yields events or an error, never a panic, and
// never more data than it was given.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"))
	f.Add([]byte(": comment\r\ndata: x\r\ndata: y\r\n\r\n"))
	f.Add([]byte("data"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := newSSEReader(bytes.NewReader(in))
		total := 0
		for range 10000 {
			data, err := s.next()
			total += len(data)
			if total > len(in) {
				t.Fatalf("read %d bytes of data from %d of input", total, len(in))
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errSSELine) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
		}
	})
}

// FuzzOgg: the Ogg reader never panics and every packet it emits lies
// within the input.
func FuzzOgg(f *testing.F) {
	var b bytes.Buffer
	oggPage(&b, 1, 0, append([]byte("OpusHead"), 1, 1, 0, 0))
	oggPage(&b, 1, 1, []byte("OpusTags"))
	oggPage(&b, 1, 2, []byte{1, 2, 3}, bytes.Repeat([]byte{9}, 300))
	f.Add(b.Bytes())
	f.Add([]byte("OggS"))
	f.Fuzz(func(t *testing.T, in []byte) {
		total := 0
		_ = oggPackets(bytes.NewReader(in), func(p []byte) error {
			total += len(p)
			if total > len(in) {
				t.Fatalf("emitted %d bytes from %d", total, len(in))
			}
			return nil
		})
	})
}

// FuzzVERAReply: any engine reply body decodes or fails cleanly, and a
// decoded safety never has a nil resource list or a level below what a
// known crisis string says.
func FuzzVERAReply(f *testing.F) {
	f.Add([]byte(veraCrisisReply))
	f.Add([]byte(`{"message":"hi","safety":{"level":"elevated"}}`))
	f.Add([]byte(`{"message":{"role":"assistant"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var m veraMessage
		if json.Unmarshal(in, &m) != nil || m.Safety == nil {
			return
		}
		a, err := m.Safety.assessment()
		if err != nil {
			return
		}
		if a.Resources == nil {
			t.Fatal("nil resources")
		}
		if m.Safety.Level == "crisis" && a.Level.String() != "crisis" {
			t.Fatalf("crisis mapped to %v", a.Level)
		}
	})
}
