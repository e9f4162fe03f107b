package safety

// Features of one utterance for the model tier. Every feature is a short
// byte string; the model file lists them by that string and the detector
// looks them up by its FNV-1a hash. Five families:
//
//	g:xyz      a character n-gram of the canonical form (canon.go), which is
//	           blind to case, punctuation, repeated letters and spacing
//	w:word     a normalised word (normalize.go)
//	b:a b      two consecutive words ("<" and ">" mark the ends)
//	c:name     a concept (concepts.go) of some word
//	p:a>b      concept a, then concept b within pairSpan concept-bearing
//	           words
//	t:a>b>c    three concepts in order within tripleSpan concept-bearing
//	           words
//	f:id       a frame (frames.go) that fired
//
// Words without a concept are skipped when counting spans, so "i took like
// a whole bunch of my pills" still pairs "took" with "med".
const (
	pairSpan   = 4
	tripleSpan = 3
)

// extractor holds the reusable buffers of one feature extraction.
type extractor struct {
	canon []byte
	toks  []string
	fixed []string  // toks after repairTokens
	sq    []string  // fixed, squashed
	cur   []string  // the tokens of this run: what every feature reads
	infos []tokInfo // cur's word-table entries (lookupWords)
	// given, when set, holds the entries of the toks the next prepare is
	// called with (Detector.otherTiers has them already)
	given []tokInfo
	hash  func(family int, h uint64) // see run
	known *vocab                     // the model's vocabulary (repair.go)
	// scoring state for model.windowScores
	feats   []featHash
	sum     [2]float32
	weights *[numFamilies]weightTable
	sets    []cset
	pos     []int // indices of tokens with concepts
	buf     []byte
	fired   []string // ids of the frames that fired (the model's f: features)
	// frame is the best frame match of the last run; context reports
	// fiction, news, idiom, code, cooking or sport words in it.
	frame    frameHit
	context  bool
	everyday bool // see everydaySet
	personal bool // see personalSet
	// cues for DetectTurn: actSet and timeSet words
	actCue, timeCue bool
	risk            bool // see riskSet
	riskNotDo       bool // a risk concept other than "do it"
	request         bool // see requestSet
	past            bool // a past-time phrase or a year
	riskStrong      bool // a risk concept outside weakRiskSet
	riskNotEat      bool // a risk concept other than plain food words (eatSet)
	everydayStrict  bool // see strictEverydaySet
	short           bool // at most shortFragment tokens
}

func (x *extractor) flags() ctxFlags {
	return ctxFlags{x.context, x.everyday, x.personal, x.risk, x.past, x.riskNotDo, x.request, x.riskStrong, x.everydayStrict, x.short, x.riskNotEat}
}

// run calls emit once per feature occurrence of text (repeats are counted).
// The slice passed to emit is only valid during the call. toks, when not
// nil, is text already normalised, repaired and squashed by the caller
// (Detector.analyze), else run does it. With x.hash set, features are
// delivered as hashes to x.hash instead (emit is unused), which saves
// building the character n-grams.
func (x *extractor) run(text string, toks []string, nmin, nmax int, emit func([]byte)) {
	x.prepare(text, toks)
	x.features(text, nmin, nmax, emit)
}

