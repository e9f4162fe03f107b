package session

import (
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/safety"
)

// safeNow takes only a clear, whole statement of being safe: hedges,
// questions, negations and anything said with it keep the crisis.
func TestSafeNow(t *testing.T) {
	for text, want := range map[string]bool{
		"I'm safe now":                         true,
		"im safe":                              true,
		"I am safe now.":                       true,
		"Okay. I'm safe now, thank you.":       true,
		"yeah i feel safe now":                 true,
		"Don't worry, I won't hurt myself":     true,
		"I'm okay and safe now, I promise":     true,
		"I’m safe":                             true,
		"Estoy a salvo":                        true,
		"ya estoy a salvo, gracias":            true,
		"Je suis en sécurité maintenant":       true,
		"Ich bin jetzt in Sicherheit":          true,
		"I'm safe for now":                     false,
		"I think I'm safe":                     false,
		"maybe I'm safe":                       false,
		"am I safe?":                           false,
		"I'm safe?":                            false,
		"I'm not safe":                         false,
		"I don't feel safe":                    false,
		"I'm safe but I still have the pills":  false,
		"I'm safe now but I want to die":       false,
		"safe":                                 false,
		"the bridge is safe now":               false,
		"I'm not going to be safe":             false,
		"i'm safe tonight, tomorrow who knows": false,
		"":                                     false,
	} {
		if got := safeNow(text); got != want {
			t.Errorf("safeNow(%q) = %v, want %v", text, got, want)
		}
	}
}

// nameAndNumber speaks, for every resource of the embedded catalog, its
// name and then the pre-stored spoken form of the number a person dials
// (call, else text): digit by digit, said twice. A resource without one
// (a directory) is spoken whole, never dropped.
func TestNameAndNumberEveryCatalogResource(t *testing.T) {
	c, err := safety.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.All()) < 10 {
		t.Fatalf("%d catalog resources", len(c.All()))
	}
	for _, r := range c.All() {
		got := nameAndNumber(r)
		if !strings.HasPrefix(got, r.Name) {
			t.Errorf("%s: %q does not start with the resource's name", r.ID, got)
		}
		var dial *safety.Action
		for _, typ := range []safety.ActionType{safety.ActionCall, safety.ActionText} {
			for i := range r.Actions {
				if dial == nil && r.Actions[i].Type == typ {
					dial = &r.Actions[i]
				}
			}
		}
		if dial == nil {
			if got != safety.SpokenResource(r) {
				t.Errorf("%s (no number): spoken %q, want the whole resource %q", r.ID, got, safety.SpokenResource(r))
			}
			continue
		}
		if dial.Spoken == "" || !strings.HasSuffix(got, ". "+dial.Spoken) || strings.Count(got, "Again:") != 1 {
			t.Errorf("%s: spoken %q, want its name then the pre-stored %q, said twice", r.ID, got, dial.Spoken)
		}
		if number := got[len(r.Name):]; strings.ContainsAny(number, "0123456789") {
			t.Errorf("%s: %q says the number in digits, not words", r.ID, number)
		}
	}
}
