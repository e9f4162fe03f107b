package safety

// Level is how serious the safety concern of a turn is. The zero value is
// LevelNone. Levels are ordered: a higher level never yields to a lower one
// when assessments merge.
type Level int

const (
	LevelNone Level = iota
	LevelElevated
	LevelCrisis
)

// String returns the wire name of the level: "none", "elevated" or "crisis".
func (l Level) String() string {
	switch l {
	case LevelElevated:
		return "elevated"
	case LevelCrisis:
		return "crisis"
	default:
		return "none"
	}
}

// Source says where an assessment came from.
type Source string

const (
	SourceEngine Source = "engine"
	SourceLocal  Source = "local"
	SourceMerged Source = "merged"
)

// Assessment is the safety verdict for one turn: its level, whether the
// resources must be shown, and the resources in the order they must appear.
type Assessment struct {
	Level           Level      `json:"level"`
	DisplayRequired bool       `json:"display_required"`
	Resources       []Resource `json:"resources"`
	Source          Source     `json:"source,omitempty"`
}

// Resource is the canonical shape of a help resource, used everywhere: the
// engine mapping, the embedded catalog, cards and vera-card input.
type Resource struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Country     string   `json:"country,omitempty"`
	Languages   []string `json:"languages,omitempty"`
	Hours       string   `json:"hours,omitempty"`
	Actions     []Action `json:"actions"`
	SourceURL   string   `json:"source_url,omitempty"`
	VerifiedAt  string   `json:"verified_at,omitempty"`
}

// ActionType is how a person reaches a resource.
type ActionType string

const (
	ActionCall ActionType = "call"
	ActionText ActionType = "text"
	ActionChat ActionType = "chat"
	ActionURL  ActionType = "url"
)

// Action is one way to reach a resource: a number to call or text, a chat or
// a web address. Spoken is the pre-stored spoken form used on the offline path.
type Action struct {
	Type   ActionType `json:"type"`
	Value  string     `json:"value"`
	Label  string     `json:"label,omitempty"`
	Spoken string     `json:"spoken,omitempty"`
}