// prepare tokenises text (unless toks is given), tags concepts, sets the
// context flags and matches the frames: everything but the model's
// features.
func (x *extractor) prepare(text string, toks []string) {
	given := x.given
	x.given = nil // they were for the caller's toks, this call's
	if toks == nil {
		given = nil
		toks = normalize(text, x.toks[:0])
		x.toks = toks
		x.fixed = repairTokens(toks, x.fixed, x.known)
		x.fixed = germanOrder(x.fixed)
		x.sq = squashAll(x.fixed, x.sq)
		toks = x.sq
	}
	x.cur = toks
	if cap(x.sets) < len(toks) {
		x.sets = make([]cset, len(toks))
	}
	b := x.sets[:len(toks)]
	x.sets = b
	infos := given
	if len(infos) != len(toks) {
		x.infos = lookupWords(toks, x.infos)
		infos = x.infos
	}
	tagWords(toks, infos, b)
	x.pos = x.pos[:0]
	for i, v := range b {
		if !v.empty() {
			x.pos = append(x.pos, i)
		}
	}
	x.context, x.everyday, x.personal, x.actCue, x.timeCue, x.risk = false, false, false, false, false, false
	x.riskNotDo, x.request, x.riskStrong, x.everydayStrict, x.riskNotEat = false, false, false, false, false
	x.short = len(toks) <= shortFragment
	x.past = false
	for _, c := range b {
		x.past = x.past || c.has(pastID)
		x.context = x.context || c.any(contextSet)
		x.everyday = x.everyday || c.any(everydaySet) && !c.has(notforID)
		x.everydayStrict = x.everydayStrict || c.any(strictEverydaySet) && !c.has(notforID)
		x.personal = x.personal || c.any(personalSet)
		x.actCue = x.actCue || c.any(actSet)
		x.timeCue = x.timeCue || c.any(timeSet)
		x.risk = x.risk || c.any(riskSet)
		x.riskNotDo = x.riskNotDo || c.any(riskNotDoSet)
		x.request = x.request || c.any(requestSet)
		x.riskStrong = x.riskStrong || c.any(riskStrongSet)
		x.riskNotEat = x.riskNotEat || c.any(riskNotEatSet)
	}
	x.fired = x.fired[:0]
	x.frame = matchFrames(x.cur, x.sets, func(id string) { x.fired = append(x.fired, id) })
}

// features emits the model's features of the prepared text.
func (x *extractor) features(text string, nmin, nmax int, emit func([]byte)) {
	x.canon = modelCanon(text, x.canon)
	c := x.canon
	if x.hash != nil || x.weights != nil {
		for i := range c {
			h := uint64(gramG)
			for n := 1; n <= nmax && i+n <= len(c); n++ {
				h ^= uint64(c[i+n-1])
				h *= fnvPrime
				if n >= nmin {
					x.emitHash(famGram, h)
				}
			}
		}
		x.hashWordFeatures()
		return
	} else {
		for i := range c {
			for n := nmin; n <= nmax && i+n <= len(c); n++ {
				x.buf = append(append(x.buf[:0], 'g', ':'), c[i:i+n]...)
				emit(x.buf)
			}
		}
	}
	prev := "<"
	for _, t := range x.cur {
		x.buf = append(append(x.buf[:0], 'w', ':'), t...)
		emit(x.buf)
		x.buf = append(append(append(append(x.buf[:0], 'b', ':'), prev...), ' '), t...)
		emit(x.buf)
		prev = t
	}
	x.buf = append(append(append(x.buf[:0], 'b', ':'), prev...), ' ', '>')
	emit(x.buf)
	x.conceptFeatures(emit)
	for _, id := range x.fired {
		x.buf = append(append(x.buf[:0], 'f', ':'), id...)
		emit(x.buf)
	}
}

// hashWordFeatures delivers the word, bigram, concept and frame features
// to x.hash as features would emit them, in the same order (the weights'
// sum is a float sum), hashing each feature's bytes where they are instead
// of copying them into one buffer first. TestFeatureHashes checks the two
// agree.
func (x *extractor) hashWordFeatures() {
	prev := "<"
	for _, t := range x.cur {
		x.emitHash(famWord, fnvString(gramW, t))
		x.emitHash(famWord, fnvString(fnvByte(fnvString(gramB, prev), ' '), t))
		prev = t
	}
	x.emitHash(famWord, fnvByte(fnvByte(fnvString(gramB, prev), ' '), '>'))
	b, names, ch := x.sets, concepts.names, conceptHashes
	for _, p := range x.pos {
		b[p].each(func(c int) { x.emitHash(famConcept, ch[c].c) })
	}
	pos := x.pos
	for i := range pos {
		for j := i + 1; j < len(pos) && j <= i+pairSpan; j++ {
			b[pos[i]].each(func(u int) {
				b[pos[j]].each(func(v int) { x.emitHash(famConcept, fnvString(ch[u].pair, names[v])) })
			})
		}
		for j := i + 1; j < len(pos) && j < i+tripleSpan; j++ {
			for k := j + 1; k < len(pos) && k <= i+tripleSpan; k++ {
				b[pos[i]].each(func(u int) {
					b[pos[j]].each(func(v int) {
						uv := fnvByte(fnvString(ch[u].triple, names[v]), '>')
						b[pos[k]].each(func(w int) { x.emitHash(famConcept, fnvString(uv, names[w])) })
					})
				})
			}
		}
	}
	for _, id := range x.fired {
		x.emitHash(famWord, fnvString(gramF, id))
	}
}

