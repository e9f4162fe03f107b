package session

import (
	"regexp"
	"strings"
	"unicode"
)

// safeNow reports whether text is, as a whole, a clear statement that the
// person is safe now ("I'm safe now", "okay, I won't hurt myself, I
// promise", "estoy a salvo", "je suis en sécurité", "ich bin in
// Sicherheit"): the one thing that may lower a crisis in force to
// elevated. It is deliberately narrow: a question, a hedge ("I think",
// "maybe", "for now"), a "but", a negation of safety or anything else
// said with it is not a clear statement, and the crisis stays.
func safeNow(text string) bool {
	if strings.ContainsRune(text, '?') {
		return false
	}
	s := normaliseStatement(text)
	for {
		t := strings.TrimSpace(safeAround.ReplaceAllString(s, " "))
		if t == s {
			break
		}
		s = t
	}
	return s != "" && safeCore.MatchString(s)
}

// normaliseStatement lower-cases text, keeps letters, digits and
// apostrophes, and collapses the rest to single spaces; "im" and "i am"
// become "i'm".
func normaliseStatement(text string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(strings.ReplaceAll(text, "’", "'")) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'':
			b.WriteRune(r)
			space = false
		case !space:
			b.WriteByte(' ')
			space = true
		}
	}
	s := " " + strings.TrimSpace(b.String()) + " "
	for _, r := range [][2]string{{" im ", " i'm "}, {" i am ", " i'm "}, {" ive ", " i've "}, {" wont ", " won't "}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return strings.TrimSpace(s)
}

// safeAround are the words that may come before or after the statement:
// assent, thanks, a promise, "now". Hedges are not among them.
var safeAround = regexp.MustCompile(`^(?:ok|okay|yes|yeah|yep|sure|honestly|really|vera|hey|don't worry|dont worry|i promise|promise|thanks|thank you|now|right now|again|sí|si|gracias|vale|de verdad|oui|merci|d'accord|ja|danke|okay danke)(?: |$)|(?:^| )(?:ok|okay|i promise|promise|thanks|thank you|now|right now|again|really|gracias|ahora|de verdad|merci|maintenant|danke|jetzt|wirklich)$`)

// safeCore is the statement itself, as the whole remaining utterance.
var safeCore = regexp.MustCompile(`^(?:` + strings.Join([]string{
	`i'm (?:now |really |totally |completely )?safe(?: now)?`,
	`i'm (?:ok|okay|fine) (?:and |i'm )?safe(?: now)?`,
	`i'm safe (?:and |i'm )?(?:ok|okay|fine)(?: now)?`,
	`i feel safe(?: now)?`,
	`i(?: will not|'ll not| won't|'m not going to| am not going to) (?:hurt|harm|kill) myself`,
	`i(?: will not|'ll not| won't|'m not going to) do (?:it|anything)`,
	`(?:ya |ahora )?estoy (?:bien y )?a salvo(?: ahora)?`,
	`no (?:me voy a hacer|voy a hacerme) daño`,
	`je suis (?:maintenant )?en s[ée]curit[ée](?: maintenant)?`,
	`je ne vais pas me faire (?:de )?mal`,
	`ich bin (?:jetzt )?in sicherheit(?: jetzt)?`,
	`ich werde mir nichts antun`,
}, "|") + `)$`)
