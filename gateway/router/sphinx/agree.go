package sphinx

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Lexicon is the recogniser's pronunciation dictionary, read in pure Go:
// each word's first pronunciation as phone indexes. The spotter's gate
// uses it to ask whether a transcript sounds like a spotted phrase.
type Lexicon struct {
	words map[string][]uint8
}

// phoneSet is CMUdict's 39 phones (Debian's pocketsphinx-en-us dictionary
// has no stress marks); SIL and noise phones never appear in words.
var phoneSet = strings.Fields("AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH")

// phoneClass groups phones whose confusion costs less in Distance: vowels,
// stops, fricatives and affricates, nasals, liquids and glides.
var phoneClass = func() map[string]uint8 {
	m := map[string]uint8{}
	for i, group := range []string{
		"AA AE AH AO AW AY EH ER EY IH IY OW OY UH UW",
		"B D G K P T",
		"CH DH F HH JH S SH TH V Z ZH",
		"M N NG",
		"L R W Y",
	} {
		for _, p := range strings.Fields(group) {
			m[p] = uint8(i)
		}
	}
	return m
}()

// LoadLexicon reads a CMUdict-format dictionary ("word PH PH ..." a line,
// alternates as "word(2)", which are skipped).
func LoadLexicon(path string) (*Lexicon, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sphinx: lexicon: %w", err)
	}
	defer f.Close()
	return readLexicon(f)
}

func readLexicon(r io.Reader) (*Lexicon, error) {
	idx := map[string]uint8{}
	for i, p := range phoneSet {
		idx[p] = uint8(i)
	}
	l := &Lexicon{words: map[string][]uint8{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasSuffix(f[0], ")") {
			continue
		}
		ph := make([]uint8, 0, len(f)-1)
		for _, p := range f[1:] {
			i, ok := idx[p]
			if !ok {
				ph = nil
				break
			}
			ph = append(ph, i)
		}
		if len(ph) > 0 {
			l.words[strings.ToLower(f[0])] = ph
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sphinx: lexicon: %w", err)
	}
	if len(l.words) == 0 {
		return nil, fmt.Errorf("sphinx: lexicon: no words")
	}
	return l, nil
}

// phones is text's phone sequence: its words' pronunciations in order,
// words not in the lexicon left out; ok is false when one was missing.
func (l *Lexicon) phones(text string) (out []uint8, ok bool) {
	ok = true
	for _, w := range strings.Fields(strings.ToLower(text)) {
		w = strings.Trim(w, ".,;:!?\"")
		if p, found := l.words[w]; found {
			out = append(out, p...)
		} else if w != "" {
			ok = false
		}
	}
	return out, ok
}

// subCost is the cost of hearing phone b where a was said.
func subCost(a, b uint8) float64 {
	switch {
	case a == b:
		return 0
	case phoneClass[phoneSet[a]] == phoneClass[phoneSet[b]]:
		return 0.6
	}
	return 1
}

// Distance is how far transcript is from sounding like phrase: the least
// edit cost (substitutions within a phone class 0.6, others and gaps 1) of
// aligning all of phrase's phones to any stretch of transcript's, divided
// by the phrase's length. 0 is the phrase itself; 1 or more, nothing like
// it. A phrase with a word outside the lexicon is never near (Inf).
func (l *Lexicon) Distance(phrase, transcript string) float64 {
	p, ok := l.phones(phrase)
	if !ok || len(p) == 0 {
		return inf
	}
	t, _ := l.phones(transcript)
	prev := make([]float64, len(t)+1) // a stretch may start anywhere: row 0 is free
	cur := make([]float64, len(t)+1)
	for i := 1; i <= len(p); i++ {
		cur[0] = float64(i)
		for j := 1; j <= len(t); j++ {
			cur[j] = min(prev[j-1]+subCost(p[i-1], t[j-1]), prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	best := prev[0]
	for _, v := range prev[1:] {
		best = min(best, v)
	}
	return best / float64(len(p))
}

const inf = 1e9

// DefaultMaxDistance is the agreement a phrase with no MaxDistance of its
// own needs (Keyphrase.MaxDistance): about two phones in five heard as
// another of their class, or one in four as any other phone. The closest
// any real benign transcript came to a phrase of the built-in list was
// 0.36 (BENCHMARKS.md, "the key-phrase spotter on real voices").
const DefaultMaxDistance = 0.25

// Gate is the spotter's agreement rule. The audio spotter hears crisis
// phrases in ordinary speech: on real recorded voices (meetings, read
// speech) the phone loop is a poor model of what was said, and a phrase can
// outscore it with nothing like the phrase spoken. A spotted phrase
// therefore counts only when the turn's transcript sounds like it: its
// phone sequence comes within the phrase's MaxDistance of the phrase's
// (Lexicon.Distance). The spotter then adds recall where the recogniser
// garbled the words into ones that sound alike ("feel my sales" for "kill
// myself"), which the text detector cannot read, and never where the
// transcript says something else.
type Gate struct {
	lex *Lexicon
	max map[string]float64
}

// NewGate applies each phrase's MaxDistance (DefaultMaxDistance where it
// is 0, and for phrases not in ks).
func NewGate(lex *Lexicon, ks []Keyphrase) *Gate {
	g := &Gate{lex: lex, max: make(map[string]float64, len(ks))}
	for _, k := range ks {
		if k.MaxDistance > 0 {
			g.max[k.Phrase] = k.MaxDistance
		}
	}
	return g
}

// LoadGate reads the dictionary at path for the built-in crisis list.
func LoadGate(path string) (*Gate, error) {
	lex, err := LoadLexicon(path)
	if err != nil {
		return nil, err
	}
	return NewGate(lex, CrisisKeyphrases()), nil
}

var defaultGate struct {
	once sync.Once
	g    *Gate
	err  error
}

// DefaultGate is LoadGate of DefaultConfig's dictionary, read once per
// process (the dictionary is ~135,000 words).
func DefaultGate() (*Gate, error) {
	defaultGate.once.Do(func() { defaultGate.g, defaultGate.err = LoadGate(DefaultConfig().Dict) })
	return defaultGate.g, defaultGate.err
}

// MaxDistance is phrase's agreement threshold.
func (g *Gate) MaxDistance(phrase string) float64 {
	if d, ok := g.max[phrase]; ok {
		return d
	}
	return DefaultMaxDistance
}

// Agrees reports whether transcript sounds like phrase.
func (g *Gate) Agrees(phrase, transcript string) bool {
	return g.lex.Distance(phrase, transcript) <= g.MaxDistance(phrase)
}

// Filter returns the spotted phrases that agree with transcript, in order
// (nil when none does). An empty transcript agrees with nothing.
func (g *Gate) Filter(transcript string, spotted []string) []string {
	var out []string
	for _, p := range spotted {
		if g.Agrees(p, transcript) {
			out = append(out, p)
		}
	}
	return out
}
