package safety

import (
	"strings"
	"sync"
)

// German as people type and say it (issue 13, round 4): umlauts typed as
// "ae", "oe", "ue"; colloquial and dialect forms ("nimmer", "heut",
// "isch", "net"); modal particles that sit between a verb and its object
// ("ich brauch sie ja nicht mehr"); and separable verbs whose particle
// ends the clause ("ich bring mich heut nacht um", "ich mach heut nacht
// schluss"). germanForms rewrites the normalised tokens of a German
// utterance into the forms the concept table and the rules are written
// in (germanOrder moves the particles, after repair); other languages
// pass through untouched.

// germanColloquial maps a colloquial or dialect token (German utterances
// only) to its standard form.
var germanColloquial = map[string][]string{
	"nimmer": {"nicht", "mehr"}, "nimma": {"nicht", "mehr"}, "nimmi": {"nicht", "mehr"}, "nimmermehr": {"nicht", "mehr"},
	"nix": {"nichts"}, "nischt": {"nichts"}, "heut": {"heute"}, "isch": {"ich"}, "mog": {"mag"}, "net": {"nicht"},
	"ned": {"nicht"}, "nit": {"nicht"},
	"wuerd": {"wurde"}, "wurd": {"wurde"}, "haett": {"hatte"}, "hatt": {"hatte"}, "waer": {"ware"}, "waers": {"ware", "es"},
	"halts": {"halte", "es"}, "gehts": {"geht", "es"}, "gibts": {"gibt", "es"}, "machs": {"mache", "es"}, "tus": {"tue", "es"},
	"aufm": {"auf", "dem"}, "aufn": {"auf", "den"}, "vorm": {"vor", "dem"}, "unterm": {"unter", "dem"},
	"wui": {"will"}, "koa": {"kein"},
}

// germanParticles are modal particles dropped from German utterances:
// they carry tone, not meaning ("ich will einfach nur sterben").
var germanParticles = map[string]bool{
	"ja": true, "eh": true, "echt": true, "irgendwie": true, "einfach": true, "eigentlich": true, "sehr": true,
	"wirklich": true,
}

// germanSaid: "ja" before these is an answer ("ich hab ja gesagt").
var germanSaid = map[string]bool{"gesagt": true, "geantwortet": true, "sagen": true, "sage": true}

// germanTyped returns t with "ae", "oe", "ue" after a consonant read as
// ä, ö, ü (folded: a, o, u), when that makes a word the detector knows and
// t itself is not one ("schlaegt" → "schlagt", "lebensmuede" →
// "lebensmude"; "aktuell", "feuer" stay).
func germanTyped(t string) string {
	if !strings.Contains(t, "ae") && !strings.Contains(t, "oe") && !strings.Contains(t, "ue") {
		return t
	}
	known := germanKnown()
	if known[t] {
		return t
	}
	b := []byte(t)
	out := b[:0:0]
	changed := false
	for i := 0; i < len(b); i++ {
		if i+1 < len(b) && b[i+1] == 'e' && (b[i] == 'a' || b[i] == 'o' || b[i] == 'u') &&
			(i == 0 || !strings.ContainsRune("aeiouyq", rune(b[i-1]))) {
			out = append(out, b[i])
			i++
			changed = true
			continue
		}
		out = append(out, b[i])
	}
	if !changed {
		return t
	}
	f := string(out)
	if known[f] || known[squashWord(f)] || hasKnownAffix(squashWord(f)) {
		return f
	}
	return t
}

// hasKnownAffix: a German compound the concept table reads by a prefix or
// suffix entry ("schlaftabletten", "selbstmordgedanken").
func hasKnownAffix(w string) bool {
	for _, l := range concepts.affixLen {
		if l <= len(w) {
			if _, ok := concepts.prefixes[w[:l]]; ok {
				return true
			}
			if _, ok := concepts.suffixes[w[len(w)-l:]]; ok {
				return true
			}
		}
	}
	return false
}

// germanKnown is every word the concept table or the repair vocabulary
// knows, squashed and as written; built on first use (the concept table
// itself is built with normalizeAs, which does not call germanForms).
var germanKnown = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for w := range concepts.words {
		m[w] = true
	}
	for w := range repairVocab {
		m[w] = true
	}
	return m
})

// separable verbs of the first person whose particle may end the clause:
// the verb, the particle, and the object words that stay before it.
var germanSeparable = map[string]string{
	"bring": "um", "bringe": "um", "bringst": "um", "bringt": "um",
	"tu": "an", "tue": "an", "tust": "an", "tut": "an",
	"mach": "schluss", "mache": "schluss",
}

var germanKriegObj = map[string]bool{"es": true, "das": true, "ich": true, "ihn": true, "sie": true, "nicht": true,
	"kein": true, "keine": true, "keinen": true, "nichts": true}

