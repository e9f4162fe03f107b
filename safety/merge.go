package safety

import "strings"

// Merge combines the engine's assessment with the local detector's. The
// policy (BRIEF §5.1 and §5.4):
//
//   - Resources: the engine's, exactly as sent and in its order (even
//     malformed ones: rendering raw beats skipping), then local additions.
//     A local resource is left out only when it duplicates something already
//     on the card: the same non-empty id, or every one of its actions
//     (type and value, compared by digits for call/text and without scheme,
//     "www." and case for chat/url) already offered by an earlier resource.
//     Nothing the engine sent is ever dropped, reordered or rewritten.
//   - Level: the higher of the two; the local detector can only raise it.
//   - DisplayRequired: true if either side requires it, and also whenever the
//     merged level is elevated or crisis and there is at least one resource
//     to show (recall first: a local crisis verdict while the engine is up
//     still shows help, safety-anchors §6).
//   - Source: SourceEngine when the local side changed nothing, SourceLocal
//     when the engine contributed nothing (level none, no resources, no
//     display), SourceMerged otherwise.
//
// The result's Resources is never nil, so it encodes as [] rather than null.
func Merge(engine, local Assessment) Assessment {
	out := Assessment{
		Level:     MaxLevel(engine.Level, local.Level),
		Resources: make([]Resource, 0, len(engine.Resources)+len(local.Resources)),
	}
	ids := map[string]bool{}
	acts := map[string]bool{}
	note := func(r Resource) {
		if r.ID != "" {
			ids[r.ID] = true
		}
		for _, a := range r.Actions {
			acts[actionKey(a)] = true
		}
	}
	for _, r := range engine.Resources {
		out.Resources = append(out.Resources, r.clone())
		note(r)
	}
	added := 0
	for _, r := range local.Resources {
		if duplicate(r, ids, acts) {
			continue
		}
		out.Resources = append(out.Resources, r.clone())
		note(r)
		added++
	}
	out.DisplayRequired = engine.DisplayRequired || local.DisplayRequired ||
		(out.Level >= LevelElevated && len(out.Resources) > 0)

	engineEmpty := engine.Level == LevelNone && len(engine.Resources) == 0 && !engine.DisplayRequired
	localChanged := out.Level != engine.Level || added > 0 || out.DisplayRequired != engine.DisplayRequired
	switch {
	case !localChanged:
		out.Source = SourceEngine
	case engineEmpty:
		out.Source = SourceLocal
	default:
		out.Source = SourceMerged
	}
	return out
}

func duplicate(r Resource, ids, acts map[string]bool) bool {
	if r.ID != "" && ids[r.ID] {
		return true
	}
	if len(r.Actions) == 0 {
		return false
	}
	for _, a := range r.Actions {
		if !acts[actionKey(a)] {
			return false
		}
	}
	return true
}

// actionKey is the comparable identity of an action: "911" and "9-1-1" are
// the same call, "https://www.Example.org/" and "example.org" the same page.
func actionKey(a Action) string {
	v := strings.TrimSpace(a.Value)
	switch a.Type {
	case ActionCall, ActionText:
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if v[i] >= '0' && v[i] <= '9' || v[i] == '+' {
				b.WriteByte(v[i])
			}
		}
		if b.Len() > 0 {
			v = b.String()
		}
	case ActionChat, ActionURL:
		v = strings.ToLower(v)
		v = strings.TrimPrefix(v, "https://")
		v = strings.TrimPrefix(v, "http://")
		v = strings.TrimPrefix(v, "www.")
		v = strings.TrimRight(v, "/")
	}
	return string(a.Type) + "\x00" + v
}

// Guard is Merge's floor re-imposed on merged, an assessment some other
// merge made of engine and local (a SafetyLayer's own Merge), so that no
// merge can downgrade a card: the level is at least both inputs'
// (ShownLevel: never out of range), display is required if either input
// requires it, and every resource of both inputs is present — merged's
// first, in its order, then the engine's and the local ones it lacks,
// "present" meaning the same id and name. Source is SourceMerged when
// merged names none. Guard never removes anything from merged.
//
// Note the floor's identity is stricter than Merge's duplicate rule: a
// local resource Merge leaves out because its actions are already on the
// card (another id, the same numbers) is added back here.
func Guard(engine, local, merged Assessment) Assessment {
	out := merged
	out.Level = ShownLevel(MaxLevel(out.Level, MaxLevel(engine.Level, local.Level)))
	out.DisplayRequired = out.DisplayRequired || engine.DisplayRequired || local.DisplayRequired
	out.Resources = append([]Resource(nil), merged.Resources...)
	for _, src := range [][]Resource{engine.Resources, local.Resources} {
		for _, r := range src {
			if !hasResource(out.Resources, r) {
				out.Resources = append(out.Resources, r)
			}
		}
	}
	if out.Source == "" {
		out.Source = SourceMerged
	}
	return out
}

// NeedsCard reports whether merged must be shown in a turn that already
// showed shown (nil: no card yet): display is required and nothing shown
// so far carries its level and every one of its resources.
func NeedsCard(merged Assessment, shown *Assessment) bool {
	if !merged.DisplayRequired {
		return false
	}
	if shown == nil || merged.Level > shown.Level {
		return true
	}
	for _, r := range merged.Resources {
		if !hasResource(shown.Resources, r) {
			return true
		}
	}
	return false
}

// ShownLevel is the level a card or reply shows: l itself, or LevelCrisis
// for a level out of range (a bug upstream) — a corrupt level must never
// look safe, nor fail to encode and lose its card.
func ShownLevel(l Level) Level {
	if !l.Valid() {
		return LevelCrisis
	}
	return l
}

func hasResource(list []Resource, r Resource) bool {
	for _, x := range list {
		if x.ID == r.ID && x.Name == r.Name {
			return true
		}
	}
	return false
}
