package glasses

import (
	"errors"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
)

func TestPrecomputeCatalog(t *testing.T) {
	rs := append(threeResources(), resLifeline)
	pc, err := PrecomputeCatalog(devices.Builtins(), rs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range devices.Builtins() {
		if _, ok := p.Display(); !ok {
			continue
		}
		for _, r := range rs {
			l, ok := pc.Resource(p.ID, r.ID)
			if !ok || len(l.Pages) == 0 || l.Card.Resources[0].ID != r.ID {
				t.Fatalf("%s/%s missing", p.ID, r.ID)
			}
		}
		all, ok := pc.All(p.ID)
		if !ok || len(all.Card.Resources) != len(rs) {
			t.Fatalf("%s: catalog card missing", p.ID)
		}
	}
	if v := pc.VoiceOnly(); len(v) != 1 || v[0] != devices.VoiceOnly {
		t.Fatalf("voice-only = %v", v)
	}
}

func TestPrecomputeCatalogFailsLoudly(t *testing.T) {
	bad := res988
	bad.ID = "bad-emoji"
	bad.Name = "Helpline 💚"
	_, err := PrecomputeCatalog(devices.Builtins(), []safety.Resource{res988, bad})
	if !errors.Is(err, ErrGlyph) || !strings.Contains(err.Error(), "bad-emoji") {
		t.Fatalf("err = %v, want glyph error naming the resource", err)
	}
	long := res988
	long.ID = "bad-number"
	long.Actions = []safety.Action{{Type: safety.ActionCall, Value: strings.Repeat("5", 45)}}
	_, err = PrecomputeCatalog(devices.Builtins(), []safety.Resource{long})
	if !errors.Is(err, ErrUnbreakable) || !strings.Contains(err.Error(), "bad-number") {
		t.Fatalf("err = %v, want unbreakable error naming the resource", err)
	}
	if _, err := PrecomputeCatalog(devices.Builtins(), nil); err == nil {
		t.Fatal("empty catalog accepted")
	}
}

// The embedded safety catalog must lay out on every built-in profile: the
// gateway refuses to start otherwise.
func TestPrecomputeDefaultCatalog(t *testing.T) {
	cat, err := safety.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rs := cat.All()
	if len(rs) == 0 {
		t.Fatal("empty default catalog")
	}
	pc, err := PrecomputeCatalog(devices.Builtins(), rs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range devices.Builtins() {
		all, ok := pc.All(p.ID)
		if _, visual := p.Display(); !visual {
			continue
		}
		if !ok {
			t.Fatalf("%s: no catalog card", p.ID)
		}
		checkLayout(t, all, all.Card, nil)
	}
}
