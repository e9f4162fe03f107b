package glasses

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
)

// Kind is what a card is for; it drives priority and allowed behaviour.
type Kind string

const (
	KindSafety  Kind = "safety"  // help resources; pre-empts everything, sticky
	KindCaption Kind = "caption" // live reply text; coalesced
	KindAction  Kind = "action"  // approve/decline prompt
	KindInfo    Kind = "info"    // anything else
)

// Priority orders cards; lower is more urgent. Safety is always
// PrioritySafety whatever the card says.
type Priority int

const (
	PrioritySafety  Priority = 0
	PriorityAction  Priority = 1
	PriorityInfo    Priority = 2
	PriorityCaption Priority = 3
)

// Role is the part an action plays in a prompt.
type Role string

const (
	RoleCommit  Role = "commit"  // the action that does something ("Send")
	RoleDecline Role = "decline" // the non-committing choice ("Don't send")
	RoleLink    Role = "link"    // a deep link (call/text a resource)
)

// Action is a choice on a card. Voice lists phrases accepted by voice,
// which is always accepted alongside buttons.
type Action struct {
	ID    string   `json:"id"`
	Label string   `json:"label"`
	Role  Role     `json:"role"`
	Voice []string `json:"voice,omitempty"`
}

// Card is the device-agnostic content the gateway shows.
type Card struct {
	ID        string            `json:"id,omitempty"`
	Rev       int               `json:"rev,omitempty"`
	Kind      Kind              `json:"kind"`
	Title     string            `json:"title"`
	Body      string            `json:"body,omitempty"`
	Resources []safety.Resource `json:"resources,omitempty"`
	Actions   []Action          `json:"actions,omitempty"`
	Priority  Priority          `json:"priority,omitempty"`
}

// Rank is the effective priority: safety is always PrioritySafety and no
// other card may claim it.
func (c Card) Rank() Priority {
	if c.Kind == KindSafety {
		return PrioritySafety
	}
	return max(c.Priority, PriorityAction)
}

// maxActionLabel is the longest prompt label in runes (research §5.2).
const maxActionLabel = 16

// Validate checks the card's shape; errors wrap ErrInvalidCard.
func (c Card) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("glasses: card %q: %s: %w", c.ID, fmt.Sprintf(format, args...), ErrInvalidCard)
	}
	if NormalizeSpace(c.Title) == "" {
		return bad("title: must not be empty")
	}
	switch c.Kind {
	case KindSafety:
		if len(c.Resources) == 0 {
			return bad("resources: a safety card is never empty")
		}
		for i, r := range c.Resources {
			if NormalizeSpace(r.Name) == "" {
				return bad("resources[%d].name: must not be empty", i)
			}
			for j, a := range r.Actions {
				if NormalizeSpace(a.Value) == "" {
					return bad("resources[%d].actions[%d].value: must not be empty", i, j)
				}
			}
		}
	case KindAction:
		if len(c.Actions) != 2 {
			return bad("actions: a prompt has exactly 2 actions, got %d", len(c.Actions))
		}
		roles := map[Role]bool{}
		for i, a := range c.Actions {
			if a.ID == "" || NormalizeSpace(a.Label) == "" {
				return bad("actions[%d]: id and label are required", i)
			}
			if n := utf8.RuneCountInString(a.Label); n > maxActionLabel {
				return bad("actions[%d].label: %d runes, max %d", i, n, maxActionLabel)
			}
			roles[a.Role] = true
		}
		if !roles[RoleCommit] || !roles[RoleDecline] {
			return bad("actions: need one %q and one %q action", RoleCommit, RoleDecline)
		}
	case KindCaption, KindInfo:
		if NormalizeSpace(c.Body) == "" {
			return bad("body: must not be empty")
		}
	default:
		return bad("kind: %q is not safety, caption, action or info", c.Kind)
	}
	return nil
}

// NewSafetyCard builds the safety card for an assessment's resources, in the
// order given. An empty resource list is an error: a safety card is never
// empty (the safety package falls back to directory + local emergency).
func NewSafetyCard(id string, a safety.Assessment) (Card, error) {
	c := Card{ID: id, Kind: KindSafety, Title: SafetyTitle, Resources: a.Resources, Priority: PrioritySafety}
	if err := c.Validate(); err != nil {
		return Card{}, err
	}
	return c, nil
}

// SafetyTitle is the title of every safety card.
const SafetyTitle = "Help is here"

// The controls of the session's approve/decline prompts (PromptPages),
// on the last page of every prompt.
const (
	ControlApprove = "approve"
	ControlDecline = "decline"
)

