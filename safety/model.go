package safety

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// The model tier: two logistic regressions over hashed character n-grams
// of the canonical form (canon.go), trained by `vera-eval safety-train` from
// testdata/safety/corpus-train.jsonl and committed as model.txt, a sorted,
// diffable text file embedded in the binary:
//
//   - the "shown" head scores level ≥ elevated against none;
//   - the "crisis" head scores crisis against the rest.
//
// Each head is a bias plus the sum of the weights of the n-grams present
// (counted), compared with a logit threshold chosen on out-of-fold
// predictions of the training split. An utterance longer than one window is
// scored window by window and the highest score wins, so a crisis sentence
// in a long message is not diluted by the rest.

//go:embed model.txt
var modelText string

// model is an immutable, parsed model.txt.
type model struct {
	nmin, nmax     int
	window, stride int
	bias           [2]float32
	thresh         [2]float32 // logit thresholds: shown, crisis
	weights        [numFamilies]weightTable
	vocab          map[string]int32 // training words and their counts
	lex            *vocab           // the same, for repair.go
}

// weightTable is an open-addressing hash table from feature hash to the
// two heads' weights: a Go map costs more than the rest of the model. A
// key and its weights share one slot, so a probe that hits reads one cache
// line, not two. The model keeps one table per feature family
// (weightFamily): the word, concept and frame features, probed many times
// per word, sit in small tables (64 and 128 KiB) that stay in cache, apart
// from the character n-grams' 512 KiB.
//
// Most probes are of features the model does not have (a concept pair, a
// rare n-gram), so a filter in front of each table (8 bits per slot)
// answers those: two bits of one word per key, set for every key, so an
// absent feature almost never walks the table to an empty slot.
type weightTable struct {
	slots  []weightSlot // key 0 marks an empty slot (a zero hash is remapped to 1)
	mask   uint64
	n      int
	filter []uint64 // len(slots)/8 words; see filterBits
	fmask  uint64   // len(filter)-1
}

// filterBits are the word of the filter and the two bits in it that stand
// for hash h: bits of h the slot index (its low bits) does not use.
func filterBits(h, fmask uint64) (word uint64, bits uint64) {
	return h >> 40 & fmask, 1<<(h>>53&63) | 1<<(h>>59&31+(h>>34&1)*32)
}

// Feature families, each with its own weightTable.
const (
	famGram    = iota // g: character n-grams
	famWord           // w: b: f: words, word pairs, frames
	famConcept        // c: p: t: concepts, their pairs and triples
	numFamilies
)

// weightFamily is the family of feature g (its first byte names it).
func weightFamily(g []byte) int {
	switch {
	case len(g) == 0:
		return famWord
	case g[0] == 'g':
		return famGram
	case g[0] == 'c' || g[0] == 'p' || g[0] == 't':
		return famConcept
	}
	return famWord
}

type weightSlot struct {
	key uint64
	w   [2]float32
}

func (t *weightTable) get(h uint64) ([2]float32, bool) {
	if !t.mayHave(h) {
		return [2]float32{}, false
	}
	return t.probe(h)
}

// mayHave is false when the filter rules h out.
func (t *weightTable) mayHave(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if t.mask == 0 {
		return false
	}
	w, b := filterBits(h, t.fmask)
	return t.filter[w]&b == b
}

// probe looks h up in the slots (the table is not empty: mayHave passed).
func (t *weightTable) probe(h uint64) ([2]float32, bool) {
	if h == 0 {
		h = 1
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		switch s := &t.slots[i]; s.key {
		case h:
			return s.w, true
		case 0:
			return [2]float32{}, false
		}
	}
}

func (t *weightTable) put(h uint64, w [2]float32) {
	if h == 0 {
		h = 1
	}
	if 4*(t.n+1) > 3*len(t.slots) { // load factor 3/4
		t.grow()
	}
	fw, fb := filterBits(h, t.fmask)
	t.filter[fw] |= fb
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		switch s := &t.slots[i]; s.key {
		case h:
			s.w = w
			return
		case 0:
			s.key, s.w = h, w
			t.n++
			return
		}
	}
}

