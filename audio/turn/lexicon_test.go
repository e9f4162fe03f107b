package turn

import "testing"

func TestClassifyWords(t *testing.T) {
	cases := []struct {
		lang, text string
		want       WordClass
	}{
		// English: trailing conjunction, filler, preposition, article, opener.
		{"en", "i went to the store and", WordsHold},
		{"en", "I went to the store, AND", WordsHold},
		{"en", "so um", WordsHold},
		{"en", "i couldn't sleep because", WordsHold},
		{"en", "i was talking to the", WordsHold},
		{"en", "it is about my", WordsHold},
		{"en", "and(2) then", WordsHold},
		{"en", "well i think", WordsHold},
		{"en", "i need to go to", WordsHold},
		// Closing formulas and questions.
		{"en", "that's all thank you", WordsEnd},
		{"en", "okay bye", WordsEnd},
		{"en", "can you help me with my phone", WordsEnd},
		{"en", "what time is it", WordsEnd},
		{"en", "is it going to rain?", WordsEnd},
		// Neutral: a complete clause, words that only look like hold words.
		{"en", "i went to the store", WordsNone},
		{"en", "turn it on", WordsNone},
		{"en", "i think so", WordsNone},
		{"en", "i did that", WordsNone},
		{"en", "", WordsNone},
		// A question opener on a long utterance is no longer a question.
		{"en", "what i wanted to say is that the day went on and on for hours and i was tired of it all", WordsNone},
		// Spanish.
		{"es", "fui a la tienda y", WordsHold},
		{"es", "no pude dormir porque", WordsHold},
		{"es", "eh", WordsHold},
		{"es", "creo que", WordsHold},
		{"es", "muchas gracias", WordsEnd},
		{"es", "¿qué hora es?", WordsEnd},
		{"es", "fui a la tienda", WordsNone},
		// French.
		{"fr", "je suis allé au magasin et", WordsHold},
		{"fr", "parce que", WordsHold},
		{"fr", "euh", WordsHold},
		{"fr", "je pense", WordsHold},
		{"fr", "merci beaucoup", WordsEnd},
		{"fr", "pourquoi il pleut", WordsEnd},
		{"fr", "je suis allé au magasin", WordsNone},
		// German.
		{"de", "ich war im laden und", WordsHold},
		{"de", "ich konnte nicht schlafen weil", WordsHold},
		{"de", "ähm", WordsHold},
		{"de", "ich glaube", WordsHold},
		{"de", "vielen dank", WordsEnd},
		{"de", "wie spät ist es", WordsEnd},
		{"de", "ich war im laden", WordsNone},
		// Languages without lists, and region tags.
		{"zh", "and", WordsNone},
		{"EN-gb", "and", WordsHold},
		{"de_AT", "und", WordsHold},
	}
	for _, c := range cases {
		if got := ClassifyWords(c.lang, c.text); got != c.want {
			t.Errorf("%s %q: %v, want %v", c.lang, c.text, got, c.want)
		}
	}
}

func TestIsBackchannel(t *testing.T) {
	yes := map[string][]string{
		"en": {"mm-hm", "yeah", "right", "okay", "uh-huh", "I see", "yeah yeah", "oh right"},
		"es": {"sí", "claro", "vale", "ajá"},
		"fr": {"oui", "d'accord", "ouais"},
		"de": {"ja", "genau", "mhm", "stimmt"},
	}
	no := map[string][]string{
		"en": {"", "wait stop", "no that's wrong", "yeah but i wanted something else", "can you repeat that"},
		"es": {"espera", "no es eso"},
		"fr": {"attends", "non"},
		"de": {"warte", "nein das stimmt nicht"},
	}
	for lang, list := range yes {
		for _, s := range list {
			if !IsBackchannel(lang, s) {
				t.Errorf("%s %q: not a backchannel", lang, s)
			}
		}
	}
	for lang, list := range no {
		for _, s := range list {
			if IsBackchannel(lang, s) {
				t.Errorf("%s %q: taken for a backchannel", lang, s)
			}
		}
	}
}

func TestClassifyWordsAllocs(t *testing.T) {
	lx := lexiconFor("en")
	texts := []string{"i went to the store and", "that's all thank you", "what time is it", "mm-hm yeah"}
	if n := testing.AllocsPerRun(100, func() {
		for _, s := range texts {
			_ = lx.classify(s)
			_ = lx.isBackchannel(s)
		}
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
