package devices

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ptr(v int) *int { return &v }

func TestBuiltinsValid(t *testing.T) {
	want := []string{MetaRayBanDisplay, EvenG2, EvenG1, Mentra, Phone, Browser, VoiceOnly}
	got := IDs()
	if len(got) != len(want) {
		t.Fatalf("IDs() = %v, want %d profiles", got, len(want))
	}
	for _, id := range want {
		p, err := Lookup(id)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", id, err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

func TestBuiltinFacts(t *testing.T) {
	m, _ := Lookup(MetaRayBanDisplay)
	d, ok := m.Display()
	if !ok || d.Width != 600 || d.Height != 600 || d.MarginPx != 24 || d.Fonts.BodyPx != 28 || d.Fonts.BodyLinePx != 36 {
		t.Errorf("meta display = %+v", d)
	}
	if d.BodyAreaPx() < 8*36 || d.BodyAreaPx() > 600-2*24-72 {
		t.Errorf("meta body area %d px", d.BodyAreaPx())
	}
	if d.TextBudget.LinesPerPage != 8 || d.TextBudget.CharsPerLine != 38 || !d.Buttons || !d.Colors.BlackIsTransparent {
		t.Errorf("meta budget = %+v", d.TextBudget)
	}
	if !d.HasInput(InputTap) || !d.HasInput(InputKeys) {
		t.Errorf("meta inputs = %v", d.Inputs)
	}
	g2, _ := Lookup(EvenG2)
	if s, _ := g2.Display(); s.Width != 576 || s.Height != 288 || s.Colors.Levels != 16 || s.Colors.Model != ColorGreen || !s.Fonts.FirmwareFont {
		t.Errorf("g2 = %+v", s)
	}
	g1, _ := Lookup(EvenG1)
	if s, _ := g1.Display(); s.TextBudget.LinesPerPage+s.TextBudget.TitleLines != 5 || g1.UpdateThrottleMS != 300 {
		t.Errorf("g1 = %+v throttle %d", s.TextBudget, g1.UpdateThrottleMS)
	}
	mt, _ := Lookup(Mentra)
	if mt.RenderConfirmation || !mt.MustSpeakSafety() || mt.UpdateThrottleMS != 300 {
		t.Errorf("mentra must not confirm renders and must speak safety: %+v", mt)
	}
	if m.MustSpeakSafety() {
		t.Error("meta confirms renders; safety need not be spoken")
	}
	v, _ := Lookup(VoiceOnly)
	if _, ok := v.Display(); ok || !v.MustSpeakSafety() {
		t.Error("voice-only must have no display and speak safety")
	}
}

func TestLookupUnknownListsKnown(t *testing.T) {
	_, err := Lookup("hololens")
	if !errors.Is(err, ErrUnknownDevice) {
		t.Fatalf("err = %v, want ErrUnknownDevice", err)
	}
	for _, id := range IDs() {
		if !strings.Contains(err.Error(), id) {
			t.Errorf("error %q does not list %q", err, id)
		}
	}
}

func TestLookupReturnsCopy(t *testing.T) {
	a, _ := Lookup(MetaRayBanDisplay)
	a.Surfaces[0].Inputs[0] = "mangled"
	a.Surfaces[0].Width = 1
	b, _ := Lookup(MetaRayBanDisplay)
	if b.Surfaces[0].Inputs[0] != InputTap || b.Surfaces[0].Width != 600 {
		t.Fatal("Lookup leaked a mutable built-in")
	}
}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name    string
		hello   Hello
		wantErr error
		field   string
		check   func(t *testing.T, p Profile)
	}{
		{name: "plain", hello: Hello{Profile: EvenG1}, check: func(t *testing.T, p Profile) {
			if p.ID != EvenG1 {
				t.Errorf("id = %s", p.ID)
			}
		}},
		{name: "unknown", hello: Hello{Profile: "nope"}, wantErr: ErrUnknownDevice, field: "meta-rayban-display"},
		{name: "smaller budget", hello: Hello{Profile: MetaRayBanDisplay, Overrides: Overrides{LinesPerPage: ptr(6), CharsPerLine: ptr(30)}},
			check: func(t *testing.T, p Profile) {
				s, _ := p.Display()
				if s.TextBudget.LinesPerPage != 6 || s.TextBudget.CharsPerLine != 30 {
					t.Errorf("budget = %+v", s.TextBudget)
				}
			}},
		{name: "more lines than hardware", hello: Hello{Profile: MetaRayBanDisplay, Overrides: Overrides{LinesPerPage: ptr(9)}}, wantErr: ErrOutOfBounds, field: "overrides.lines_per_page"},
		{name: "more chars than hardware", hello: Hello{Profile: EvenG1, Overrides: Overrides{CharsPerLine: ptr(41)}}, wantErr: ErrOutOfBounds, field: "overrides.chars_per_line"},
		{name: "zero lines", hello: Hello{Profile: EvenG1, Overrides: Overrides{LinesPerPage: ptr(0)}}, wantErr: ErrOutOfBounds, field: "overrides.lines_per_page"},
		{name: "faster than hardware", hello: Hello{Profile: Mentra, Overrides: Overrides{UpdateThrottleMS: ptr(100)}}, wantErr: ErrOutOfBounds, field: "overrides.update_throttle_ms"},
		{name: "slower ok", hello: Hello{Profile: Mentra, Overrides: Overrides{UpdateThrottleMS: ptr(600)}}, check: func(t *testing.T, p Profile) {
			if p.UpdateThrottleMS != 600 {
				t.Errorf("throttle = %d", p.UpdateThrottleMS)
			}
		}},
		{name: "longer ack", hello: Hello{Profile: Phone, Overrides: Overrides{AckTimeoutMS: ptr(5000)}}, wantErr: ErrOutOfBounds, field: "overrides.ack_timeout_ms"},
		{name: "bigger body font", hello: Hello{Profile: MetaRayBanDisplay, Overrides: Overrides{BodyPx: ptr(32)}}, check: func(t *testing.T, p Profile) {
			s, _ := p.Display()
			if s.Fonts.BodyPx != 32 || s.TextBudget.LinesPerPage >= 8 || s.BodyHeightPx() > 8*36 {
				t.Errorf("fonts = %+v budget = %+v", s.Fonts, s.TextBudget)
			}
		}},
		{name: "body font too big", hello: Hello{Profile: MetaRayBanDisplay, Overrides: Overrides{BodyPx: ptr(60)}}, wantErr: ErrOutOfBounds, field: "overrides.body_px"},
		{name: "firmware font fixed", hello: Hello{Profile: EvenG2, Overrides: Overrides{BodyPx: ptr(24)}}, wantErr: ErrOutOfBounds, field: "overrides.body_px"},
		{name: "input subset keeps voice", hello: Hello{Profile: MetaRayBanDisplay, Overrides: Overrides{Inputs: []Input{InputKeys}}}, check: func(t *testing.T, p Profile) {
			s, _ := p.Display()
			if len(s.Inputs) != 2 || !s.HasInput(InputKeys) || !s.HasInput(InputVoice) {
				t.Errorf("inputs = %v", s.Inputs)
			}
		}},
		{name: "input not on hardware", hello: Hello{Profile: EvenG1, Overrides: Overrides{Inputs: []Input{InputKeys}}}, wantErr: ErrOutOfBounds, field: "overrides.inputs"},
		{name: "unknown surface", hello: Hello{Profile: Phone, Overrides: Overrides{Surface: "watch"}}, wantErr: ErrOutOfBounds, field: "overrides.surface"},
		{name: "text on voice surface", hello: Hello{Profile: Phone, Overrides: Overrides{Surface: "speaker", LinesPerPage: ptr(3)}}, wantErr: ErrOutOfBounds, field: "overrides.surface"},
		{name: "voice-only text override", hello: Hello{Profile: VoiceOnly, Overrides: Overrides{LinesPerPage: ptr(3)}}, wantErr: ErrOutOfBounds, field: "overrides.lines_per_page"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Negotiate(tc.hello)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.field) {
					t.Errorf("err %q does not name %q", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("Negotiate: %v", err)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("negotiated profile invalid: %v", err)
			}
			tc.check(t, p)
		})
	}
	// Negotiation never mutates the built-ins.
	m, _ := Lookup(MetaRayBanDisplay)
	if s, _ := m.Display(); s.TextBudget.LinesPerPage != 8 || len(s.Inputs) != 3 {
		t.Fatalf("built-in changed: %+v", s)
	}
}

