package safety

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    Level
		wantErr bool
	}{
		{"none", LevelNone, false}, {"elevated", LevelElevated, false}, {"crisis", LevelCrisis, false},
		{" CRISIS ", LevelCrisis, false}, {"Elevated", LevelElevated, false},
		{"", 0, true}, {"high", 0, true}, {"2", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseLevel(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseLevel(%q) = %v, %v", tt.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrUnknownLevel) {
			t.Errorf("ParseLevel(%q) err %v is not ErrUnknownLevel", tt.in, err)
		}
	}
}

func TestLevelJSON(t *testing.T) {
	a := Assessment{Level: LevelCrisis, DisplayRequired: true, Resources: []Resource{}, Source: SourceLocal}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"level":"crisis","display_required":true,"resources":[],"source":"local"}`; string(b) != want {
		t.Fatalf("marshal = %s, want %s", b, want)
	}
	for in, want := range map[string]Level{`"none"`: LevelNone, `"elevated"`: LevelElevated, `"crisis"`: LevelCrisis, `0`: LevelNone, `1`: LevelElevated, `2`: LevelCrisis} {
		var l Level
		if err := json.Unmarshal([]byte(in), &l); err != nil || l != want {
			t.Errorf("unmarshal %s = %v, %v", in, l, err)
		}
	}
	l := LevelCrisis
	if err := json.Unmarshal([]byte(`null`), &l); err != nil || l != LevelCrisis {
		t.Errorf("null changed the level: %v %v", l, err)
	}
	for _, in := range []string{`"severe"`, `3`, `-1`, `1.5`, `true`, `{}`} {
		var l Level
		if err := json.Unmarshal([]byte(in), &l); err == nil {
			t.Errorf("unmarshal %s: no error", in)
		}
	}
	if _, err := json.Marshal(Level(7)); err == nil {
		t.Error("marshal of an out-of-range level must fail, never look like none")
	}
}

func TestMaxLevel(t *testing.T) {
	for a := LevelNone; a <= LevelCrisis; a++ {
		for b := LevelNone; b <= LevelCrisis; b++ {
			m := MaxLevel(a, b)
			if m < a || m < b || (m != a && m != b) {
				t.Errorf("MaxLevel(%v,%v) = %v", a, b, m)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	tests := []struct {
		name string
		edit func(*Config)
		key  string
	}{
		{"region", func(c *Config) { c.DefaultRegion = "USA" }, "safety.default_region"},
		{"turns", func(c *Config) { c.ContextTurns = -1 }, "safety.context_turns"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.edit(&c)
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%s: err = %v, want ErrConfig naming %s", tt.name, err, tt.key)
		}
	}
}
