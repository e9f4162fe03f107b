package session

import "testing"

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
