package safety

// fallbackEmergency is used only if the embedded catalog cannot be parsed,
// which the package tests rule out; it keeps the "never an empty card"
// promise even then.
var fallbackEmergency = Resource{
	ID:          "local-emergency-number",
	Name:        "Emergency services",
	Description: "If you are in immediate danger, call your local emergency number.",
	Actions:     []Action{},
}

// Assess is the local path in one call: DetectTurn on the turn, then, for
// elevated or crisis, the resources for the region p selects from c (nil c
// means DefaultCatalog). DisplayRequired is true for elevated and crisis.
// On a crisis card emergency services come first (safety-anchors §5 rule 3:
// "In immediate danger?" above the crisis line); on an elevated card they
// come last. Source is SourceLocal. The router's offline companion and the
// gateway's local path use it; merge it with the engine's via Merge.
func (d *Detector) Assess(history []string, text string, c *Catalog, p RegionPrefs) Assessment {
	r := d.DetectTurn(history, text)
	a := Assessment{Level: r.Level, Resources: []Resource{}, Source: SourceLocal}
	if r.Level < LevelElevated {
		return a
	}
	a.DisplayRequired = true
	a.Resources = ResourcesFor(r.Level, c, p)
	return a
}

// ResourcesFor returns the card for a level and region: Select's resources,
// with emergency services moved to the front for crisis. Never empty.
func ResourcesFor(level Level, c *Catalog, p RegionPrefs) []Resource {
	if c == nil {
		var err error
		if c, err = DefaultCatalog(); err != nil {
			return []Resource{fallbackEmergency.clone()}
		}
	}
	_, rs := c.Select(p)
	if level != LevelCrisis {
		return rs
	}
	out := make([]Resource, 0, len(rs))
	for _, r := range rs {
		if c.IsEmergency(r.ID) {
			out = append(out, r)
		}
	}
	for _, r := range rs {
		if !c.IsEmergency(r.ID) {
			out = append(out, r)
		}
	}
	return out
}
