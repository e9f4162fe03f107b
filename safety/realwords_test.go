package safety

import (
	"bufio"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateRealWords = flag.Bool("update-realwords", false, "rewrite safety/realwords.txt from /usr/share/dict")

var dictFiles = []string{"/usr/share/dict/american-english", "/usr/share/dict/ngerman", "/usr/share/dict/spanish", "/usr/share/dict/french"}

// TestRealWords: realwords.txt is every dictionary word that the repair
// step would turn into a word of danger it does not hold ("stick" →
// "strick", "period" → "per i od"), computed with the list itself out of
// the way. Skips
// where Debian's word lists are not installed (CI: the list is committed).
func TestRealWords(t *testing.T) {
	for _, f := range dictFiles {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s not installed (apt-get install wamerican wngerman wspanish wfrench)", f)
		}
	}
	saved := realWords
	realWords = map[string]bool{}
	defer func() { realWords = saved }()
	known := NewDetector().model.lex
	// The words of danger a repair may produce (fuzzyConcepts' one-word
	// entries): a dictionary word is listed when its repaired form holds
	// one of them and the word itself is none of them.
	danger := map[string]bool{}
	for _, c := range conceptTable {
		if !fuzzyConcepts[c.name] {
			continue
		}
		for _, e := range strings.Split(c.entries, ",") {
			if ws := strings.Fields(e); len(ws) == 1 {
				danger[strings.Trim(ws[0], "*")] = true
			}
		}
	}
	// Only a typo correction (a one-word repair) that changes the word
	// within its first three letters: "stick" is not "strick" misspelt.
	// Corrections that keep the start are mostly a danger word's own
	// inflections ("aufhange" → "aufhangen", "killings", "mourrait") and
	// must go on being read as danger; splits keep the word's letters
	// (German compounds: "jagd messer") and are left to the repair too.
	// The past and subjunctive of sterben differ from it in the third
	// letter: they are the danger word, not a neighbour of it.
	ablaut := map[string]bool{"starb": true, "starben": true, "starbt": true, "starbst": true, "sturbe": true, "sturben": true, "sturbst": true, "sturbt": true}
	madeDanger := func(w string, got []string) bool {
		if danger[w] {
			return false
		}
		for _, g := range got {
			if danger[g] && len(got) == 1 && len(w) >= 3 && len(g) >= 3 && w[:3] != g[:3] && !ablaut[w] {
				return true
			}
		}
		return false
	}
	// An English dictionary word that the repair splits into a word of
	// danger and scraps of one or two letters ("begin" → "be gin",
	// "acutely" → "a cut el y", "divinity" → "di vin ity") is a word, not
	// words run together. Not listed: a danger word after "a" or "i"
	// ("abridge" may be "a bridge" run together), compounds of whole words
	// ("gunshot"), and German compounds ("jagdmesser"): the repair reads
	// those as before.
	madeDangerSplit := func(w string, got []string) bool {
		if danger[w] || len(got) < 2 || len(got) == 2 && len(got[0]) == 1 {
			return false // "abridge" may be "a bridge" run together
		}
		tiny, hit := false, false
		for _, g := range got {
			hit = hit || danger[g]
			tiny = tiny || len(g) <= 2
		}
		// Only splits that lean on a piece of one or two letters: a
		// compound of whole words keeps its danger ("gunshot" → "gun
		// shot", "handgun", "deathbed").
		return hit && tiny
	}
	// A split or correction that adds a context concept (sport, cooking,
	// a pet, work, a question …) the word itself does not have, and no word
	// of danger, can only hide a danger the writer named: "question" →
	// "quest i on" (a game's quest), "golden" → "gol den" (a goal),
	// "petite" → "pet i te". Such a dictionary word is kept whole.
	vetoish := contextSet
	vetoish.or(everydaySet)
	vetoish.or(mustSet("pet|work|laugh|role|social"))
	conceptsOf := func(ws []string) cset {
		sets := make([]cset, len(ws))
		concepts.tag(ws, sets)
		var all cset
		for _, c := range sets {
			all.or(c)
		}
		return all
	}
	madeVeto := func(w string, got []string) bool {
		whole := conceptsOf([]string{squashWord(w)})
		sq := make([]string, len(got))
		for i, g := range got {
			sq[i] = squashWord(g)
		}
		pieces := conceptsOf(sq)
		// a split into function words only undoes a merge ("ames" → "a
		// mes", "whereon" → "where on"): the repair is right to make it
		content := false
		for _, g := range got {
			content = content || known.flagsOf(g)&wFunction == 0
		}
		return content && pieces.without(whole).any(vetoish) && !pieces.without(whole).any(riskSet)
	}
	seen := map[string]bool{}
	var list []string
	for _, f := range dictFiles {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "'") {
				continue // possessives and elisions: normalize splits them anyway
			}
			toks := normalize(line, nil)
			if len(toks) != 1 || len(toks[0]) < 3 || seen[toks[0]] {
				continue
			}
			w := toks[0]
			seen[w] = true
			if got := repairTokens([]string{w}, nil, known); !slices.Equal(got, []string{w}) && (madeDanger(w, got) || f == dictFiles[0] && madeDangerSplit(w, got) || madeVeto(w, got)) {
				list = append(list, w)
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(list)
	if *updateRealWords {
		if err := os.WriteFile("realwords.txt", []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d words", len(list))
		return
	}
	var missing []string
	for _, w := range list {
		if !saved[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d dictionary words the repair would change are not in realwords.txt (first: %v); regenerate with -update-realwords", len(missing), missing[:min(10, len(missing))])
	}
}

// TestRealWordsLeftAlone: a dictionary word is kept as typed, while a real
// typo of a danger word is still repaired.
func TestRealWordsLeftAlone(t *testing.T) {
	d := NewDetector()
	if r := d.Detect("i have to stick it"); r.Level != LevelNone {
		t.Errorf("\"i have to stick it\" = %v (%s), want none", r.Level, r.Reason)
	}
	for _, s := range []string{"we talked about the consecutive deadlines at work today", "the noodles were cold", "i have a headache from the prosecution's questions", "my cuticle is sore"} {
		if r := d.Detect(s); r.Level != LevelNone {
			t.Errorf("%q = %v (%s), want none", s, r.Level, r.Reason)
		}
	}
	for _, s := range []string{"my friend is standing on abridge and won't come down", "there was a gunshot outside my door"} {
		if r := d.Detect(s); r.Level < LevelElevated {
			t.Errorf("%q = %v, want a card", s, r.Level)
		}
	}
	if r := d.Detect("im standing on the brige"); r.Level < LevelElevated {
		t.Errorf("\"im standing on the brige\" = %v, want a card", r.Level)
	}
}
