package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/safety"
)

// Defects of an engine reply the router read around instead of failing the
// turn; the "defect" label of vera_router_reply_defects_total.
const (
	DefectMessageUnreadable  = "message_unreadable"  // no readable message: the turn fails over, its safety is kept
	DefectActionDropped      = "action_dropped"      // one proposed action could not be read and was dropped
	DefectActionsUnreadable  = "actions_unreadable"  // proposed_actions was not a list: every action dropped
	DefectSafetyUnreadable   = "safety_unreadable"   // the safety object could not be read: counted as elevated
	DefectDisplayUnreadable  = "display_unreadable"  // display_required was not a boolean: read as true
	DefectResourceSalvaged   = "resource_salvaged"   // a malformed resource was kept with the fields that could be read
	DefectResourceUnreadable = "resource_unreadable" // a resource with nothing readable: local resources added
	DefectResourcesFilled    = "resources_filled"    // a card the engine required held no resources: local ones added
)

// veraReply is an engine message reply as the router reads it: every part
// that can be read is kept, whatever is wrong with the others.
type veraReply struct {
	Message string
	// MessageOK is false when the reply had no readable message.
	MessageOK bool
	Safety    safety.Assessment
	Actions   []ProposedAction
	// Defects lists what was read around, in order (see Defect*).
	Defects []string
}

// errReplyNotObject: the body was not a JSON object, so nothing in it can be
// trusted, the safety object included.
var errReplyNotObject = errors.New("reply is not a JSON object")

