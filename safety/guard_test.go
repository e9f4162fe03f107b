package safety

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// Whatever merge produced merged — nothing, a downgrade, a reordering —
// Guard's result ranks at least both inputs, requires display when either
// does, keeps merged's resources first in order and holds every input
// resource.
func TestGuardProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		eng, loc, merged := randAssessment(r), randAssessment(r), randAssessment(r)
		if i%3 == 0 {
			merged = Assessment{} // a merge that returns nothing
		}
		got := Guard(eng, loc, merged)
		if got.Level < eng.Level || got.Level < loc.Level || got.Level < merged.Level || !got.Level.Valid() {
			t.Fatalf("#%d: level %v from engine %v local %v merged %v", i, got.Level, eng.Level, loc.Level, merged.Level)
		}
		if (eng.DisplayRequired || loc.DisplayRequired || merged.DisplayRequired) && !got.DisplayRequired {
			t.Fatalf("#%d: display turned off", i)
		}
		if len(got.Resources) < len(merged.Resources) || !reflect.DeepEqual(got.Resources[:len(merged.Resources)], merged.Resources) && len(merged.Resources) > 0 {
			t.Fatalf("#%d: merged's resources are not first: %+v", i, got.Resources)
		}
		for _, in := range [][]Resource{eng.Resources, loc.Resources} {
			for _, res := range in {
				if !hasResource(got.Resources, res) {
					t.Fatalf("#%d: %+v dropped", i, res)
				}
			}
		}
		if got.Source == "" {
			t.Fatalf("#%d: no source", i)
		}
	}
}

// Merge's result needs nothing from the floor but the resources Merge
// leaves out as duplicates of what is on the card.
func TestGuardOnMerge(t *testing.T) {
	us988 := res("us-988-lifeline", call("988"))
	eng988 := res("engine-988", call("9-8-8"))
	eng := Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{eng988}}
	loc := Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{us988}}
	m := Merge(eng, loc)
	if got := ids(m.Resources); !reflect.DeepEqual(got, []string{"engine-988"}) {
		t.Fatalf("merge %v", got)
	}
	g := Guard(eng, loc, m)
	if got := ids(g.Resources); !reflect.DeepEqual(got, []string{"engine-988", "us-988-lifeline"}) {
		t.Fatalf("guard %v", got)
	}
	if g.Level != LevelCrisis || !g.DisplayRequired || g.Source != m.Source {
		t.Fatalf("guard %+v", g)
	}
}

func TestNeedsCard(t *testing.T) {
	a := res("a", call("1"))
	b := res("b", call("2"))
	crisisA := Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{a}}
	elevA := Assessment{Level: LevelElevated, DisplayRequired: true, Resources: []Resource{a}}
	tests := []struct {
		name   string
		merged Assessment
		shown  *Assessment
		want   bool
	}{
		{"nothing to display", Assessment{Level: LevelCrisis, Resources: []Resource{a}}, nil, false},
		{"first card", crisisA, nil, true},
		{"same card again", crisisA, &crisisA, false},
		{"a higher level", crisisA, &elevA, true},
		{"a lower level, same resources", elevA, &crisisA, false},
		{"a new resource", Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{a, b}}, &crisisA, true},
	}
	for _, tt := range tests {
		if got := NeedsCard(tt.merged, tt.shown); got != tt.want {
			t.Errorf("%s: NeedsCard = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestShownLevel(t *testing.T) {
	for l, want := range map[Level]Level{LevelNone: LevelNone, LevelElevated: LevelElevated, LevelCrisis: LevelCrisis, Level(7): LevelCrisis, Level(-1): LevelCrisis} {
		if got := ShownLevel(l); got != want {
			t.Errorf("ShownLevel(%d) = %v, want %v", int(l), got, want)
		}
	}
	if g := Guard(Assessment{Level: Level(9)}, Assessment{}, Assessment{}); g.Level != LevelCrisis {
		t.Errorf("Guard kept level %d", int(g.Level))
	}
}
