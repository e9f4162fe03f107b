package safety

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

func res(id string, acts ...Action) Resource {
	return Resource{ID: id, Name: "name " + id, Actions: acts}
}

func call(v string) Action { return Action{Type: ActionCall, Value: v} }

func TestMerge(t *testing.T) {
	us988 := res("us-988-lifeline", call("988"), Action{Type: ActionText, Value: "988"})
	ctl := res("us-crisis-text-line", Action{Type: ActionText, Value: "741741"})
	eng988 := res("engine-988", call("9-8-8"), Action{Type: ActionText, Value: "988"})
	dir := res("intl-find-a-helpline", Action{Type: ActionURL, Value: "https://findahelpline.com"})
	engDir := res("", Action{Type: ActionURL, Value: "https://www.FindAHelpline.com/"})
	generic := res("local-emergency-number")

	tests := []struct {
		name          string
		engine, local Assessment
		wantIDs       []string
		wantLevel     Level
		wantDisplay   bool
		wantSource    Source
	}{
		{"engine only", Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{us988}}, Assessment{},
			[]string{"us-988-lifeline"}, LevelCrisis, true, SourceEngine},
		{"local only (engine down)", Assessment{}, Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{us988, dir}},
			[]string{"us-988-lifeline", "intl-find-a-helpline"}, LevelCrisis, true, SourceLocal},
		{"local raises level", Assessment{Level: LevelNone}, Assessment{Level: LevelElevated, DisplayRequired: true, Resources: []Resource{us988}},
			[]string{"us-988-lifeline"}, LevelElevated, true, SourceLocal},
		{"local never lowers", Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{ctl}}, Assessment{Level: LevelNone},
			[]string{"us-crisis-text-line"}, LevelCrisis, true, SourceEngine},
		{"dedupe by id", Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{ctl, us988}},
			Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{us988, ctl, dir}},
			[]string{"us-crisis-text-line", "us-988-lifeline", "intl-find-a-helpline"}, LevelCrisis, true, SourceMerged},
		{"dedupe by action values", Assessment{Level: LevelElevated, DisplayRequired: true, Resources: []Resource{eng988, engDir}},
			Assessment{Level: LevelElevated, DisplayRequired: true, Resources: []Resource{us988, dir, generic}},
			[]string{"engine-988", "", "local-emergency-number"}, LevelElevated, true, SourceMerged},
		{"engine none with resources but no display, local crisis", Assessment{Level: LevelNone, Resources: []Resource{ctl}},
			Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{us988}},
			[]string{"us-crisis-text-line", "us-988-lifeline"}, LevelCrisis, true, SourceMerged},
		{"elevated with resources forces display", Assessment{Level: LevelElevated, Resources: []Resource{us988}}, Assessment{},
			[]string{"us-988-lifeline"}, LevelElevated, true, SourceMerged},
		{"both none", Assessment{}, Assessment{}, []string{}, LevelNone, false, SourceEngine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.engine, tt.local)
			if g := ids(got.Resources); !reflect.DeepEqual(g, tt.wantIDs) {
				t.Errorf("ids = %v, want %v", g, tt.wantIDs)
			}
			if got.Level != tt.wantLevel || got.DisplayRequired != tt.wantDisplay || got.Source != tt.wantSource {
				t.Errorf("got level=%v display=%v source=%v, want %v %v %v", got.Level, got.DisplayRequired, got.Source, tt.wantLevel, tt.wantDisplay, tt.wantSource)
			}
			if got.Resources == nil {
				t.Error("Resources is nil; want [] on the wire")
			}
		})
	}
}

func TestMergeDoesNotAliasInputs(t *testing.T) {
	eng := Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{res("a", call("1"))}}
	got := Merge(eng, Assessment{})
	got.Resources[0].Actions[0].Value = "2"
	if eng.Resources[0].Actions[0].Value != "1" {
		t.Fatal("Merge result shares memory with the engine's assessment")
	}
}

func randResource(r *rand.Rand) Resource {
	pool := []string{"a", "b", "c", "d", "", "us-988-lifeline"}
	vals := []string{"988", "9-8-8", "741741", "116 123", "", "x"}
	types := []ActionType{ActionCall, ActionText, ActionChat, ActionURL, "weird"}
	res := Resource{ID: pool[r.IntN(len(pool))], Name: fmt.Sprintf("n%d", r.IntN(100))}
	for range r.IntN(4) {
		res.Actions = append(res.Actions, Action{Type: types[r.IntN(len(types))], Value: vals[r.IntN(len(vals))], Label: fmt.Sprint(r.IntN(9))})
	}
	if r.IntN(5) == 0 {
		res.Languages = []string{"en"}
	}
	return res
}

func randAssessment(r *rand.Rand) Assessment {
	a := Assessment{Level: Level(r.IntN(3)), DisplayRequired: r.IntN(2) == 0}
	for range r.IntN(5) {
		a.Resources = append(a.Resources, randResource(r))
	}
	return a
}

// TestMergeProperties checks the merge invariants on random assessments:
// the engine's resources are an exact prefix in order, nothing of the
// engine's is shortened, the level is the max and never lowered, display is
// never turned off, and local additions keep their relative order.
func TestMergeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		eng, loc := randAssessment(r), randAssessment(r)
		engCopy, _ := json.Marshal(eng)
		got := Merge(eng, loc)
		if len(got.Resources) < len(eng.Resources) {
			t.Fatalf("#%d: merged has %d resources, engine sent %d", i, len(got.Resources), len(eng.Resources))
		}
		for j, er := range eng.Resources {
			if !reflect.DeepEqual(got.Resources[j], er) {
				t.Fatalf("#%d: resource %d = %+v, engine sent %+v", i, j, got.Resources[j], er)
			}
		}
		if got.Level != MaxLevel(eng.Level, loc.Level) || got.Level < eng.Level {
			t.Fatalf("#%d: level %v from engine %v local %v", i, got.Level, eng.Level, loc.Level)
		}
		if eng.DisplayRequired && !got.DisplayRequired || loc.DisplayRequired && !got.DisplayRequired {
			t.Fatalf("#%d: display turned off", i)
		}
		if got.Level >= LevelElevated && len(got.Resources) > 0 && !got.DisplayRequired {
			t.Fatalf("#%d: elevated with resources but not displayed", i)
		}
		// Local additions are a subsequence of local's resources, in order.
		k := 0
		for _, added := range got.Resources[len(eng.Resources):] {
			for k < len(loc.Resources) && !reflect.DeepEqual(loc.Resources[k], added) {
				k++
			}
			if k == len(loc.Resources) {
				t.Fatalf("#%d: added resource %+v not from local in order", i, added)
			}
			k++
		}
		if after, _ := json.Marshal(eng); string(after) != string(engCopy) {
			t.Fatalf("#%d: Merge modified its input", i)
		}
		switch got.Source {
		case SourceEngine, SourceLocal, SourceMerged:
		default:
			t.Fatalf("#%d: source %q", i, got.Source)
		}
	}
}