// conceptHash holds, per concept, the FNV-1a state of its features'
// fixed starts: all of "c:name", and "p:name>" and "t:name>" for the
// pairs and triples it begins.
type conceptHash struct{ c, pair, triple uint64 }

var conceptHashes = func() []conceptHash {
	hs := make([]conceptHash, len(concepts.names))
	for i, n := range concepts.names {
		hs[i] = conceptHash{
			c:      fnvString(fnvString(fnvOffset, "c:"), n),
			pair:   fnvByte(fnvString(fnvString(fnvOffset, "p:"), n), '>'),
			triple: fnvByte(fnvString(fnvString(fnvOffset, "t:"), n), '>'),
		}
	}
	return hs
}()

// FNV-1a states after the prefix of each word feature family.
var (
	gramW = fnvString(fnvOffset, "w:")
	gramB = fnvString(fnvOffset, "b:")
	gramF = fnvString(fnvOffset, "f:")
)

// fnvString continues the FNV-1a hash h over s (gramHash is
// fnvString(fnvOffset, g)).
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func fnvByte(h uint64, c byte) uint64 {
	h ^= uint64(c)
	return h * fnvPrime
}

func (x *extractor) conceptFeatures(emit func([]byte)) {
	b := x.sets
	names := concepts.names
	for _, p := range x.pos {
		b[p].each(func(c int) {
			x.buf = append(append(x.buf[:0], 'c', ':'), names[c]...)
			emit(x.buf)
		})
	}
	pos := x.pos
	for i := range pos {
		for j := i + 1; j < len(pos) && j <= i+pairSpan; j++ {
			b[pos[i]].each(func(u int) {
				b[pos[j]].each(func(v int) {
					x.buf = append(append(append(append(x.buf[:0], 'p', ':'), names[u]...), '>'), names[v]...)
					emit(x.buf)
				})
			})
		}
		for j := i + 1; j < len(pos) && j < i+tripleSpan; j++ {
			for k := j + 1; k < len(pos) && k <= i+tripleSpan; k++ {
				x.triples(b[pos[i]], b[pos[j]], b[pos[k]], emit)
			}
		}
	}
}

func (x *extractor) triples(a, b, c cset, emit func([]byte)) {
	names := concepts.names
	a.each(func(u int) {
		b.each(func(v int) {
			c.each(func(w int) {
				x.buf = append(append(x.buf[:0], 't', ':'), names[u]...)
				x.buf = append(append(x.buf, '>'), names[v]...)
				x.buf = append(append(x.buf, '>'), names[w]...)
				emit(x.buf)
			})
		})
	})
}

// contextSet: words that put an utterance in a context the phrase rules
// cannot see (see Detector.analyze): the rules count one level less.
var contextSet, _ = conceptSet("fiction|news|idiom")

// everydaySet: words of an ordinary activity or a mild mood ("early
// tomorrow", "camping", "a bit lonely"): the rules alone show no card.
var everydaySet, _ = conceptSet("benign|mundane|temporary|wakeother|treat|routine|mild|safe|code|cook|sport|recovery|" +
	"safekeep|illness|seeyou|howtohelp|route")

// strictEverydaySet: everydaySet without route, the everyday concepts that count one level less for the
// model but never clear a phrase rule ("on my way home").
var strictEverydaySet = everydaySet.without(mustSet("route"))