// PromptTitle is the title of a prompt whose action has none, and the
// short title a prompt falls back to when its own does not fit.
const PromptTitle = "Go ahead?"

// NewPrompt builds an approve/decline card: verb labels, commit first,
// decline second; focus starts on decline.
func NewPrompt(id, title, body string, commit, decline Action) (Card, error) {
	commit.Role, decline.Role = RoleCommit, RoleDecline
	c := Card{ID: id, Kind: KindAction, Title: title, Body: body, Actions: []Action{commit, decline}, Priority: PriorityAction}
	if err := c.Validate(); err != nil {
		return Card{}, err
	}
	return c, nil
}

// ActionText is the line a resource action shows: the label when it already
// contains the value ("Text HOME to 741741"; for web addresses the value
// without scheme), otherwise the label or a verb and the value
// ("Call 988", "Chat: 988lifeline.org/chat"). The value is never omitted.
func ActionText(a safety.Action) string {
	v := NormalizeSpace(a.Value)
	if l := NormalizeSpace(a.Label); l != "" {
		if strings.Contains(l, v) || (a.Type == safety.ActionURL || a.Type == safety.ActionChat) && strings.Contains(l, bareURL(v)) {
			return l
		}
		return l + ": " + v
	}
	switch a.Type {
	case safety.ActionCall:
		return "Call " + v
	case safety.ActionText:
		return "Text " + v
	case safety.ActionChat:
		return "Chat: " + v
	default:
		return v
	}
}

// bareURL drops the scheme, "www." and a trailing slash, so a label
// "Chat at 988lifeline.org" counts as showing "https://988lifeline.org".
func bareURL(u string) string {
	for _, p := range []string{"https://", "http://"} {
		u = strings.TrimPrefix(u, p)
	}
	u = strings.TrimPrefix(u, "www.")
	if b := strings.TrimSuffix(u, "/"); b != "" {
		return b
	}
	return u
}

// Style is how a line is drawn.
type Style string

const (
	StyleTitle   Style = "title"
	StyleBody    Style = "body"
	StyleHeading Style = "heading" // resource name
	StyleEmph    Style = "emph"    // a call/text line: large and bold
	StyleMeta    Style = "meta"    // n/N, spoken-phrase hints
)

// Block is one paragraph of a card's source text. Section groups blocks
// that belong together (one safety resource); a safety section starts a
// new page.
type Block struct {
	Text    string `json:"text"`
	Style   Style  `json:"style"`
	Section int    `json:"section"`
}

// Blocks returns the card's body as blocks, in reading order, for a surface.
// Their texts joined with spaces are the card's source text (SourceText).
func (c Card) Blocks(s devices.Surface) []Block {
	var out []Block
	add := func(text string, st Style, sec int) {
		if t := NormalizeSpace(text); t != "" {
			out = append(out, Block{Text: t, Style: st, Section: sec})
		}
	}
	for _, p := range paragraphs(c.Body) {
		add(p, StyleBody, 0)
	}
	if c.Kind == KindSafety {
		// On small surfaces (G1, Mentra: 4 body lines) a resource spans
		// pages, so its numbers come straight after its name and the first
		// page of each resource is the actionable one.
		actionsFirst := s.TextBudget.LinesPerPage < 6
		for i, r := range c.Resources {
			add(r.Name, StyleHeading, i)
			if !actionsFirst {
				add(r.Description, StyleBody, i)
				add(r.Hours, StyleBody, i)
			}
			for _, a := range r.Actions {
				st := StyleBody
				if a.Type == safety.ActionCall || a.Type == safety.ActionText {
					st = StyleEmph
				}
				add(ActionText(a), st, i)
			}
			if actionsFirst {
				add(r.Description, StyleBody, i)
				add(r.Hours, StyleBody, i)
			}
		}
	}
	if c.Kind == KindAction && !s.Buttons {
		// No buttons on this surface: the card tells the person what to say.
		add(fmt.Sprintf("Say %q or %q.", voicePhrase(c.Actions[0]), voicePhrase(c.Actions[1])), StyleMeta, 0)
	}
	return out
}

// SourceText is the normalised text a layout of c on s must reproduce.
func (c Card) SourceText(s devices.Surface) string {
	bs := c.Blocks(s)
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.Text
	}
	return NormalizeSpace(strings.Join(parts, " "))
}

func voicePhrase(a Action) string {
	if len(a.Voice) > 0 {
		return a.Voice[0]
	}
	return strings.ToLower(a.Label)
}

// paragraphs splits text at blank lines.
func paragraphs(s string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		if NormalizeSpace(line) == "" {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, " "))
				cur = nil
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}