func TestHelloJSON(t *testing.T) {
	var h Hello
	if err := json.Unmarshal([]byte(`{"profile":"even-g1","overrides":{"lines_per_page":3,"update_throttle_ms":400}}`), &h); err != nil {
		t.Fatal(err)
	}
	p, err := Negotiate(h)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := p.Display(); s.TextBudget.LinesPerPage != 3 || p.UpdateThrottleMS != 400 {
		t.Fatalf("got %+v", p)
	}
	b, _ := json.Marshal(p)
	for _, key := range []string{`"ack_timeout_ms"`, `"update_throttle_ms"`, `"render_confirmation"`, `"text_budget"`, `"lines_per_page"`, `"chars_per_line"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("profile JSON lacks %s", key)
		}
	}
}

func TestConfig(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	ps, err := DefaultConfig().Profiles()
	if err != nil || len(ps) != len(IDs()) {
		t.Fatalf("profiles = %d, %v", len(ps), err)
	}
	bad := []struct {
		c   Config
		key string
	}{
		{Config{Default: "x"}, "devices.default"},
		{Config{Default: Phone, Enabled: []string{Phone, "x"}}, "devices.enabled[1]"},
		{Config{Default: Phone, Enabled: []string{Browser}}, "devices.default"},
	}
	for _, b := range bad {
		if err := b.c.Validate(); err == nil || !strings.Contains(err.Error(), b.key) {
			t.Errorf("Validate(%+v) = %v, want error naming %s", b.c, err, b.key)
		}
	}
	ps, err = Config{Default: Phone, Enabled: []string{Phone, EvenG1}}.Profiles()
	if err != nil || len(ps) != 2 || ps[1].ID != EvenG1 {
		t.Fatalf("profiles = %v, %v", ps, err)
	}
}

func FuzzNegotiate(f *testing.F) {
	f.Add(MetaRayBanDisplay, "", 8, 38, 28, 500, 2000)
	f.Add(EvenG1, "display", 0, 100, 10, -1, 0)
	f.Fuzz(func(t *testing.T, id, surface string, lines, chars, body, throttle, ack int) {
		h := Hello{Profile: id, Overrides: Overrides{Surface: surface, LinesPerPage: &lines, CharsPerLine: &chars, BodyPx: &body, UpdateThrottleMS: &throttle, AckTimeoutMS: &ack}}
		p, err := Negotiate(h)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("negotiated invalid profile: %v", err)
		}
		base, _ := Lookup(id)
		bs, _ := base.Display()
		ps, _ := p.Display()
		if ps.TextBudget.CharsPerLine > bs.TextBudget.CharsPerLine || ps.TextBudget.LinesPerPage > bs.TextBudget.LinesPerPage ||
			p.UpdateThrottleMS < base.UpdateThrottleMS || p.AckTimeoutMS > base.AckTimeoutMS {
			t.Fatalf("negotiation widened %s: %+v", id, p)
		}
	})
}

var update = flag.Bool("update", false, "rewrite testdata/devices golden files")

// TestGoldenProfiles pins the built-in profiles' wire form: a change to a
// device budget must be a reviewed diff in testdata/devices/profiles.json.
func TestGoldenProfiles(t *testing.T) {
	got, err := json.MarshalIndent(Builtins(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("..", "testdata", "devices", "profiles.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./devices -args -update)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("built-in profiles differ from %s; review and rerun with -update", path)
	}
}
