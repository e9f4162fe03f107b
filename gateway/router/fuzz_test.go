package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/safety"
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

// FuzzVERAReply: any engine reply body decodes or fails cleanly, never
// panics; a decoded safety never has a nil resource list, never an empty
// one when a card is required; a known crisis level stays crisis whatever
// else the body holds; a present but unreadable safety object is at least
// elevated; every kept action has an id, a type and an expiry.
func FuzzVERAReply(f *testing.F) {
	f.Add([]byte(veraCrisisReply))
	f.Add([]byte(`{"message":"hi","safety":{"level":"elevated"}}`))
	f.Add([]byte(`{"message":{"role":"assistant"}}`))
	f.Add([]byte(`{"message":"x","safety":{"level":"crisis","display_required":true,"resources":[7,"Call 988",{"name":1}]},"proposed_actions":[{"id":"a","type":"t","expires_at":1767225600.5},{"id":3}]}`))
	f.Add([]byte(`{"message":"x","safety":"crisis","proposed_actions":{"id":"a"}}`))
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	fill := func(l safety.Level) []safety.Resource {
		return []safety.Resource{{ID: "local-" + l.String(), Name: "Local"}}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rep, err := decodeVERAReply(in, now, fill)
		if err != nil {
			return
		}
		a := rep.Safety
		if a.Resources == nil || (a.DisplayRequired && len(a.Resources) == 0) {
			t.Fatalf("resources %v with display_required %v", a.Resources, a.DisplayRequired)
		}
		var probe struct {
			Safety json.RawMessage `json:"safety"`
		}
		if json.Unmarshal(in, &probe) == nil && !isNull(probe.Safety) {
			var lv struct {
				Level string `json:"level"`
			}
			if json.Unmarshal(probe.Safety, &lv) == nil && strings.EqualFold(strings.TrimSpace(lv.Level), "crisis") && a.Level != safety.LevelCrisis {
				t.Fatalf("crisis read as %v", a.Level)
			}
			if a.Level < safety.LevelElevated && slices.Contains(rep.Defects, DefectSafetyUnreadable) {
				t.Fatalf("unreadable safety read as %v", a.Level)
			}
		}
		for _, pa := range rep.Actions {
			if strings.TrimSpace(pa.ID) == "" || strings.TrimSpace(pa.Type) == "" || pa.ExpiresAt.IsZero() {
				t.Fatalf("kept action %+v", pa)
			}
		}
	})
}

// FuzzGuardVerdict: any guard answer yields a level and reasons drawn only
// from the configured codes (never the answer's own text), or a protocol
// error.
func FuzzGuardVerdict(f *testing.F) {
	f.Add("unsafe\nS11")
	f.Add("safe")
	f.Add("unsafe S1, S11 my name is Sam")
	codes := map[string]safety.Level{"S11": safety.LevelCrisis, "S1": safety.LevelElevated}
	f.Fuzz(func(t *testing.T, answer string) {
		level, reasons, err := parseGuardVerdict(answer, "g", codes)
		if err != nil {
			if level != safety.LevelNone || reasons != nil {
				t.Fatalf("error %v with level %v reasons %v", err, level, reasons)
			}
			return
		}
		for _, r := range reasons {
			if r != "g:S11" && r != "g:S1" && r != "g:unsafe" {
				t.Fatalf("reason %q is not a configured code", r)
			}
		}
		if len(reasons) == 0 && level != safety.LevelNone {
			t.Fatalf("level %v without a reason", level)
		}
	})
}
