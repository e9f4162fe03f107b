package event

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
)

// serverPayloads maps every server event type to its payload type.
var serverPayloads = map[Type]func() any{
	TypeSessionCreated:    func() any { return new(SessionCreated) },
	TypeSessionTitle:      func() any { return new(SessionTitle) },
	TypeNotice:            func() any { return new(Notice) },
	TypeSpeechStarted:     func() any { return new(Speech) },
	TypeSpeechStopped:     func() any { return new(SpeechStopped) },
	TypeNothingHeard:      func() any { return new(NothingHeard) },
	TypeTranscriptPartial: func() any { return new(Transcript) },
	TypeTranscriptFinal:   func() any { return new(Transcript) },
	TypeReplyDelta:        func() any { return new(ReplyDelta) },
	TypeReplyDone:         func() any { return new(ReplyDone) },
	TypeReplyAudioStarted: func() any { return new(ReplyAudio) },
	TypeReplyAudioStopped: func() any { return new(ReplyAudio) },
	TypeReplyInterrupted:  func() any { return new(ReplyInterrupted) },
	TypeSafetyCard:        func() any { return new(SafetyCard) },
	TypeDisplayCard:       func() any { return new(DisplayCard) },
	TypeDisplayClear:      func() any { return new(DisplayClear) },
	TypeCaption:           func() any { return new(Caption) },
	TypeActionProposed:    func() any { return new(ActionProposed) },
	TypeActionUpdated:     func() any { return new(ActionUpdated) },
	TypeError:             func() any { return new(Error) },
}

// TestDocsExamples keeps docs/events.md true: every event type has a
// section, every client example decodes strictly, and every server example
// carries the envelope and decodes into its payload type with no unknown
// field.
func TestDocsExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(fixtures.RepoRoot(t), "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile("(?m)^### `([a-z._]+)`\\s*$")
	block := regexp.MustCompile("(?s)```json\\n(.*?)```")
	idx := section.FindAllSubmatchIndex(doc, -1)
	seen := map[Type]int{}
	for i, m := range idx {
		typ := Type(doc[m[2]:m[3]])
		end := len(doc)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		for _, b := range block.FindAllSubmatch(doc[m[1]:end], -1) {
			seen[typ]++
			checkExample(t, typ, b[1])
		}
	}
	for typ := range serverPayloads {
		if seen[typ] == 0 {
			t.Errorf("docs/events.md has no example of server event %s", typ)
		}
	}
	for _, typ := range ClientTypes() {
		if seen[typ] == 0 {
			t.Errorf("docs/events.md has no example of client event %s", typ)
		}
	}
}

func checkExample(t *testing.T, typ Type, raw []byte) {
	t.Helper()
	if _, client := clientTypes[typ]; client {
		ev, err := Decode(bytes.TrimSpace(raw))
		if err != nil || ev.EventType() != typ {
			t.Errorf("%s example does not decode: %v", typ, err)
		}
		return
	}
	mk, ok := serverPayloads[typ]
	if !ok {
		t.Errorf("docs section %s names no event type", typ)
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Errorf("%s example is not JSON: %v", typ, err)
		return
	}
	var env Envelope
	_ = json.Unmarshal(raw, &env)
	if env.Type != typ || fields["seq"] == nil || fields["session_id"] == nil || env.At == 0 {
		t.Errorf("%s example lacks the envelope: %s", typ, raw)
	}
	for _, k := range []string{"type", "seq", "session_id", "at"} {
		delete(fields, k)
	}
	body, _ := json.Marshal(fields)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(mk()); err != nil {
		t.Errorf("%s example does not match the payload type: %v", typ, err)
	}
	if strings.Contains(string(raw), "…") {
		t.Errorf("%s example contains an ellipsis", typ)
	}
}
