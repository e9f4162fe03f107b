package glasses

import (
	"fmt"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
)

// Precomputed holds safety cards laid out at start-up for every profile, so
// showing help costs no layout work and can never fail at the worst moment.
type Precomputed struct {
	// single[profile][resource id] is the one-resource card.
	single map[string]map[string]*Layout
	// all[profile] is one card with every catalog resource in order.
	all map[string]*Layout
	// voice lists profiles without a display: their safety is spoken.
	voice []string
}

// PrecomputeCatalog lays out, for every profile with a display, a safety
// card per resource and one card with all resources. Any failure (a glyph
// the font lacks, a number wider than a line) is returned naming profile and
// resource: the gateway refuses to start rather than show a broken card.
// Profiles without a display are recorded (VoiceOnly) and skipped.
func PrecomputeCatalog(profiles []devices.Profile, rs []safety.Resource) (*Precomputed, error) {
	return defaultEngine.PrecomputeCatalog(profiles, rs)
}

// PrecomputeCatalog is PrecomputeCatalog with this engine's configuration
// and logger.
func (e *Engine) PrecomputeCatalog(profiles []devices.Profile, rs []safety.Resource) (*Precomputed, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("glasses: precompute: empty catalog: %w", ErrInvalidCard)
	}
	if len(profiles) == 0 {
		return nil, fmt.Errorf("glasses: precompute: no profiles: %w", ErrInvalidCard)
	}
	pc := &Precomputed{single: map[string]map[string]*Layout{}, all: map[string]*Layout{}}
	for _, p := range profiles {
		if _, ok := p.Display(); !ok {
			pc.voice = append(pc.voice, p.ID)
			continue
		}
		pc.single[p.ID] = map[string]*Layout{}
		for _, r := range rs {
			c := Card{ID: "safety-" + r.ID, Kind: KindSafety, Title: SafetyTitle, Resources: []safety.Resource{r}}
			l, err := e.Layout(c, p)
			if err != nil {
				return nil, fmt.Errorf("glasses: precompute %s/%s: %w", p.ID, r.ID, err)
			}
			pc.single[p.ID][r.ID] = l
		}
		c := Card{ID: "safety-catalog", Kind: KindSafety, Title: SafetyTitle, Resources: rs}
		l, err := e.Layout(c, p)
		if err != nil {
			return nil, fmt.Errorf("glasses: precompute %s/catalog: %w", p.ID, err)
		}
		pc.all[p.ID] = l
	}
	return pc, nil
}

// Resource returns the precomputed one-resource card.
func (pc *Precomputed) Resource(profile, resourceID string) (*Layout, bool) {
	l, ok := pc.single[profile][resourceID]
	return l, ok
}

// All returns the precomputed card with every catalog resource.
func (pc *Precomputed) All(profile string) (*Layout, bool) {
	l, ok := pc.all[profile]
	return l, ok
}

// VoiceOnly lists the profiles that got no layout because they have no
// display; safety there is spoken.
func (pc *Precomputed) VoiceOnly() []string { return append([]string(nil), pc.voice...) }