var germanNeg = map[string]bool{"nicht": true, "nie": true, "niemals": true, "nimmer": true}

var germanObjects = map[string]bool{
	"mich": true, "dich": true, "sich": true, "mir": true, "dir": true, "ihn": true, "uns": true,
	"was": true, "etwas": true, "ihm": true,
}

// germanForms applies the rewrites above to a German utterance's tokens
// (see the file comment); other utterances are returned as they are.
func germanForms(toks []string) []string {
	if !germanishDialect(toks) {
		return toks
	}
	var out []string // nil until a token changes; then a copy of toks so far
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		rep, ok := germanColloquial[t]
		switch {
		case t == "ja" && i+1 < len(toks) && germanSaid[toks[i+1]]:
			// "ich hab ja gesagt": answered yes
			rep, ok = []string{"bejaht"}, true
			i++
		case germanParticles[t]:
			rep, ok = nil, true
		case t == "krieg" && i+1 < len(toks) && germanKriegObj[toks[i+1]]:
			// "ich krieg es nicht in den griff": to get, not a war
			rep, ok = []string{"bekomme"}, true
		case !ok:
			if f := germanTyped(t); f != t {
				rep, ok = []string{f}, true
			}
		}
		if ok && out == nil {
			out = append(make([]string, 0, len(toks)+2), toks[:i]...)
		}
		switch {
		case ok:
			out = append(out, rep...)
		case out != nil:
			out = append(out, t)
		}
	}
	if out != nil {
		return out
	}
	return toks
}

// germanOrder is germanForms and moveSeparable on the repaired tokens of
// a German utterance (after repair, so a verb or a colloquial word split
// from a merged one, "ichbring mich heute um", "willnimmer", is read too).
func germanOrder(toks []string) []string {
	if !germanishDialect(toks) {
		return toks
	}
	toks = germanForms(toks) // again: a split may have made "nimmer" of "willnimmer"
	// "dass er sich um bringt": the repair split a joined verb
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		if toks[i] == "um" && i+1 < len(toks) && strings.HasPrefix(toks[i+1], "bring") {
			out = append(out, "um"+toks[i+1])
			i++
			continue
		}
		out = append(out, toks[i])
	}
	toks = out
	moveSeparable(toks)
	return toks
}

// germanishDialect: German by its stop words (guessLang), or by German
// and dialect words outnumbering English ones with no Spanish or French
// stop word ("i mog nimmer leben").
func germanishDialect(toks []string) bool {
	var stops [4]int // en, es, fr, de
	de, en := 0, 0
	esfr := false // a Spanish or French stop word: no dialect count applies
	for _, t := range toks {
		c := langCues[t]
		countStop(&stops, c)
		if esfr {
			continue
		}
		switch {
		case c&(cueStopES|cueStopFR) != 0:
			esfr = true
		case c&(cueGerman|cueDialect) != 0:
			de++
		case c&cueEnglish != 0:
			en++
		}
	}
	return stopLang(stops) == "de" || !esfr && de > en
}

// germanAmbiguous are colloquial forms that are words of another language
// too; they do not make an utterance German.
var germanAmbiguous = map[string]bool{"net": true, "nit": true, "ned": true, "nix": true}

// moveSeparable brings a separable verb's particle next to the verb and
// its objects, in place: "ich bring mich heute nacht um" → "ich bring mich
// um heute nacht", "ich mach heute nacht schluss" → "ich mach schluss
// heute nacht". "um zu" is a purpose clause, not the particle; a "mit"
// or "fur" before "schluss" names what ends ("mit ihm schluss machen"),
// so that order is kept.
func moveSeparable(toks []string) {
	for i := 0; i+1 < len(toks); i++ {
		p, ok := germanSeparable[toks[i]]
		if !ok {
			continue
		}
		for j := i + 1; j < len(toks) && j <= i+6; j++ {
			t := toks[j]
			if t == "mit" || t == "fur" || t == "und" || t == "aber" || t == "wenn" || t == "dass" || t == "weil" {
				break
			}
			if t != p || (p == "um" && j+1 < len(toks) && toks[j+1] == "zu") {
				continue
			}
			if p == "um" && !germanObjects[toks[i+1]] {
				break
			}
			// negations before the verb ("ich bringe mich nicht um" →
			// "ich nicht bringe mich um": still negated), then the verb,
			// its objects, the particle and the rest, in order
			seg := append([]string(nil), toks[i:j]...)
			k := i
			for _, w := range seg {
				if germanNeg[w] {
					toks[k] = w
					k++
				}
			}
			toks[k] = seg[0]
			k++
			for _, w := range seg[1:] {
				if germanObjects[w] {
					toks[k] = w
					k++
				}
			}
			toks[k] = p
			k++
			for _, w := range seg[1:] {
				if !germanObjects[w] && !germanNeg[w] {
					toks[k] = w
					k++
				}
			}
			break
		}
	}
}