// riskSet: the concepts of danger. The model alone may not raise an
// utterance with none of them ("i think i'm coming down with a cold"):
// its weights are evidence only beside a word of danger. The plain "end"
// concept (stop, out, over, done, finished) is not one: "please stop
// talking and listen to me", "just thinking out loud" are ordinary speech;
// "end it" and its kin (endit) are.
var riskSet, _ = conceptSet("die|kill|suicide|selfharm|cutword|selfkill|otherkill|otherharm|harmdone|distress|hopeless|" +
	"burden|med|weapon|rope|noose|poison|fumes|perch|edge|rail|height|jump|blood|overdosed|hit|threat|threatverb|" +
	"follow|followme|victim|touch|bruises|locked|hidingplace|eat|substance|control|grief|attempt|farewell|goodbye|gone|" +
	"life|sleep|nowake|wake|betterdead|deathgood|hopedie|notworth|neverborn|indifferent|keepinghere|toomuch|" +
	"lethal|painful|way|tall|into|infront|crash|breathe|enclosed|gather|rehearse|giveaway|care|after|final|resolve|" +
	"knowhow|do|fear|help|unreachable|breakin|outside|neck|body|platform|balcony|water|tracks|" +
	"rehome|pretext|unnoticed|symptom|unlit|unconscious|secret|expose|intrude|thenight|noburden|burdenp|hopelessp|" +
	"edbehav|lossctl|hospital|lastfelt|cantlive|shouldbeme|joinlost|plan|ruin|survived|acquire|scout|distressp|blackout|relapse|neglect|missme|noexist|allineed|whyidid|over|stored|addicted|pretextneg|endit|enough|dislike|triedbefore")

// riskNotDoSet is riskSet without "do it": said as a request to the
// listener ("please do it for me", requestSet) it is no danger word, and
// the model alone may not raise such an utterance.
var riskNotDoSet = riskSet.without(doSet)

var doSet, _ = conceptSet("do")

// weakRiskSet: risk concepts that are everyday words more often than not
// ("got", "eye", "way", "over", "the edge", "after"). A short utterance
// whose only words of danger are these is a fragment a recogniser heard
// ("and i got my eye"), and the model alone may not raise it.
var weakRiskSet, _ = conceptSet("gather|body|way|over|stored|into|outside|help|symptom|neck|water|tracks|platform|enough")

var riskStrongSet = riskSet.without(weakRiskSet)

// eatSet: plain words of food and eating. They are danger words only when
// the utterance is about the speaker or someone they know ("i haven't eaten
// in days", "my sister throws up after meals"); a recogniser's "if it
// doesn't want you to steve's people food" from a meeting is about no one,
// and the model alone may not raise it on them. Eating-disorder behaviour
// (edbehav) stays a danger word on its own.
var eatSet, _ = conceptSet("eat")

var riskNotEatSet = riskSet.without(eatSet)

// shortFragment is the length (in tokens) up to which an utterance needs a
// strong word of danger for the model alone to raise it.
const shortFragment = 6

// requestSet: a request addressed to the listener.
var requestSet, _ = conceptSet("request")

// personalSet: words that tie an utterance to the speaker or someone they
// know; a third-party rule match without them is narration ("the old man
// walked to the edge of the cliff").
var personalSet, _ = conceptSet("self|my|me|friend|family|partner|child|other")

// gramG is the FNV-1a state after "g:", the start of every character n-gram
// feature.
var gramG = gramHash([]byte("g:"))

// emitHash delivers one feature's hash: while scoring (x.weights set) it
// adds the feature's weights to x.sum, else it calls x.hash. (A direct
// call: a method value in x.hash would be allocated per window.)
func (x *extractor) emitHash(family int, h uint64) {
	if x.weights == nil {
		x.hash(family, h)
		return
	}
	if x.weights[family].mayHave(h) {
		x.feats = append(x.feats, featHash{h, uint8(family)})
	}
}

// featHash is a feature the filter let through, to look up.
type featHash struct {
	h   uint64
	fam uint8
}

// actSet and timeSet: concept cues DetectTurn combines with earlier turns
// ("i bought a rope" … "i'm going to use it tonight").
var (
	actSet, _  = conceptSet("farewell|goodbye|do|resolve|jump|athand|use|took")
	timeSet, _ = conceptSet("now|soon")
)