// decodeVERAReply reads the body of POST /conversations/{id}/messages
// tolerantly (item 5 of issue 13): a valid safety object is never lost to
// an unexpected field elsewhere; an unreadable safety object counts as
// elevated, never none; an action that cannot be read is dropped. fill gives
// the local resources for a level (never empty); now dates actions that
// carry no expiry. Only a body that is not a JSON object is an error.
func decodeVERAReply(body []byte, now time.Time, fill func(safety.Level) []safety.Resource) (veraReply, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return veraReply{}, errReplyNotObject
	}
	var out veraReply
	defect := func(d string) { out.Defects = append(out.Defects, d) }
	if text, ok := readMessage(top["message"]); ok {
		out.Message, out.MessageOK = text, true
	} else {
		defect(DefectMessageUnreadable)
	}
	out.Safety = readSafety(top["safety"], fill, defect)
	out.Actions = readActions(top["proposed_actions"], now, defect)
	return out, nil
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// readMessage accepts a string, {"role","text"} or {"role","content"}.
func readMessage(raw json.RawMessage) (string, bool) {
	if isNull(raw) {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	for _, k := range []string{"text", "content"} {
		if json.Unmarshal(obj[k], &s) == nil {
			return s, true
		}
	}
	return "", false
}

// readSafety maps the engine's safety object. Absent or null is level none
// (an engine that judged nothing); anything present but unreadable is
// elevated with the local resources, so a defect never shows less.
func readSafety(raw json.RawMessage, fill func(safety.Level) []safety.Resource, defect func(string)) safety.Assessment {
	a := safety.Assessment{Level: safety.LevelNone, Resources: []safety.Resource{}, Source: safety.SourceEngine}
	if isNull(raw) {
		return a
	}
	unreadable := func() safety.Assessment {
		defect(DefectSafetyUnreadable)
		return safety.Assessment{Level: safety.LevelElevated, DisplayRequired: true,
			Resources: fill(safety.LevelElevated), Source: safety.SourceEngine}
	}
	var s struct {
		Level           json.RawMessage `json:"level"`
		DisplayRequired json.RawMessage `json:"display_required"`
		Resources       json.RawMessage `json:"resources"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return unreadable()
	}
	var level string
	if json.Unmarshal(s.Level, &level) != nil || strings.TrimSpace(level) == "" {
		return unreadable()
	}
	a.Level = engineLevel(level)
	if !isNull(s.DisplayRequired) && json.Unmarshal(s.DisplayRequired, &a.DisplayRequired) != nil {
		defect(DefectDisplayUnreadable)
		a.DisplayRequired = true
	}
	res, lost := readResources(s.Resources, defect)
	a.Resources = res
	switch {
	case lost:
		// Something the engine meant to show is gone: show at least
		// elevated, with the local resources after whatever was read.
		a.Level = safety.MaxLevel(a.Level, safety.LevelElevated)
		a.DisplayRequired = true
		a.Resources = append(a.Resources, fill(a.Level)...)
	case a.DisplayRequired && len(a.Resources) == 0:
		// A required card is never empty (BRIEF §5.4).
		defect(DefectResourcesFilled)
		a.Resources = fill(safety.MaxLevel(a.Level, safety.LevelElevated))
	}
	return a
}

// engineLevel maps a level name; an unknown one from a newer engine is not
// a reason to show less, so it is the highest we know.
func engineLevel(s string) safety.Level {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none":
		return safety.LevelNone
	case "elevated":
		return safety.LevelElevated
	}
	return safety.LevelCrisis
}

// readResources decodes each resource on its own; a malformed one keeps
// whatever fields can be read (rendering raw beats skipping, safety-anchors
// §5 rule 1). lost reports a resource, or the whole list, with nothing
// readable.
func readResources(raw json.RawMessage, defect func(string)) (res []safety.Resource, lost bool) {
	res = []safety.Resource{}
	if isNull(raw) {
		return res, false
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		defect(DefectResourceUnreadable)
		return res, true
	}
	for _, it := range items {
		var r safety.Resource
		if json.Unmarshal(it, &r) == nil && (r.ID != "" || r.Name != "" || len(r.Actions) > 0) {
			if r.Actions == nil {
				r.Actions = []safety.Action{}
			}
			res = append(res, r)
			continue
		}
		if r, ok := salvageResource(it); ok {
			defect(DefectResourceSalvaged)
			res = append(res, r)
			continue
		}
		defect(DefectResourceUnreadable)
		lost = true
	}
	return res, lost
}

// salvageResource reads the string fields and the readable actions of a
// malformed resource; a bare string is taken as its name.
func salvageResource(raw json.RawMessage) (safety.Resource, bool) {
	r := safety.Resource{Actions: []safety.Action{}}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		r.Name = strings.TrimSpace(name)
		return r, r.Name != ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return r, false
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(obj[k], &s)
		return s
	}
	r.ID, r.Name, r.Description = str("id"), str("name"), str("description")
	r.Country, r.Hours, r.SourceURL, r.VerifiedAt = str("country"), str("hours"), str("source_url"), str("verified_at")
	var acts []json.RawMessage
	_ = json.Unmarshal(obj["actions"], &acts)
	for _, ar := range acts {
		var a map[string]json.RawMessage
		if json.Unmarshal(ar, &a) != nil {
			continue
		}
		var act safety.Action
		_ = json.Unmarshal(a["type"], &act.Type)
		_ = json.Unmarshal(a["value"], &act.Value)
		_ = json.Unmarshal(a["label"], &act.Label)
		_ = json.Unmarshal(a["spoken"], &act.Spoken)
		if act.Value != "" {
			r.Actions = append(r.Actions, act)
		}
	}
	return r, r.ID != "" || r.Name != "" || len(r.Actions) > 0
}

// readActions decodes each proposed action on its own and drops the ones
// that cannot be read. An action without expires_at expires 24 h from now
// (Partner API: actions expire after 24 hours).
func readActions(raw json.RawMessage, now time.Time, defect func(string)) []ProposedAction {
	out := []ProposedAction{}
	if isNull(raw) {
		return out
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		defect(DefectActionsUnreadable)
		return out
	}
	for _, it := range items {
		a, err := readAction(it)
		if err != nil {
			defect(DefectActionDropped)
			continue
		}
		if a.ExpiresAt.IsZero() {
			a.ExpiresAt = now.Add(24 * time.Hour)
		}
		out = append(out, a)
	}
	return out
}

// readAction needs a non-blank string id and type and a readable expiry;
// a title or summary that is not a string is left out.
func readAction(raw json.RawMessage) (ProposedAction, error) {
	var w struct {
		ID        json.RawMessage `json:"id"`
		Type      json.RawMessage `json:"type"`
		Title     json.RawMessage `json:"title"`
		Summary   json.RawMessage `json:"summary"`
		Input     json.RawMessage `json:"input"`
		ExpiresAt json.RawMessage `json:"expires_at"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return ProposedAction{}, err
	}
	var a ProposedAction
	if json.Unmarshal(w.ID, &a.ID) != nil || strings.TrimSpace(a.ID) == "" {
		return ProposedAction{}, errors.New("id: want a non-blank string")
	}
	if json.Unmarshal(w.Type, &a.Type) != nil || strings.TrimSpace(a.Type) == "" {
		return ProposedAction{}, errors.New("type: want a non-blank string")
	}
	_ = json.Unmarshal(w.Title, &a.Title)
	_ = json.Unmarshal(w.Summary, &a.Summary)
	if !isNull(w.Input) {
		a.Input = append(json.RawMessage(nil), bytes.TrimSpace(w.Input)...)
	}
	t, err := parseEngineTime(w.ExpiresAt)
	if err != nil {
		return ProposedAction{}, fmt.Errorf("expires_at: %w", err)
	}
	a.ExpiresAt = t
	return a, nil
}

// Unix seconds outside (0, maxUnixSeconds) are not times an engine means:
// a millisecond count lands far beyond it.
const maxUnixSeconds = 1e11 // year 5138

// parseEngineTime reads a time field of an engine reply: RFC 3339, or unix
// seconds as an integer, a float or a numeric string (the public API names
// no format; its webhook signatures use unix seconds). Absent, null or ""
// is the zero time. The result is in UTC.
func parseEngineTime(raw json.RawMessage) (time.Time, error) {
	if isNull(raw) {
		return time.Time{}, nil
	}
	var num json.Number
	var s string
	switch {
	case json.Unmarshal(raw, &s) == nil:
		s = strings.TrimSpace(s)
		if s == "" {
			return time.Time{}, nil
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC(), nil
		}
		num = json.Number(s)
	case json.Unmarshal(raw, &num) == nil:
	default:
		return time.Time{}, errors.New("want RFC 3339 or unix seconds")
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f >= maxUnixSeconds {
		return time.Time{}, fmt.Errorf("%q is neither RFC 3339 nor unix seconds", string(num))
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), nil
}
