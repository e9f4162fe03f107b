package safety

import (
	"strings"
	"testing"
)

// TestConceptTable: entries are normalised when the table is built (so
// "too many" matches what "too many" becomes); none may lose its meaning to
// that (an entry that normalises to nothing or to a bare function word
// would match everywhere), and the frames compile.
func TestConceptTable(t *testing.T) {
	if framesErr != nil {
		t.Fatal(framesErr)
	}
	for _, c := range conceptTable {
		for _, e := range strings.Split(c.entries, ",") {
			e = strings.TrimSpace(e)
			plain := strings.Trim(e, "*")
			if plain == "" {
				t.Errorf("concept %s: empty entry", c.name)
				continue
			}
			if plain == "0" || strings.Contains(e, "*") {
				continue
			}
			got := normalize(plain, nil)
			if len(got) == 0 || len(got) == 1 && functionWordSet[got[0]] && !functionWordSet[plain] {
				t.Errorf("concept %s: entry %q normalises to %q", c.name, e, got)
			}
		}
	}
}

func TestFramesMatch(t *testing.T) {
	for _, tc := range []struct {
		text, frame string
		want        Level
	}{
		{"i took all my pills", "frame.took_meds", LevelCrisis},
		{"me tomé toda la caja de pastillas", "frame.took_meds", LevelCrisis},
		{"j'ai avalé toute la boîte de cachets", "frame.took_meds", LevelCrisis},
		{"ich habe die ganze packung tabletten genommen", "frame.took_meds", LevelCrisis},
		{"i took all my pills two years ago", "frame.took_meds/past", LevelElevated},
		{"someone is following me", "frame.followed", LevelCrisis},
		{"my dog follows me everywhere", "", LevelNone},
		{"the car is running in the closed garage", "frame.fumes_closed", LevelCrisis},
		{"i'm not going to take all my pills", "frame.took_meds/negated", LevelElevated},
		{"my phone is about to die", "", LevelNone},
	} {
		var x extractor
		x.run(tc.text, nil, 2, 5, func([]byte) {})
		if x.frame.level != tc.want || tc.frame != "" && x.frame.reason != tc.frame {
			t.Errorf("%q: frame %v %q, want %v %q", tc.text, x.frame.level, x.frame.reason, tc.want, tc.frame)
		}
	}
}

func TestRepair(t *testing.T) {
	for in, want := range map[string]string{
		"iwanttodie":              "i want to die",
		"im on the brige":         "i am on the bridge",
		"thinking about sui cide": "thinking about suicide",
		"i want to endit all":     "i want to end it all",
		"wannadie":                "want to die",
		"the therapist said hi":   "the therapist said hi",
		"my skills are fine":      "my skills are fine",
		"a spot whereno one goes": "a spot where nobody goes",
		"i dont seea future":      "i do not see a future",
		"i see the sea":           "i see the sea",
	} {
		got := strings.Join(repairTokens(normalize(in, nil), nil, nil), " ")
		if got != want {
			t.Errorf("repair(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLaughTail(t *testing.T) {
	for in, want := range map[string]struct {
		core  string
		laugh bool
	}{
		"i want to die lol":        {"i want to die", true},
		"i want to die lmaooo 😂":   {"i want to die", true},
		"i want to die jajajaja!!": {"i want to die", true},
		"lol i want to die":        {"lol i want to die", false},
		"i want to die":            {"i want to die", false},
		"haha":                     {"", true},
		"hahaha i'm fine":          {"hahaha i'm fine", false},
	} {
		core, laugh := laughTail(in)
		if core != want.core || laugh != want.laugh {
			t.Errorf("laughTail(%q) = %q, %v; want %q, %v", in, core, laugh, want.core, want.laugh)
		}
	}
}

func TestModelCanonInvariant(t *testing.T) {
	base := string(modelCanon("i want to kill myself", nil))
	for _, v := range []string{"I WANT TO KILL MYSELF!!!", "i want to kill my self", "iwanttokillmyself", "i wannnt to kiiiill myself...", "i want to, kill myself"} {
		if got := string(modelCanon(v, nil)); got != base {
			t.Errorf("modelCanon(%q) = %q, want %q", v, got, base)
		}
	}
}
