package safety

// Elliptical coordination: "i cut my hair and my wrists" says "cut my
// wrists" with the verb left out the second time, and so do "me corté el
// pelo y las venas" and "je me suis coupé les cheveux et les veines". The
// phrase rules and frames read words side by side, so the verb is said
// again before the second object: "i cut my hair and cut my wrists". Only
// the verbs of harming the body are repeated (cutting, slitting, burning,
// stabbing), only across one conjunction and only when the second
// conjunct starts with a determiner or possessive, so "i cut the bread and
// went to bed" is left alone. German puts the verb last ("mir die haare
// und die pulsadern aufgeschnitten"), where the second object already
// stands beside it.

var coordVerbs = map[string]bool{
	"cut": true, "slit": true, "slashed": true, "sliced": true, "burned": true, "burnt": true, "stabbed": true,
	"corte": true, "corto": true, "raje": true, "queme": true,
	"coupe": true, "coupee": true, "ouvert": true, "ouverte": true, "brule": true, "brulee": true,
}

var coordClitics = map[string]bool{"me": true, "m": true, "suis": true, "se": true, "ai": true}

var coordAnd = map[string]bool{"and": true, "y": true, "e": true, "et": true}

var coordDet = map[string]bool{
	"my": true, "the": true, "both": true, "mi": true, "mis": true, "el": true, "la": true, "las": true, "los": true,
	"les": true, "mes": true, "ma": true, "mon": true, "le": true,
}

// coordReach: the first object may take this many words ("my long
// blond hair").
const coordReach = 4

// repeatCoordinatedVerb returns toks with a harm verb said again before
// its second, coordinated object.
func repeatCoordinatedVerb(toks []string) []string {
	for i := 0; i < len(toks); i++ {
		if !coordVerbs[toks[i]] {
			continue
		}
		lo := i
		for lo > 0 && i-lo < 2 && coordClitics[toks[lo-1]] {
			lo--
		}
		for j := i + 2; j < len(toks)-1 && j <= i+1+coordReach; j++ {
			if !coordAnd[toks[j]] {
				continue
			}
			if !coordDet[toks[j+1]] {
				break
			}
			verb := toks[lo : i+1]
			out := make([]string, 0, len(toks)+len(verb))
			out = append(out, toks[:j+1]...)
			out = append(out, verb...)
			out = append(out, toks[j+1:]...)
			return out
		}
	}
	return toks
}
