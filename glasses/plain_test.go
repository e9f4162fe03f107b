package glasses

import (
	"errors"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
)

// visualSurfaces calls f for every visual surface of every built-in profile.
func visualSurfaces(t *testing.T, f func(p devices.Profile, sf devices.Surface)) {
	t.Helper()
	for _, p := range devices.Builtins() {
		for _, sf := range p.Surfaces {
			if sf.Visual() {
				f(p, sf)
			}
		}
	}
}

// The plain layout on every profile: n/N and a title on every page, the
// surface's line budget, no ellipsis, numbers and addresses whole.
func TestPlainSafetyEveryProfile(t *testing.T) {
	intl := safety.Resource{ID: "intl", Name: "International directory of crisis lines",
		Description: "Find a helpline in your country. If you are in immediate danger, call your local emergency number.",
		Actions:     []safety.Action{{Type: safety.ActionURL, Value: "https://findahelpline.com"}}}
	res := []safety.Resource{res988, resCTL, intl}
	visualSurfaces(t, func(p devices.Profile, sf devices.Surface) {
		pages, err := plainSafety(res, sf)
		if err != nil {
			t.Fatalf("%s/%s: %v", p.ID, sf.ID, err)
		}
		var all []string
		for i, pg := range pages {
			if pg.N != i+1 || pg.Of != len(pages) || pg.Title == "" || len(pg.Lines) > sf.TextBudget.LinesPerPage || len(pg.Ops) == 0 {
				t.Fatalf("%s page %+v", p.ID, pg)
			}
			all = append(all, pg.Lines...)
			for _, l := range pg.Lines {
				if strings.Contains(l, "…") || strings.Contains(l, "...") {
					t.Fatalf("ellipsis in %q", l)
				}
			}
		}
		joined := strings.Join(all, "\n")
		for _, want := range []string{"988", "741741", "https://findahelpline.com"} {
			if !strings.Contains(joined, want) {
				t.Fatalf("%s: %q missing or split in %q", p.ID, want, joined)
			}
		}
	})
	if _, err := plainSafety(nil, devices.Builtins()[0].Surfaces[0]); !errors.Is(err, ErrInvalidCard) {
		t.Fatalf("no resources: %v", err)
	}
}

// The plain prompt on every profile: the body whole, Approve and Decline
// on the last page with focus on Decline.
func TestPlainPromptEveryProfile(t *testing.T) {
	body := `A text message to Sam: "Running ten minutes late, sorry!" sent from your phone number.`
	visualSurfaces(t, func(p devices.Profile, sf devices.Surface) {
		pages, err := plainPrompt("Text Sam", body, sf)
		if err != nil {
			t.Fatalf("%s/%s: %v", p.ID, sf.ID, err)
		}
		last := pages[len(pages)-1]
		if last.Focus != ControlDecline || len(last.Controls) != 2 || last.Controls[0].ID != ControlApprove {
			t.Fatalf("%s last page %+v", p.ID, last)
		}
		var all []string
		for i, pg := range pages {
			if pg.N != i+1 || pg.Of != len(pages) || pg.Title != "Text Sam" {
				t.Fatalf("%s page %+v", p.ID, pg)
			}
			all = append(all, pg.Lines...)
		}
		if !strings.Contains(strings.Join(all, " "), body) {
			t.Fatalf("%s: body lost in %q", p.ID, all)
		}
	})
}

// The engine never returns no pages for resources it can show: a rune its
// fonts lack sends the card to the plain layout, whose pages come back with
// ErrFallback for the caller to log.
func TestSafetyPagesFallBack(t *testing.T) {
	e, err := New(DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	odd := safety.Resource{ID: "odd", Name: "Linea \u2615", Actions: []safety.Action{{Type: safety.ActionCall, Value: "988"}}}
	visualSurfaces(t, func(p devices.Profile, sf devices.Surface) {
		pages, err := e.SafetyPages("c1", []safety.Resource{res988}, p.ID, sf)
		if err != nil || len(pages) == 0 || pages[0].Title != SafetyTitle {
			t.Fatalf("%s: engine pages %d, err %v", p.ID, len(pages), err)
		}
		pages, err = e.SafetyPages("c2", []safety.Resource{res988, odd}, p.ID, sf)
		if !errors.Is(err, ErrFallback) || !errors.Is(err, ErrGlyph) || len(pages) == 0 || pages[0].Title != plainSafetyTitle {
			t.Fatalf("%s: fallback pages %d, err %v", p.ID, len(pages), err)
		}
		pages, err = e.SafetyPages("c3", nil, p.ID, sf)
		if err == nil || errors.Is(err, ErrFallback) || pages != nil {
			t.Fatalf("%s: no resources: pages %d, err %v", p.ID, len(pages), err)
		}
	})
}

// A prompt title too long for the surface moves into the body under
// PromptTitle; a rune the fonts lack sends it to the plain layout.
func TestPromptPages(t *testing.T) {
	e, err := New(DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	long := "Text Sam that I am running about ten minutes late because of the traffic on the bridge"
	visualSurfaces(t, func(p devices.Profile, sf devices.Surface) {
		pages, err := e.PromptPages("prompt_1", long, "Sent from your phone.", p.ID, sf)
		if err != nil || len(pages) == 0 {
			t.Fatalf("%s: %v", p.ID, err)
		}
		var all []string
		for _, pg := range pages {
			all = append(all, pg.TitleLines...)
			all = append(all, pg.Lines...)
		}
		if got := NormalizeSpace(strings.Join(all, " ")); !strings.Contains(got, "traffic on the bridge") {
			t.Fatalf("%s: title lost: %q", p.ID, got)
		}
		last := pages[len(pages)-1]
		if sf.Buttons && last.Focus != ControlDecline {
			t.Fatalf("%s: focus %q", p.ID, last.Focus)
		}
		pages, err = e.PromptPages("prompt_2", "Send \u2615", "Now.", p.ID, sf)
		if !errors.Is(err, ErrFallback) || len(pages) == 0 || pages[len(pages)-1].Focus != ControlDecline {
			t.Fatalf("%s: fallback pages %d, err %v", p.ID, len(pages), err)
		}
	})
}
