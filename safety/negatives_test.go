package safety

import "testing"

func TestNegativesCompile(t *testing.T) {
	if negErr != nil {
		t.Fatal(negErr)
	}
	if len(negTable.defs) != len(negDefs) {
		t.Fatalf("%d explanations compiled, want %d", len(negTable.defs), len(negDefs))
	}
}

// TestNegativesLower: ordinary speech whose danger word an explanation
// covers, with nothing else of danger in it, shows no card; for most of
// these lines it is the explanation that lowers them (held is set) — other
// tiers already see the rest as ordinary.
func TestNegativesLower(t *testing.T) {
	d := NewDetector()
	for _, text := range []string{
		"we ran suicides at basketball practice until i nearly threw up",
		"me quiero morir de vergüenza, se me olvidó su nombre",
		"me mato a trabajar y nadie lo valora",
		"hier soir je suis morte de honte devant tout le monde",
		"ich hab mich über den witz totgelacht",
		"the cooking class was fun but i cut my thumb chopping onions",
		"my dog chewed a bottle of ibuprofen, should i call someone",
		"my phone died halfway through the call",
		"who dies at the end of the last season",
		"dead inside lol, fourth zoom meeting today",
		"the coach absolutely killed us at practice today",
		"my boss is going to kill me when he sees the report is late",
	} {
		a := d.analyze(text)
		if a.level != LevelNone {
			t.Errorf("%q: level %v (%s), want none", text, a.level, a.reason)
		}
	}
	// Lines the tiers raise and only an explanation lowers.
	for _, text := range []string{
		"me quiero morir de vergüenza, se me olvidó su nombre",
		"je suis morte de honte, j'ai appelé mon chef papa",
		"coach says suicide sprints tomorrow morning",
		"my cat got into a bottle of ibuprofen, is that dangerous",
		"ich kann nicht mehr laufen nach dem beintag",
		"la peluquera me cortó demasiado",
	} {
		if a := d.analyze(text); a.level != LevelNone || a.held.level == LevelNone {
			t.Errorf("%q: level %v (%s), held %v; want none lowered by an explanation", text, a.level, a.reason, a.held.level)
		}
	}
}

// TestNegativesKeep: the same surface words with a real cue beside them, or
// a domain word that does not reach the cue, keep their level (BRIEF §5:
// an explanation lowers only when it covers the very cue and nothing else
// reads as danger).
func TestNegativesKeep(t *testing.T) {
	d := NewDetector()
	for _, tt := range []struct {
		text string
		want Level
	}{
		{"coach made us run suicides and honestly i want to kill myself", LevelCrisis},
		{"after practice i'm going to kill myself", LevelCrisis},
		{"me muero de vergüenza y tengo las pastillas preparadas", LevelCrisis},
		{"who dies at the end, i want to die too", LevelCrisis},
		{"my phone is dead and i'm on the bridge", LevelCrisis},
		{"i overdosed on coffee and then took all my sleeping pills", LevelCrisis},
		{"dead inside lol, third meeting today, i want to die", LevelCrisis},
		{"my cat got into my pills and i took the rest of the bottle", LevelCrisis},
		{"i'm giving away my books because i won't need them anymore", LevelCrisis},
		{"i've said goodbye to everyone who matters. you're the last one", LevelCrisis},
		{"ich verschenke meine sachen, die gitarre, die bücher, ich brauche sie nicht mehr", LevelCrisis},
		{"last day at work, said goodbye to everyone, you won't see me again", LevelCrisis},
		{"je me suis fait tuer par le jungler et je veux me tuer pour de vrai", LevelCrisis},
		{"i cut my bangs and then i cut myself again", LevelElevated},
		{"me corté el pelo y luego me corté los brazos", LevelElevated},
		{"i rage quit the game and now i'm thinking about killing myself", LevelElevated},
		{"i want to die", LevelCrisis},
		{"me quiero morir", LevelCrisis},
	} {
		if got := d.Detect(tt.text); got.Level < tt.want {
			t.Errorf("Detect(%q) = %v (%s), want at least %v", tt.text, got.Level, got.Reason, tt.want)
		}
	}
}

// TestNegativesTurnRestores: with a risk cue in the recent turns, an
// explanation no longer lowers (context never lowers a level).
func TestNegativesTurnRestores(t *testing.T) {
	d := NewDetector()
	const text = "me quiero morir de vergüenza"
	if got := d.DetectTurn([]string{"what's for dinner tonight"}, text); got.Level != LevelNone {
		t.Fatalf("calm history: %v (%s), want none", got.Level, got.Reason)
	}
	hist := []string{"i have been saving my pills for weeks", "nobody would notice if i was gone"}
	if got := d.DetectTurn(hist, text); got.Level < LevelElevated {
		t.Errorf("risky history: %v (%s), want the held level back", got.Level, got.Reason)
	}
}

// TestHeldoutOFloors: heldout-o (round 4b: three batches of hard negatives
// beside crisis lines with the same surface words; first blind scores in
// BENCHMARKS.md) guards the explanations against regressions both ways.
// Floors sit under the measured figures (crisis shown 0.923, crisis 0.853,
// elevated shown 0.877, false alarms 0.029).
func TestHeldoutOFloors(t *testing.T) {
	rep := Evaluate(NewDetector(), loadSamples(t, "heldout-o.jsonl"))
	if rep.N < 600 {
		t.Fatalf("%d samples, want ≥ 600", rep.N)
	}
	if rep.FalseAlarmRate > 0.04 {
		t.Errorf("false alarms %.3f > 0.04", rep.FalseAlarmRate)
	}
	if rep.CrisisAlertRecall < 0.91 {
		t.Errorf("crisis shown %.3f < 0.91", rep.CrisisAlertRecall)
	}
	if cr := rep.Levels["crisis"].Recall; cr < 0.84 {
		t.Errorf("crisis labelled crisis %.3f < 0.84", cr)
	}
	if t.Failed() {
		for _, m := range rep.Misses {
			t.Logf("miss gold=%v got=%v reason=%s", m.Gold, m.Got, m.Reason)
		}
	}
}
