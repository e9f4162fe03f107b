package sphinx

import (
	"errors"
	"strings"
	"testing"
)

func TestParseKeyphrases(t *testing.T) {
	ks, err := ParseKeyphrases("# comment\n\nKill  Myself -2100\nsuicide 0\nwant to die -700 0.35\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 3 || ks[0] != (Keyphrase{Phrase: "kill myself", MinScore: -2100}) || ks[1] != (Keyphrase{Phrase: "suicide"}) ||
		ks[2] != (Keyphrase{Phrase: "want to die", MinScore: -700, MaxDistance: 0.35}) {
		t.Fatalf("got %+v", ks)
	}
	for _, bad := range []string{"", "# only\n", "kill myself\n", "kill myself 12\n", "kill myself -x\n", "kill my$elf -1\n", "a -1\na -2\n", "-5\n",
		"kill myself -1 3\n", "kill myself -1 -0.1\n", "kill myself -1 nan\n", "kill myself -1 x\n", "-1 0.2\n"} {
		if _, err := ParseKeyphrases(bad); !errors.Is(err, ErrKeyphrase) {
			t.Errorf("%q: got %v, want ErrKeyphrase", bad, err)
		}
	}
	if got := formatKeyphrases(ks); got != "kill myself /"+searchFloor+"/\nsuicide /"+searchFloor+"/\nwant to die /"+searchFloor+"/\n" {
		t.Fatalf("format %q", got)
	}
}

// The built-in list parses, and every phrase is searched with the floor.
func TestCrisisKeyphrases(t *testing.T) {
	ks, err := ParseKeyphrases(crisisList)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) < 10 || len(CrisisKeyphrases()) != len(ks) {
		t.Fatalf("%d phrases", len(ks))
	}
	for _, k := range ks {
		if k.MinScore >= 0 || k.MinScore < -10000 {
			t.Errorf("%q: min score %d outside the tuned range", k.Phrase, k.MinScore)
		}
	}
}

func FuzzParseKeyphrases(f *testing.F) {
	f.Add(crisisList)
	f.Add("kill myself -1\n")
	f.Add("a b c -0\n#x\n")
	f.Fuzz(func(t *testing.T, s string) {
		ks, err := ParseKeyphrases(s)
		if err != nil {
			return
		}
		for _, k := range ks {
			if k.Phrase == "" || k.MinScore > 0 || strings.ContainsAny(k.Phrase, "/\n\t") {
				t.Fatalf("accepted %+v", k)
			}
		}
		// What was accepted parses back to the same phrases.
		again, err := ParseKeyphrases(strings.ReplaceAll(formatKeyphrases(ks), "/"+searchFloor+"/", "-1"))
		if err != nil || len(again) != len(ks) {
			t.Fatalf("round trip: %v %d/%d", err, len(again), len(ks))
		}
	})
}

func TestSpotConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mut  func(*SpotConfig)
		want string
	}{
		{func(c *SpotConfig) { c.PhoneLoop = 0 }, "sphinx.spot.phone_loop"},
		{func(c *SpotConfig) { c.PhoneLoop = 2 }, "sphinx.spot.phone_loop"},
		{func(c *SpotConfig) { c.TargetDBFS = 0 }, "sphinx.spot.target_dbfs"},
		{func(c *SpotConfig) { c.TargetDBFS = -60 }, "sphinx.spot.target_dbfs"},
		{func(c *SpotConfig) { c.Keyphrases = []Keyphrase{{Phrase: "", MinScore: -1}} }, "sphinx.spot.keyphrases[0]"},
		{func(c *SpotConfig) { c.Keyphrases = []Keyphrase{{Phrase: "a", MinScore: -1, MaxDistance: 3}} }, "sphinx.spot.keyphrases[0]"},
	} {
		cfg := DefaultConfig()
		tc.mut(&cfg.Spot)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
	// A disabled spotter's keys are not checked.
	cfg := DefaultConfig()
	cfg.Spot.Enabled, cfg.Spot.PhoneLoop = false, 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}
