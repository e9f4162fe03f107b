package safety

import "testing"

// TestFoodWordsNeedSomeone: plain food words let the model raise an
// utterance only when it is about the speaker or someone they know; a
// meeting turn a recogniser heard as "… people food" is about no one.
// Eating-disorder behaviour counts on its own, in each language.
func TestFoodWordsNeedSomeone(t *testing.T) {
	d := NewDetector()
	for _, s := range []string{
		"if it doesn't want you to steve's people food",
		"it doesn't want people food",
	} {
		if r := d.Detect(s); r.Level != LevelNone {
			t.Errorf("Detect(%q) = %v (%v), want none", s, r.Level, r.Reason)
		}
	}
	for _, s := range []string{
		"i haven't eaten in four days and i don't want to",
		"my daughter hasn't eaten in days",
		"mastico y escupo la comida para no tragar nada",
		"je mache et je recrache tout ce que je mange",
		"ich kaue und spucke das essen wieder aus",
		"i chew and spit my food so i don't swallow anything",
	} {
		if r := d.Detect(s); r.Level == LevelNone {
			t.Errorf("Detect(%q) = none, want a card", s)
		}
	}
}
