package voice

import (
	"log/slog"
	"slices"
	"testing"
)

// The voice session hands the session only the spotted phrases the
// transcript agrees with; without a gate, none.
func TestAgreeingSpots(t *testing.T) {
	g, err := defaultSpotGate()
	if err != nil {
		t.Skipf("pocketsphinx dictionary not installed (%v)", err)
	}
	vs := &voiceSession{deps: Deps{SpotGate: g}, log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		text          string
		spotted, want []string
	}{
		// The recogniser split the phrase: it sounds the same.
		{"i think i might kill my self tonight", []string{"kill myself", "suicide"}, []string{"kill myself"}},
		// A garble within phone classes ("sales" for "self").
		{"honestly i might kill my sales", []string{"kill myself"}, []string{"kill myself"}},
		// The transcript says something else: the spot is dropped.
		{"we should move the launch to march", []string{"end it all", "better off dead"}, nil},
		{"", []string{"kill myself"}, nil},
		{"anything", nil, nil},
	} {
		if got := vs.agreeingSpots(tc.text, tc.spotted); !slices.Equal(got, tc.want) {
			t.Errorf("agreeingSpots(%q, %q) = %q, want %q", tc.text, tc.spotted, got, tc.want)
		}
	}
	vs.deps.SpotGate = nil
	if got := vs.agreeingSpots("kill myself", []string{"kill myself"}); got != nil {
		t.Errorf("no gate kept %q", got)
	}
	if got := (dropSpots{}).Filter("kill myself", []string{"kill myself"}); got != nil {
		t.Errorf("dropSpots kept %q", got)
	}
}
