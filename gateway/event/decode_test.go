package event

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
)

func TestDecodeAccepts(t *testing.T) {
	six := 6
	cases := []struct {
		in   string
		want Client
	}{
		{`{"type":"hello","device":"meta-rayban-display","surfaces":["hud","phone"],"overrides":{"lines_per_page":6},"region":"US"}`,
			&Hello{Device: "meta-rayban-display", Surfaces: []string{"hud", "phone"}, Overrides: &devices.Overrides{LinesPerPage: &six}, Region: "US"}},
		{`{"type":"hello","device":"browser","resume_token":"rt_abc","last_seq":12}`,
			&Hello{Device: "browser", ResumeToken: "rt_abc", LastSeq: 12}},
		{`{"type":"input.text","text":"hi there"}`, &InputText{Text: "hi there"}},
		{`{"type":"display.ack","card_id":"c1","page":2,"surface":"hud"}`, &DisplayAck{CardID: "c1", Page: 2, Surface: "hud"}},
		{`{"type":"input.key","key":"next","surface":"hud"}`, &InputKey{Key: "next", Surface: "hud"}},
		{`{"type":"action.approve","action_id":"a1"}`, &ActionApprove{ActionID: "a1"}},
		{`{"type":"action.decline","action_id":"a1","reason":"not now"}`, &ActionDecline{ActionID: "a1", Reason: "not now"}},
		{`{"type":"playback.started","turn_id":"t1"}`, &PlaybackStarted{TurnID: "t1"}},
		{`{"type":"response.cancel"}`, &ResponseCancel{}},
		{`{"type":"session.rename","title":"Loot"}`, &SessionRename{Title: ptr("Loot")}},
		{`{"type":"session.rename","title":""}`, &SessionRename{Title: ptr("")}},
		{`{"type":"session.rename","title":"` + strings.Repeat("ü", MaxTitleChars) + `"}`, &SessionRename{Title: ptr(strings.Repeat("ü", MaxTitleChars))}},
		{`{"type":"input.text","text":"` + strings.Repeat("é", MaxTextChars) + `"}`, &InputText{Text: strings.Repeat("é", MaxTextChars)}},
	}
	for _, c := range cases {
		got, err := Decode([]byte(c.in))
		if err != nil {
			t.Errorf("Decode(%.60s): %v", c.in, err)
			continue
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(c.want)
		if string(gj) != string(wj) || got.EventType() != c.want.EventType() {
			t.Errorf("Decode(%.60s) = %s, want %s", c.in, gj, wj)
		}
	}
}

func ptr(s string) *string { return &s }

func TestDecodeRejects(t *testing.T) {
	cases := []struct {
		name, in string
		err      error
		field    string
	}{
		{"empty", ``, ErrInvalidJSON, ""},
		{"not json", `hello`, ErrInvalidJSON, ""},
		{"array", `[1,2]`, ErrInvalidJSON, ""},
		{"null", `null`, ErrInvalidJSON, ""},
		{"trailing", `{"type":"response.cancel"} {}`, ErrInvalidJSON, ""},
		{"no type", `{"text":"x"}`, ErrMissing, "type"},
		{"type number", `{"type":5}`, ErrWrongType, "type"},
		{"unknown type", `{"type":"reply.delta","delta":"x"}`, ErrUnknownType, "type"},
		{"unknown field", `{"type":"input.text","text":"x","mood":"sad"}`, ErrUnknownField, "mood"},
		{"unknown nested field", `{"type":"hello","device":"d","overrides":{"colour":1}}`, ErrUnknownField, "colour"},
		{"text number", `{"type":"input.text","text":42}`, ErrWrongType, "text"},
		{"page string", `{"type":"display.ack","card_id":"c","page":"1","surface":"hud"}`, ErrWrongType, "page"},
		{"page float", `{"type":"display.ack","card_id":"c","page":1.5,"surface":"hud"}`, ErrWrongType, "page"},
		{"nested wrong type", `{"type":"hello","device":"d","overrides":{"lines_per_page":"six"}}`, ErrWrongType, "overrides.lines_per_page"},
		{"surfaces not array", `{"type":"hello","device":"d","surfaces":"hud"}`, ErrWrongType, "surfaces"},
		{"text too long", `{"type":"input.text","text":"` + strings.Repeat("a", MaxTextChars+1) + `"}`, ErrTooLong, "text"},
		{"text blank", `{"type":"input.text","text":"  \n"}`, ErrMissing, "text"},
		{"text missing", `{"type":"input.text"}`, ErrMissing, "text"},
		{"bad key", `{"type":"input.key","key":"up"}`, ErrInvalidValue, "key"},
		{"page zero", `{"type":"display.ack","card_id":"c","page":0,"surface":"hud"}`, ErrInvalidValue, "page"},
		{"no device", `{"type":"hello"}`, ErrMissing, "device"},
		{"device with space", `{"type":"hello","device":"a b"}`, ErrInvalidValue, "device"},
		{"seq without token", `{"type":"hello","device":"d","last_seq":3}`, ErrInvalidValue, "last_seq"},
		{"negative seq", `{"type":"hello","device":"d","resume_token":"x","last_seq":-1}`, ErrInvalidValue, "last_seq"},
		{"duplicate surface", `{"type":"hello","device":"d","surfaces":["hud","hud"]}`, ErrInvalidValue, "surfaces"},
		{"rename no title", `{"type":"session.rename"}`, ErrMissing, "title"},
		{"rename null title", `{"type":"session.rename","title":null}`, ErrMissing, "title"},
		{"rename title number", `{"type":"session.rename","title":7}`, ErrWrongType, "title"},
		{"rename title too long", `{"type":"session.rename","title":"` + strings.Repeat("a", MaxTitleChars+1) + `"}`, ErrTooLong, "title"},
		{"rename extra field", `{"type":"session.rename","title":"x","by":"auto"}`, ErrUnknownField, "by"},
		{"huge", `{"type":"input.text","text":"` + strings.Repeat("a", MaxEventBytes) + `"}`, ErrTooLarge, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := Decode([]byte(c.in))
			if err == nil {
				t.Fatalf("Decode accepted %.60s as %#v", c.in, ev)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			if !errors.Is(err, c.err) {
				t.Errorf("error %v, want %v", err, c.err)
			}
			if de.Field != c.field {
				t.Errorf("field %q, want %q (%v)", de.Field, c.field, err)
			}
			if c.field != "" && !strings.Contains(de.Error(), c.field) {
				t.Errorf("message %q does not name %q", de.Error(), c.field)
			}
			p := de.Payload()
			if p.Error.Type != ErrInvalidRequest || p.Error.Message == "" {
				t.Errorf("payload %+v", p)
			}
		})
	}
}

func TestEncodeFlattensEnvelope(t *testing.T) {
	card := SafetyCard{CardID: "c1", TurnID: "t1", RequiresAck: true, Level: safety.LevelCrisis, DisplayRequired: true,
		Resources: []safety.Resource{{ID: "r1", Name: "988", Actions: []safety.Action{{Type: safety.ActionCall, Value: "988"}}}},
		Surfaces:  []CardSurface{}}
	b, err := Encode(Envelope{Type: TypeSafetyCard, Seq: 7, SessionID: "s1", At: 1700000000000}, card)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if m["type"] != "safety.card" || m["seq"] != 7.0 || m["session_id"] != "s1" || m["at"] != 1700000000000.0 || m["card_id"] != "c1" || m["requires_ack"] != true {
		t.Errorf("encoded %s", b)
	}
	res := m["resources"].([]any)[0].(map[string]any)
	if res["name"] != "988" || res["actions"].([]any)[0].(map[string]any)["value"] != "988" {
		t.Errorf("resource shape lost: %s", b)
	}
	if _, err := Encode(Envelope{Type: TypeNotice}, []int{1}); !errors.Is(err, ErrPayloadNotObject) {
		t.Errorf("array payload: %v", err)
	}
	b, err = Encode(Envelope{Type: TypeDisplayClear, Seq: 1}, struct{}{})
	if err != nil || !json.Valid(b) {
		t.Errorf("empty payload: %s %v", b, err)
	}
}

func FuzzDecodeClientEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","device":"meta-rayban-display","surfaces":["hud"],"overrides":{"lines_per_page":6}}`,
		`{"type":"input.text","text":"I want to end my life tonight"}`,
		`{"type":"display.ack","card_id":"c1","page":1,"surface":"hud"}`,
		`{"type":"input.key","key":"select"}`,
		`{"type":"action.decline","action_id":"a","reason":"no"}`,
		`{"type":"input.text","text":1}`, `{"type":`, `[]`, `{"type":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := Decode(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Err == nil {
				t.Fatalf("error %v is not a typed DecodeError", err)
			}
			if !json.Valid(mustJSON(t, de.Payload())) {
				t.Fatal("error payload is not JSON")
			}
			return
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("Decode returned an invalid event: %v", err)
		}
		// A decoded event re-encodes and decodes to the same value.
		b := mustJSON(t, ev)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m["type"] = string(ev.EventType())
		again, err := Decode(mustJSON(t, m))
		if err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		if string(mustJSON(t, again)) != string(b) {
			t.Fatalf("round trip changed %s to %s", b, mustJSON(t, again))
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
