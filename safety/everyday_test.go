package safety

import (
	"strings"
	"testing"
)

// TestEverydayBesideKillingOneself: a sport or a time beside a first-person
// killing of oneself shows a card (elevated at least, never none), and so
// does a method question, a job named or not; a game death told with its
// killer, an idiom, a death toll, a death avoided and a crew's call that
// ended well stay none; a harm verb left out before a second, coordinated
// object is read as said.
func TestEverydayBesideKillingOneself(t *testing.T) {
	d := NewDetector()
	shown := []string{
		"nach dem training bring ich mich um",
		"ich bringe mich nach dem training um",
		"après le match je vais me tuer",
		"i cut my hair and my wrists",
		"what is the most painful way to die",
		"how many pills does it take to die",
		"as a nurse i know how many pills it takes and i am going to take them tonight",
		"me corté el pelo y las venas",
		"je me suis coupé les cheveux et les veines",
	}
	for _, s := range shown {
		if r := d.Detect(s); r.Level == LevelNone {
			t.Errorf("Detect(%q) = none, want a card", s)
		}
	}
	none := []string{
		"me mato un francotirador justo al llegar a la zona",
		"i shot myself in the foot with that email",
		"mon prof va me tuer si je rends ce devoir en retard",
		"how many soldiers died at verdun",
		"wie viele sind beim erdbeben gestorben",
		"how do i beat this boss without dying every time",
		"our ambulance crew got a call about a woman on a roof, she came down safely",
		"i cut the bread and the cheese",
		"i cut my hair and my nails today",
	}
	for _, s := range none {
		if r := d.Detect(s); r.Level != LevelNone {
			t.Errorf("Detect(%q) = %v (%s), want none", s, r.Level, r.Reason)
		}
	}
}

func TestRepeatCoordinatedVerb(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"i cut my hair and my wrists", "i cut my hair and cut my wrists"},
		{"me corte el pelo y las venas", "me corte el pelo y me corte las venas"},
		{"je me suis coupe les cheveux et les veines", "je me suis coupe les cheveux et me suis coupe les veines"},
		{"i cut the bread and went to bed", "i cut the bread and went to bed"},
	} {
		got := strings.Join(repeatCoordinatedVerb(strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("repeatCoordinatedVerb(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
