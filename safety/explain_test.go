package safety

import (
	"strings"
	"testing"
)

// TestExplain: the explanation names the repaired tokens, their concepts,
// the frame that fired and the verdict the detector gives.
func TestExplain(t *testing.T) {
	d := NewDetector()
	text := "there is a gunman in the building"
	got := d.Explain(text)
	r := d.Detect(text)
	for _, want := range []string{"gunman", "[shooting", "herenear", "shooting_near", "verdict: " + r.Level.String() + " " + r.Reason} {
		if !strings.Contains(got, want) {
			t.Errorf("Explain(%q) lacks %q:\n%s", text, want, got)
		}
	}
	if got := d.Explain("iwanttodie"); !strings.Contains(got, "want") || !strings.Contains(got, "die") {
		t.Errorf("Explain shows no repaired split:\n%s", got)
	}
}