func (t *weightTable) grow() {
	old := t.slots
	size := max(2*len(old), 1024)
	t.slots, t.mask, t.n = make([]weightSlot, size), uint64(size-1), 0
	t.filter = make([]uint64, size/8)
	t.fmask = uint64(len(t.filter) - 1)
	for _, s := range old {
		if s.key != 0 {
			t.put(s.key, s.w)
		}
	}
}

var (
	builtinOnce  sync.Once
	builtinModel *model
	builtinErr   error
)

// defaultModel parses the embedded model once.
func defaultModel() (*model, error) {
	builtinOnce.Do(func() {
		builtinModel, builtinErr = parseModel(modelText)
	})
	return builtinModel, builtinErr
}

// ErrModel: a model file that cannot be read.
var ErrModel = errors.New("invalid safety model")

// parseModel reads the model.txt format written by TrainedModel.WriteTo.
func parseModel(text string) (*model, error) {
	m := &model{vocab: map[string]int32{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	line, header := 0, map[string]bool{}
	for sc.Scan() {
		line++
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		bad := func(err error) error {
			return fmt.Errorf("safety: model line %d: %v: %w", line, err, ErrModel)
		}
		if len(f) != 3 {
			return nil, bad(fmt.Errorf("want 3 tab-separated fields, got %d", len(f)))
		}
		if f[0] == "@vocab" {
			for _, wc := range strings.Fields(f[1]) {
				w, c, ok := strings.Cut(wc, ":")
				n, err := strconv.Atoi(c)
				if !ok || err != nil || n < 1 || w == "" {
					return nil, bad(fmt.Errorf("vocabulary entry %q", wc))
				}
				m.vocab[w] = int32(min(n, 1<<30))
			}
			continue
		}
		if strings.HasPrefix(f[0], "@") {
			if err := m.setHeader(f); err != nil {
				return nil, bad(err)
			}
			header[f[0]] = true
			continue
		}
		g, err := unquoteGram(f[0])
		if err != nil {
			return nil, bad(err)
		}
		ws, err1 := strconv.ParseFloat(f[1], 32)
		wc, err2 := strconv.ParseFloat(f[2], 32)
		if err := errors.Join(err1, err2); err != nil || isBad(ws) || isBad(wc) {
			return nil, bad(fmt.Errorf("weights %q %q", f[1], f[2]))
		}
		m.weights[weightFamily(g)].put(gramHash(g), [2]float32{float32(ws), float32(wc)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("safety: model: %v: %w", err, ErrModel)
	}
	for _, h := range []string{"@ngram", "@window", "@bias", "@threshold"} {
		if !header[h] {
			return nil, fmt.Errorf("safety: model: missing %s: %w", h, ErrModel)
		}
	}
	m.lex = newVocab(m.vocab)
	return m, nil
}

func isBad(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

func (m *model) setHeader(f []string) error {
	a, err1 := strconv.ParseFloat(f[1], 32)
	b, err2 := strconv.ParseFloat(f[2], 32)
	if err := errors.Join(err1, err2); err != nil || isBad(a) || isBad(b) {
		return fmt.Errorf("%s: bad values %q %q", f[0], f[1], f[2])
	}
	switch f[0] {
	case "@ngram":
		m.nmin, m.nmax = int(a), int(b)
		if m.nmin < 1 || m.nmax < m.nmin || m.nmax > 8 {
			return fmt.Errorf("@ngram %d..%d out of range", m.nmin, m.nmax)
		}
	case "@window":
		m.window, m.stride = int(a), int(b)
		if m.window < 4 || m.stride < 1 || m.stride > m.window {
			return fmt.Errorf("@window %d/%d out of range", m.window, m.stride)
		}
	case "@bias":
		m.bias = [2]float32{float32(a), float32(b)}
	case "@threshold":
		m.thresh = [2]float32{float32(a), float32(b)}
	default:
		// Unknown headers (@trained_on, @metrics …) are documentation.
	}
	return nil
}

// FNV-1a, 64 bit.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func gramHash(g []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range g {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// quoteGram writes an n-gram for model.txt: as is when it is printable
// ASCII without tab, backslash or quote, else Go-quoted.
func quoteGram(g []byte) string {
	for _, c := range g {
		if c < 0x21 || c > 0x7e || c == '\\' || c == '"' || c == '@' || c == '#' {
			return strconv.Quote(string(g))
		}
	}
	return string(g)
}

func unquoteGram(s string) ([]byte, error) {
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		return []byte(u), err
	}
	if s == "" {
		return nil, errors.New("empty n-gram")
	}
	return []byte(s), nil
}

// scores returns the two heads' logits for text and the best frame match:
// the maximum over windows of m.window words (stride m.stride) when text
// is longer than one window.
func (m *model) scores(text string, toks []string, x *extractor) ([2]float32, frameHit, ctxFlags) {
	var starts [64]int
	ws := wordStarts(text, starts[:0])
	if len(ws) <= m.window {
		x.prepare(text, toks)
		ctx := x.flags()
		if x.frame.level == LevelCrisis {
			// Nothing the model says can raise a frame's crisis (frames
			// are never lowered by context): skip its features.
			return m.bias, x.frame, ctx
		}
		return m.windowScores(text, x), x.frame, ctx
	}
	best := [2]float32{float32(math.Inf(-1)), float32(math.Inf(-1))}
	var fh frameHit
	var ctx ctxFlags
	for i := 0; ; i += m.stride {
		j := i + m.window
		end := len(text)
		if j < len(ws) {
			end = ws[j]
		}
		x.prepare(text[ws[i]:end], nil)
		s := m.windowScores(text[ws[i]:end], x)
		best[0], best[1] = max(best[0], s[0]), max(best[1], s[1])
		if x.frame.level > fh.level {
			fh = x.frame
		}
		ctx = ctx.or(x.flags())
		if j >= len(ws) {
			return best, fh, ctx
		}
	}
}

// ctxFlags: the context and everyday words of an utterance (features.go).
type ctxFlags struct {
	context, everyday, personal, risk, past, riskNotDo, request, riskStrong, everydayStrict, short, riskNotEat bool
}

// modelMayRaise: the model alone may raise an utterance only beside a word
// of danger, not when "do it" is its only one and it is a request to the
// listener ("please do it for me"), and not when it is a short fragment
// whose only words of danger are weak ones ("and i got my eye"), and not
// when food words are its only ones and it is about no one (eatSet).
func (c ctxFlags) modelMayRaise() bool {
	return c.risk && (c.riskNotDo || !c.request) && (c.riskStrong || !c.short) && (c.riskNotEat || c.personal)
}

// or merges the flags of another window.
func (c ctxFlags) or(d ctxFlags) ctxFlags {
	return ctxFlags{c.context || d.context, c.everyday || d.everyday, c.personal || d.personal, c.risk || d.risk,
		c.past || d.past, c.riskNotDo || d.riskNotDo, c.request || d.request, c.riskStrong || d.riskStrong,
		c.everydayStrict || d.everydayStrict, c.short && d.short, c.riskNotEat || d.riskNotEat}
}

// wordStarts appends the byte offset of every whitespace-separated word.
func wordStarts(s string, dst []int) []int {
	in := false
	for i := 0; i < len(s); i++ {
		sp := s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'
		if !sp && !in {
			dst = append(dst, i)
		}
		in = !sp
	}
	return dst
}

// windowScores scores the text x was prepared for.
func (m *model) windowScores(text string, x *extractor) [2]float32 {
	x.weights, x.feats = &m.weights, x.feats[:0]
	x.features(text, m.nmin, m.nmax, nil)
	x.weights = nil
	// The features the filters let through are looked up in one tight
	// loop after: the lookups are independent, so the processor overlaps
	// their cache misses. The weights are added in feature order.
	sum := m.bias
	for _, f := range x.feats {
		if w, ok := m.weights[f.fam].probe(f.h); ok {
			sum[0] += w[0]
			sum[1] += w[1]
		}
	}
	return sum
}

// level maps the two logits to a level and a reason id.
func (m *model) level(s [2]float32) (Level, string) {
	switch {
	case s[1] >= m.thresh[1]:
		return LevelCrisis, "model.crisis"
	case s[0] >= m.thresh[0]:
		return LevelElevated, "model.elevated"
	}
	return LevelNone, ""
}
