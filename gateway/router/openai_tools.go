package router

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"
)

// maxToolCalls bounds the tool calls one reply accumulates; the gateway
// shows at most three proposals per reply anyway, so the rest are dropped
// here rather than buffered.
const maxToolCalls = 8

// maxActionTitle bounds a proposal title taken from a tool description, in
// runes; it is cut at a word boundary.
const maxActionTitle = 60

// actionTTL is how long a proposed action may be approved (the Partner
// API's 24 h).
const actionTTL = 24 * time.Hour

// toolCall is one tool call being assembled from stream pieces.
type toolCall struct {
	id, name string
	args     strings.Builder
}

// toolCalls assembles the tool calls of one reply, in the order the model
// made them, and maps them to proposed actions.
type toolCalls struct {
	offered map[string]Tool
	calls   []*toolCall
	byIndex map[int]*toolCall
	dropped int
}

func newToolCalls(offered []Tool) *toolCalls {
	tc := &toolCalls{offered: make(map[string]Tool, len(offered)), byIndex: map[int]*toolCall{}}
	for _, t := range offered {
		tc.offered[t.Name] = t
	}
	return tc
}

// add folds one piece (or a whole call) in. A piece names its call by
// index; servers that send no index continue the last call unless the
// piece carries a new id.
func (tc *toolCalls) add(d chatToolCall) {
	var cur *toolCall
	switch {
	case d.Index != nil:
		cur = tc.byIndex[*d.Index]
	case len(tc.calls) > 0 && (d.ID == "" || d.ID == tc.calls[len(tc.calls)-1].id):
		cur = tc.calls[len(tc.calls)-1]
	}
	if cur == nil {
		if len(tc.calls) >= maxToolCalls {
			tc.dropped++
			return
		}
		cur = &toolCall{}
		tc.calls = append(tc.calls, cur)
		if d.Index != nil {
			tc.byIndex[*d.Index] = cur
		}
	}
	if d.ID != "" {
		cur.id = d.ID
	}
	if d.Function.Name != "" {
		cur.name = d.Function.Name
	}
	cur.args.WriteString(d.Function.Arguments)
}

// actions maps the assembled calls to proposals. A call naming a tool that
// was not offered, or whose arguments are not one JSON object, is dropped
// and logged (by tool name only, never the arguments): the person is never
// asked to approve something malformed. Every proposal gets a fresh action
// id (servers' call ids are not unique across conversations) and expires
// after 24 h.
func (tc *toolCalls) actions(now time.Time, log *slog.Logger) []ProposedAction {
	if tc.dropped > 0 && log != nil {
		log.Warn("router: tool calls over the per-reply bound dropped", "dropped", tc.dropped)
	}
	var out []ProposedAction
	for _, c := range tc.calls {
		t, ok := tc.offered[c.name]
		if !ok {
			if log != nil {
				log.Warn("router: tool call to a tool that was not offered dropped", "tool", c.name)
			}
			continue
		}
		input := bytes.TrimSpace([]byte(c.args.String()))
		if len(input) == 0 {
			input = []byte("{}")
		}
		if !isJSONObject(input) {
			if log != nil {
				log.Warn("router: tool call with arguments that are not a JSON object dropped", "tool", c.name)
			}
			continue
		}
		out = append(out, ProposedAction{
			ID: "act_" + newKey(), Type: t.Name, Title: actionTitle(t), Summary: strings.TrimSpace(t.Description),
			Input: json.RawMessage(input), ExpiresAt: now.Add(actionTTL),
		})
	}
	return out
}

func isJSONObject(b []byte) bool {
	if !json.Valid(b) {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil
}

// actionTitle is the first sentence of the tool's description, at most
// maxActionTitle runes cut at a word boundary; the tool's name with spaces
// for underscores when it has no description.
func actionTitle(t Tool) string {
	d := strings.Join(strings.Fields(t.Description), " ")
	if d == "" {
		n := strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(t.Name)
		n = strings.Join(strings.Fields(n), " ")
		if n == "" {
			return t.Name
		}
		r, size := utf8.DecodeRuneInString(n)
		return strings.ToUpper(string(r)) + n[size:]
	}
	if i := strings.IndexAny(d, ".!?"); i > 0 {
		d = d[:i]
	}
	if utf8.RuneCountInString(d) <= maxActionTitle {
		return d
	}
	var b strings.Builder
	for _, w := range strings.Fields(d) {
		if utf8.RuneCountInString(b.String())+1+utf8.RuneCountInString(w) > maxActionTitle {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	if b.Len() == 0 {
		return string([]rune(d)[:maxActionTitle])
	}
	return b.String()
}

// toolTokens estimates what offered tools add to a request (names,
// descriptions and schemas travel in it), with estimateTokens' rate.
func toolTokens(ts []Tool) int {
	n := 0
	for _, t := range ts {
		n += tokensPerMessage + (len(t.Name)+len(t.Description)+len(t.Parameters)+bytesPerToken-1)/bytesPerToken
	}
	return n
}
