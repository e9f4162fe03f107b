package safety

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the pre-stored spoken forms in catalog.json")

// TestCatalogSpokenForms keeps every pre-stored spoken form equal to what
// Spoken generates; -update rewrites catalog.json from the generator.
func TestCatalogSpokenForms(t *testing.T) {
	var f catalogFile
	dec := json.NewDecoder(bytes.NewReader(catalogJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	changed := false
	for i := range f.Resources {
		for j := range f.Resources[i].Actions {
			a := &f.Resources[i].Actions[j]
			want := Spoken(Action{Type: a.Type, Value: a.Value, Label: a.Label})
			if a.Spoken != want {
				if !*update {
					t.Errorf("%s actions[%d].spoken = %q, want %q (run go test -run TestCatalogSpokenForms -update)", f.Resources[i].ID, j, a.Spoken, want)
				}
				a.Spoken, changed = want, true
			}
		}
	}
	if *update && changed {
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("catalog.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDefaultCatalogRequiredEntries(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id      string
		country string
		actions []Action // type+value that must be present
	}{
		{"us-988-lifeline", "US", []Action{{Type: ActionCall, Value: "988"}, {Type: ActionText, Value: "988"}, {Type: ActionChat, Value: "https://988lifeline.org"}}},
		{"us-crisis-text-line", "US", []Action{{Type: ActionText, Value: "741741"}}},
		{"ca-988-suicide-crisis-helpline", "CA", []Action{{Type: ActionCall, Value: "988"}, {Type: ActionText, Value: "988"}}},
		{"gb-samaritans", "GB", []Action{{Type: ActionCall, Value: "116 123"}}},
		{"ie-samaritans", "IE", []Action{{Type: ActionCall, Value: "116 123"}}},
		{"au-lifeline", "AU", []Action{{Type: ActionCall, Value: "13 11 14"}}},
		{"intl-find-a-helpline", "", []Action{{Type: ActionURL, Value: "https://findahelpline.com"}}},
		{"local-emergency-number", "", nil},
	}
	for _, w := range want {
		r, ok := c.Lookup(w.id)
		if !ok {
			t.Errorf("%s missing from the default catalog", w.id)
			continue
		}
		if r.Country != w.country {
			t.Errorf("%s country = %q, want %q", w.id, r.Country, w.country)
		}
		if r.SourceURL == "" || r.VerifiedAt == "" {
			t.Errorf("%s lacks source_url or verified_at", w.id)
		}
		for _, wa := range w.actions {
			found := false
			for _, a := range r.Actions {
				if a.Type == wa.Type && a.Value == wa.Value {
					found = true
					if a.Spoken == "" || a.Label == "" {
						t.Errorf("%s %s %s: missing label or spoken", w.id, a.Type, a.Value)
					}
				}
			}
			if !found {
				t.Errorf("%s lacks %s %s", w.id, wa.Type, wa.Value)
			}
		}
	}
	if r, _ := c.Lookup("local-emergency-number"); !strings.Contains(r.Description, "local emergency number") {
		t.Errorf("generic emergency entry description = %q", r.Description)
	}
}

func TestCatalogExcludesUnverified(t *testing.T) {
	def, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	all, err := EmbeddedCatalog(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Excluded()) == 0 {
		t.Fatal("expected the embedded catalog to carry some unverified entries")
	}
	for _, id := range def.Excluded() {
		if _, ok := def.Lookup(id); ok {
			t.Errorf("unverified %s served by default", id)
		}
		if _, ok := all.Lookup(id); !ok {
			t.Errorf("unverified %s missing with includeUnverified", id)
		}
	}
	for _, r := range def.All() {
		if r.VerifiedAt == "" || r.SourceURL == "" {
			t.Errorf("%s served without verified_at/source_url", r.ID)
		}
	}
	if len(all.All()) != len(def.All())+len(def.Excluded()) {
		t.Errorf("all=%d, default=%d + excluded=%d", len(all.All()), len(def.All()), len(def.Excluded()))
	}
}

func TestCatalogAllStableAndCopied(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.All(), c.All()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("All() not stable")
	}
	a[0].Actions[0].Value = "000000"
	a[0].Name = "changed"
	if reflect.DeepEqual(a, c.All()) {
		t.Fatal("mutating All()'s result changed the catalog")
	}
}

func ids(rs []Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func TestSelect(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	intl := []string{"intl-find-a-helpline", "local-emergency-number"}
	us := []string{"us-988-lifeline", "us-crisis-text-line", "intl-find-a-helpline", "us-emergency-911"}
	gb := []string{"gb-samaritans", "gb-shout-85258", "intl-find-a-helpline", "local-emergency-number"}
	tests := []struct {
		name   string
		p      RegionPrefs
		region string
		ids    []string
	}{
		{"engine wins", RegionPrefs{Engine: "US", User: "GB", Device: "AU", Locale: "en-CA", Default: "IE"}, "US", us},
		{"user next", RegionPrefs{User: "gb", Device: "AU", Locale: "en-CA", Default: "US"}, "GB", gb},
		{"device next", RegionPrefs{Device: "AU", Locale: "en-CA", Default: "US"}, "AU", []string{"au-lifeline", "intl-find-a-helpline", "au-emergency-000"}},
		{"locale en-GB", RegionPrefs{Locale: "en-GB", Default: "US"}, "GB", gb},
		{"posix locale", RegionPrefs{Locale: "fr_CA.UTF-8"}, "CA", []string{"ca-988-suicide-crisis-helpline", "intl-find-a-helpline", "local-emergency-number"}},
		{"script subtag", RegionPrefs{Locale: "en-Latn-IE"}, "IE", []string{"ie-samaritans", "intl-find-a-helpline", "local-emergency-number"}},
		{"UK alias", RegionPrefs{User: "UK"}, "GB", gb},
		{"numeric locale region skipped", RegionPrefs{Locale: "es-419", Default: "US"}, "US", us},
		{"bare language skipped", RegionPrefs{Locale: "en", Default: "AU"}, "AU", []string{"au-lifeline", "intl-find-a-helpline", "au-emergency-000"}},
		{"malformed engine skipped", RegionPrefs{Engine: "United States", User: "US"}, "US", us},
		{"unknown region", RegionPrefs{Engine: "JP"}, "JP", intl},
		{"unverified region excluded", RegionPrefs{User: "FR"}, "FR", intl},
		{"nothing known", RegionPrefs{}, "", intl},
		{"default only", RegionPrefs{Default: "us"}, "US", us},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			region, rs := c.Select(tt.p)
			if region != tt.region {
				t.Errorf("region = %q, want %q", region, tt.region)
			}
			if got := ids(rs); !reflect.DeepEqual(got, tt.ids) {
				t.Errorf("ids = %v, want %v", got, tt.ids)
			}
		})
	}
}

func TestSelectNeverEmpty(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "x", "ZZ", "us", "GB", "de", "1", "en-", "--", "ÜÜ", "en-GB-oxendict", "\x00\x01"} {
		for _, p := range []RegionPrefs{{Engine: s}, {User: s}, {Device: s}, {Locale: s}, {Default: s}} {
			_, rs := c.Select(p)
			if len(rs) < 2 {
				t.Fatalf("Select(%+v) = %v: want at least a directory and emergency services", p, ids(rs))
			}
			hasDir := false
			for _, r := range rs {
				if r.ID == "intl-find-a-helpline" {
					hasDir = true
				}
			}
			if !hasDir {
				t.Errorf("Select(%+v) lacks the international directory", p)
			}
		}
	}
}

