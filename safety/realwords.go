package safety

import (
	_ "embed"
	"strings"
)

// realWords are dictionary words of the four languages that the repair
// step would otherwise have changed: split into pieces ("period" → "per i
// od", "adelgazo" → "a del gaz o") or read as a danger word one letter
// away ("stick" → German "strick", a rope: "i have to stick it" raised a
// crisis card on a mis-heard meeting turn, live). A word someone typed or
// a recogniser heard correctly is not a typo; the repair leaves it alone.
//
// realwords.txt is generated, not written: from Debian's word lists
// (wamerican, wngerman, wspanish, wfrench), each word normalised as the
// detector normalises, kept when repairTokens would change it:
//
//	apt-get install wamerican wngerman wspanish wfrench
//	go test -tags nolibopusfile -run TestRealWords -update-realwords ./safety/
//
// TestRealWords checks the committed list against the word lists where
// they are installed.
//
//go:embed realwords.txt
var realWordsText string

var realWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(realWordsText) {
		m[w] = true
	}
	return m
}()