func TestParseCatalogErrors(t *testing.T) {
	good := func() map[string]any {
		var m map[string]any
		if err := json.Unmarshal(catalogJSON, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	res := func(m map[string]any, i int) map[string]any {
		return m["resources"].([]any)[i].(map[string]any)
	}
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"verified without source", func(m map[string]any) { res(m, 0)["source_url"] = "" }, "source_url"},
		{"verified bad date", func(m map[string]any) { res(m, 0)["verified_at"] = "30/11/2026" }, "verified_at"},
		{"duplicate id", func(m map[string]any) { res(m, 1)["id"] = res(m, 0)["id"] }, "duplicate id"},
		{"bad action type", func(m map[string]any) {
			res(m, 0)["actions"].([]any)[0].(map[string]any)["type"] = "fax"
		}, "type"},
		{"missing spoken", func(m map[string]any) {
			res(m, 0)["actions"].([]any)[0].(map[string]any)["spoken"] = ""
		}, "spoken"},
		{"no actions on a line", func(m map[string]any) { res(m, 0)["actions"] = []any{} }, "actions"},
		{"bad region", func(m map[string]any) { res(m, 0)["regions"] = []any{"usa"} }, "regions"},
		{"bad kind", func(m map[string]any) { res(m, 0)["kind"] = "hotline" }, "kind"},
		{"unknown field", func(m map[string]any) { res(m, 0)["phone"] = "988" }, "unknown field"},
		{"no directory", func(m map[string]any) {
			rs := m["resources"].([]any)
			var keep []any
			for _, r := range rs {
				if r.(map[string]any)["kind"] != KindDirectory {
					keep = append(keep, r)
				}
			}
			m["resources"] = keep
		}, "directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good()
			tt.edit(m)
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseCatalog(b, false)
			if !errors.Is(err, ErrCatalog) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrCatalog mentioning %q", err, tt.want)
			}
		})
	}
	if _, err := ParseCatalog([]byte("{"), false); !errors.Is(err, ErrCatalog) {
		t.Fatalf("truncated JSON: err = %v", err)
	}
}

func FuzzParseCatalog(f *testing.F) {
	f.Add(catalogJSON)
	f.Add([]byte(`{"resources":[]}`))
	f.Add([]byte(`{"resources":[{"id":"a","name":"A","actions":[],"regions":["*"],"kind":"emergency","status":"verified"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCatalog(b, true)
		if err != nil {
			if !errors.Is(err, ErrCatalog) {
				t.Fatalf("error not ErrCatalog: %v", err)
			}
			return
		}
		if _, rs := c.Select(RegionPrefs{}); len(rs) == 0 {
			t.Fatal("parsed catalog selects an empty card")
		}
	})
}
