package safety

import (
	"fmt"
	"strings"
	"sync"
)

// DefaultContextTurns is how many earlier user turns DetectTurn reads.
const DefaultContextTurns = 6

// Result is the local detector's verdict on one utterance. Reason is the id
// of the rule that decided the level (e.g. "en.crisis.kill_self",
// "en.crisis.kill_self/negated", "ctx.means_time"), never user text, so it
// may be logged and counted. Lang is the language of that rule, or a
// stop-word guess ("en", "es", "fr", "de") when nothing fired.
type Result struct {
	Level  Level  `json:"level"`
	Reason string `json:"reason,omitempty"`
	Lang   string `json:"lang,omitempty"`
}

// Detector is the local crisis-language detector: the fallback when the
// engine is down and the second opinion when it is up. Every utterance is
// normalised (normalize.go), repaired (repair.go: split and merged words,
// typos of danger words) and squashed (held letters), then read by three
// tiers, the highest level winning (analyze):
//
//   - the phrase rules (rules.go, lexicon.go): high-precision patterns; a
//     crisis match is lowered to elevated, never cleared, when negated,
//     past or about someone else; phrases negative in themselves ("i do not
//     want to live") are immune; they count less in a context the concept
//     table recognises (fiction, news, idioms, everyday activities);
//   - the frames (frames.go): compositional rules over multilingual concept
//     classes (concepts.go), e.g. "took & med & amount", "follow & me",
//     "fumes & enclosed", with vetoes and the same lowering;
//   - the model (model.go, features.go, train.go): two logistic heads over
//     character n-grams, words, concept pairs and triples and the frames
//     that fired, weights in the embedded model.txt; it may not raise an
//     utterance without a word of danger, and counts one level less in an
//     everyday context.
//
// A trailing laugh ("… lol") caps a crisis at elevated. Reasons are ids
// ("en.crisis.kill_self", "frame.took_meds/past", "model.elevated",
// "ctx.turns"), never user text. A Detector is immutable and safe for
// concurrent use.
type Detector struct {
	rules    []compiledRule
	byWord   map[string][]cand
	byPrefix *prefixIndex[cand]
	// builtin: the rules are the built-in table (builtinRules), whose
	// byWord entries the word table holds
	builtin      bool
	contextTurns int
	bufs         sync.Pool
	infos        sync.Pool // *[]tokInfo
	extractors   sync.Pool
	model        *model
	compileErr   error
}

type compiledRule struct {
	def  *ruleDef
	pats []pattern
	// firstPerson per pattern: the pattern itself names the speaker ("i",
	// "myself", "mich" …), so a third-party subject nearby cannot lower it.
	firstPerson []bool
}

type cand struct{ rule, pat int }

var firstPersonWords = map[string]bool{
	"i": true, "myself": true, "my": true, "me": true, "je": true, "moi": true, "ich": true, "mich": true,
	"mir": true, "yo": true, "mi": true, "meinem": true, "mein": true, "mes": true, "ma": true,
}

// NewDetector returns a detector with the built-in rules and DefaultContextTurns.
func NewDetector() *Detector {
	d, _ := newDetector(ruleDefs, DefaultContextTurns)
	return d
}

// NewDetectorConfig returns a detector using cfg.ContextTurns; cfg must be valid.
func NewDetectorConfig(cfg Config) (*Detector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newDetector(ruleDefs, cfg.ContextTurns)
}

// NewDetectorModel returns a detector with the built-in rules and the model
// tier read from modelText (the model.txt format) instead of the embedded
// one: for scoring a retrained model before it is committed.
func NewDetectorModel(modelText string) (*Detector, error) {
	m, err := parseModel(modelText)
	if err != nil {
		return nil, err
	}
	d, err := newDetector(ruleDefs, DefaultContextTurns)
	d.model = m
	return d, err
}

// newDetector compiles defs. A malformed pattern is skipped and reported in
// the error (and by Err) rather than aborting: the remaining rules still
// protect people; TestRulesCompile keeps the built-in table clean.
func newDetector(defs []ruleDef, contextTurns int) (*Detector, error) {
	d := &Detector{contextTurns: contextTurns}
	d.bufs.New = func() any { s := make([]string, 0, 64); return &s }
	d.infos.New = func() any { s := make([]tokInfo, 0, 64); return &s }
	d.extractors.New = func() any { return new(extractor) }
	var errs []error
	if framesErr != nil {
		errs = append(errs, framesErr)
	}
	if m, err := defaultModel(); err != nil {
		errs = append(errs, err) // the rules still protect people
	} else {
		d.model = m
	}
	wordTable() // built here, not in the first utterance's time
	var rs *ruleSet
	if len(defs) > 0 && len(defs) == len(ruleDefs) && &defs[0] == &ruleDefs[0] {
		rs, d.builtin = builtinRules(), true
	} else {
		rs = compileRules(defs)
	}
	d.rules, d.byWord, d.byPrefix = rs.rules, rs.byWord, &rs.byPrefix
	errs = append(errs, rs.errs...)
	if len(errs) > 0 {
		d.compileErr = fmt.Errorf("safety: detector rules: %v", errs)
	}
	return d, d.compileErr
}

// ruleSet is a compiled rule table and its word and prefix indexes.
type ruleSet struct {
	rules    []compiledRule
	byWord   map[string][]cand
	byPrefix prefixIndex[cand]
	errs     []error
}

// builtinRules is ruleDefs compiled once: every detector with the
// built-in rules shares it, and the word table holds its byWord entries.
var builtinRules = sync.OnceValue(func() *ruleSet { return compileRules(ruleDefs) })

// compileRules compiles defs; a malformed pattern is skipped and reported
// in errs.
func compileRules(defs []ruleDef) *ruleSet {
	d := &ruleSet{byWord: map[string][]cand{}}
	var errs []error
	for ri := range defs {
		def := &defs[ri]
		cr := compiledRule{def: def}
		for _, src := range def.pats {
			p, err := compilePattern(src)
			if err != nil {
				errs = append(errs, fmt.Errorf("rule %s: %w", def.id, err))
				continue
			}
			fp := false
			for w := range p.words {
				if firstPersonWords[w] {
					fp = true
				}
			}
			pi := len(cr.pats)
			cr.pats = append(cr.pats, p)
			cr.firstPerson = append(cr.firstPerson, fp)
			words, prefixes := p.firstKeys()
			c := cand{rule: len(d.rules), pat: pi}
			for _, w := range words {
				d.byWord[w] = append(d.byWord[w], c)
			}
			for _, pr := range prefixes {
				d.byPrefix.add(pr, c)
			}
		}
		d.rules = append(d.rules, cr)
	}
	d.errs = errs
	return d
}

// Err reports rules that failed to compile and were skipped (nil for the
// built-in table).
func (d *Detector) Err() error { return d.compileErr }

// analysis is everything the detector learns from one utterance.
type analysis struct {
	level              Level
	reason, lang       string
	means, place, time bool
	act                bool
	// strongMeans: stockpiled means or a dangerous place, as opposed to
	// merely owning a knife or a rope.
	strongMeans bool
	// ordinary: the concept table sees an everyday, fiction, news, idiom,
	// code, cooking or sport context.
	ordinary bool
	held     negHold // negatives.go: what a negative explanation lowered
}

// Detect classifies one utterance on its own.
func (d *Detector) Detect(text string) Result {
	a := d.analyze(text)
	return Result{Level: a.level, Reason: a.reason, Lang: a.lang}
}

// DetectTurn classifies the current utterance in the light of the last
// ContextTurns user turns (oldest first). Context can only raise the level:
//
//   - stockpiled means, a dangerous place or a crisis in recent turns plus
//     a time or act cue now ("i have pills saved up" … "tonight"), or any
//     means plus an act cue ("i have a rope" … "i'm going to use it") →
//     crisis ("ctx.means_time");
//   - distress in recent turns plus an act cue now ("i am going to do it",
//     "goodbye") → crisis ("ctx.act_after_distress");
//   - a crisis in recent turns keeps any later turn at least elevated
//     ("ctx.recent_crisis"), so help stays on screen;
//   - the last turn and this one read together reach a level neither
//     reaches alone ("ctx.turns").
func (d *Detector) DetectTurn(history []string, text string) Result {
	cur := d.analyze(text)
	res := Result{Level: cur.level, Reason: cur.reason, Lang: cur.lang}
	if res.Level == LevelCrisis || d.contextTurns == 0 {
		return res
	}
	if n := len(history); n > d.contextTurns {
		history = history[n-d.contextTurns:]
	}
	var hmax, last Level
	hmeans, hstrong := false, false
	for _, h := range history {
		a := d.analyzeTiers(h, false)
		hmax = MaxLevel(hmax, a.level)
		// A knife bought for the kitchen is not a means.
		hmeans = hmeans || a.means && !a.ordinary
		hstrong = hstrong || a.strongMeans && !a.ordinary
		last = a.level
	}
	res = cur.held.restore(res, hmax >= LevelElevated || hmeans)
	switch {
	case (hstrong || hmax == LevelCrisis) && (cur.time || cur.act), hmeans && cur.act:
		res.Level, res.Reason = LevelCrisis, "ctx.means_time"
	case hmax >= LevelElevated && cur.act:
		res.Level, res.Reason = LevelCrisis, "ctx.act_after_distress"
	case hmax == LevelCrisis && res.Level < LevelElevated:
		res.Level, res.Reason = LevelElevated, "ctx.recent_crisis"
	}
	if res.Level < LevelCrisis && len(history) > 0 {
		// The last turn and this one read as one message: the frames and
		// the model see cues split over two turns ("i've got the pills
		// here" … "all of them, tonight"). Only what neither turn shows on
		// its own counts.
		// The model is left out here: it was trained on single turns.
		j := d.analyze(history[len(history)-1] + " " + text)
		if j.level > res.Level && j.level > last && !strings.HasPrefix(j.reason, "model.") {
			res.Level, res.Reason = j.level, "ctx.turns"
		}
	}
	return res
}

// analyze combines the tiers on one utterance: the phrase rules, the
// frames and the model each give a level and the highest wins. The rules'
// negation, past and third-party lowering never goes below elevated. The
// rules cannot see context, so with words the concept table knows they
// count less: in fiction, news, idiom, code, cooking or sport a crisis rule
// counts as elevated and an elevated one as nothing ("hamlet considers
// suicide"); with words of an ordinary activity or a mild mood ("i don't
// want to wake up early tomorrow", "a bit lonely tonight") they count for
// nothing. The frames and the model, which do see context, still raise. A trailing laugh ("… lol") caps a crisis at elevated: a
// card still shows, the emergency framing does not.
func (d *Detector) analyze(text string) analysis { return d.analyzeTiers(text, true) }

// analyzeTiers is analyze, with the model tier only when withModel:
// DetectTurn reads earlier turns without it (their own verdicts, model
// included, were given when they were the current turn).
func (d *Detector) analyzeTiers(text string, withModel bool) analysis {
	core, laugh := laughTail(text)
	bp := d.bufs.Get().(*[]string)
	toks := normalize(core, *bp)
	defer func() {
		clear(toks)
		*bp = toks[:0]
		d.bufs.Put(bp)
	}()
	var known *vocab
	if d.model != nil {
		known = d.model.lex
	}
	fp := d.bufs.Get().(*[]string)
	fixed := repairTokens(toks, *fp, known)
	fixed = germanOrder(fixed)
	fixed = repeatCoordinatedVerb(fixed)
	defer func() {
		clear(fixed)
		*fp = fixed[:0]
		d.bufs.Put(fp)
	}()
	sq := d.bufs.Get().(*[]string)
	squashedToks := squashAll(fixed, *sq)
	defer func() {
		clear(squashedToks)
		*sq = squashedToks[:0]
		d.bufs.Put(sq)
	}()
	ip := d.infos.Get().(*[]tokInfo)
	infos := lookupWords(squashedToks, *ip)
	defer func() {
		clear(infos)
		*ip = infos[:0]
		d.infos.Put(ip)
	}()
	a := d.analyzeRulesWith(squashedToks, infos)
	t := d.otherTiersWith(core, squashedToks, infos, withModel)
	// Cues for DetectTurn from the concept table, in every language: a
	// farewell, "do it", a jump or means at hand is an act; now or soon a
	// time.
	a.act = a.act || t.act
	a.time = a.time || t.time
	a.ordinary = t.ctx.everyday || t.ctx.context
	narr := narratedWith(squashedToks, infos, t.ctx.past)
	switch {
	case a.level == LevelNone:
	case t.ctx.everydayStrict && a.level == LevelCrisis && t.ctx.personal &&
		(strings.HasSuffix(a.reason, ".kill_self") || strings.HasSuffix(a.reason, ".plan")):
		// "i think about shooting myself every night", "the gym was fine
		// but i'm thinking about suicide again": an everyday word beside a
		// first-person phrase of killing oneself or a plan does not
		// explain it away (negatives.go explains what does: "me mato a
		// estudiar"), so elevated, never none. Other phrase rules beside
		// an everyday word ("i don't want to wake up early tomorrow") are
		// cleared as before.
		a.level, a.reason = LevelElevated, baseReason(a.reason)+"/everyday"
	case t.ctx.everydayStrict, strings.HasSuffix(a.reason, "/third_party") && !t.ctx.personal,
		// "the poet died by suicide in 1963": someone else, no one the
		// speaker knows, in the past, is history
		strings.Contains(a.reason, "third_party") && !t.ctx.personal && t.ctx.past,
		// "hitler killed himself in 1945", "she walked to the edge of the
		// cliff": told of someone else, in the past, with no word of the
		// speaker or the listener and nothing happening now
		strings.Contains(a.reason, "third_party") && narr,
		t.ctx.context && !t.ctx.personal: // "in the game you have to jump off the cliff"
		a.level, a.reason = LevelNone, ""
	case t.ctx.context && a.level == LevelCrisis:
		a.level, a.reason = LevelElevated, baseReason(a.reason)+"/context"
	case t.ctx.context:
		a.level, a.reason = LevelNone, ""
	}
	if t.frame.level > a.level && !(narr && t.frame.level == LevelElevated) {
		// a narration raises only by a crisis frame ("she has taken all
		// the pills" is not narrated: no past form)
		a.level, a.reason = t.frame.level, t.frame.reason
	}
	if m := t.model; m > a.level && t.ctx.modelMayRaise() {
		if t.ctx.everyday || t.ctx.context {
			// "i'm going to take my medicine now", "the radio said a man was
			// stabbed": the model counts one level less
			m--
		}
		if narr {
			m = LevelNone // a narration of the past is raised by rules and frames, not by the model
		}
		if m > a.level {
			a.level, a.reason = m, t.modelReason
			if m < t.model {
				a.reason = baseReason(t.modelReason) + "/everyday"
			}
		}
	}
	a = d.explainNegatives(core, squashedToks, a, laugh, withModel)
	if laugh && a.level == LevelCrisis {
		a.level, a.reason = LevelElevated, baseReason(a.reason)+"/joking"
	}
	return a
}

func baseReason(r string) string {
	if i := strings.IndexByte(r, '/'); i >= 0 {
		return r[:i]
	}
	return r
}

// tierResult is what the frame and model tiers found in one utterance.
type tierResult struct {
	frame       frameHit
	model       Level
	modelReason string
	ctx         ctxFlags
	act, time   bool // concept cues for DetectTurn
}

// otherTiers runs the frames and, when the detector has one, the model.
func (d *Detector) otherTiers(text string, toks []string, withModel bool) tierResult {
	return d.otherTiersWith(text, toks, nil, withModel)
}

// otherTiersWith is otherTiers for tokens whose word-table entries the
// caller has (nil: looked up here).
func (d *Detector) otherTiersWith(text string, toks []string, infos []tokInfo, withModel bool) tierResult {
	x := d.extractors.Get().(*extractor)
	defer d.extractors.Put(x)
	x.given = infos // toks' entries, for prepare
	defer func() { x.given = nil }()
	var t tierResult
	if d.model == nil || !withModel {
		if d.model != nil {
			x.known = d.model.lex
		}
		x.run(text, toks, 2, 2, func([]byte) {})
		t.frame, t.ctx = x.frame, x.flags()
		t.act, t.time = x.actCue, x.timeCue
		return t
	}
	x.known = d.model.lex
	sc, fh, ctx := d.model.scores(text, toks, x)
	t.frame, t.ctx = fh, ctx
	t.act, t.time = x.actCue, x.timeCue // of the last window
	t.model, t.modelReason = d.model.level(sc)
	return t
}

// analyzeRules runs the phrase rules and the lexicon over normalised,
// repaired and squashed tokens.
func (d *Detector) analyzeRules(toks []string) analysis {
	ip := d.infos.Get().(*[]tokInfo)
	infos := lookupWords(toks, *ip)
	a := d.analyzeRulesWith(toks, infos)
	clear(infos)
	*ip = infos[:0]
	d.infos.Put(ip)
	return a
}

// analyzeRulesWith is analyzeRules for tokens whose word-table entries
// (lookupWords) the caller has.
func (d *Detector) analyzeRulesWith(toks []string, infos []tokInfo) analysis {
	var a analysis
	hit := func(c cand, start, end int) {
		cr := &d.rules[c.rule]
		def := cr.def
		if def.flags&fTime != 0 {
			a.time = true
		}
		if def.flags&fAct != 0 && !negated(toks, start, end, &cr.pats[c.pat]) {
			a.act = true // "i would never do it" is no act cue
		}
		if def.flags&fMeans != 0 {
			a.means = true
		}
		if def.flags&fPlace != 0 {
			a.place = true
		}
		if def.flags&fMeans != 0 && (def.level >= LevelElevated || def.flags&fPlace != 0) {
			a.strongMeans = true
		}
		lvl, reason := def.level, def.id
		if lvl == LevelCrisis && def.flags&fImmune == 0 {
			p := &cr.pats[c.pat]
			switch {
			case negated(toks, start, end, p):
				lvl, reason = LevelElevated, def.id+"/negated"
			case def.flags&fNoPast == 0 && past(toks, start, end, p):
				lvl, reason = LevelElevated, def.id+"/past"
			case !cr.firstPerson[c.pat] && thirdParty(toks, start):
				lvl, reason = LevelElevated, def.id+"/third_party"
			}
		}
		if lvl > a.level {
			a.level, a.reason, a.lang = lvl, reason, def.lang
		}
	}
	sig := d.signature(toks, infos)
	for i, t := range toks {
		var cs []cand
		switch {
		case !d.builtin:
			cs = d.byWord[t]
		case infos[i].bits&bHasRules != 0:
			cs = infos[i].w.rules
		}
		for _, c := range cs {
			if p := &d.rules[c.rule].pats[c.pat]; p.mayMatch(&sig) {
				if end := p.match(toks, i); end >= 0 {
					hit(c, i, end)
				}
			}
		}
		if d.builtin && infos[i].w != nil {
			// the word's prefix candidates, found when the table was built
			if infos[i].bits&bHasPrefixed == 0 {
				continue
			}
			for _, c := range infos[i].w.prefixed {
				if end := d.rules[c.rule].pats[c.pat].match(toks, i); end >= 0 {
					hit(c, i, end)
				}
			}
			continue
		}
		for _, pc := range d.byPrefix.candidates(t) {
			if len(t) >= len(pc.prefix) && t[:len(pc.prefix)] == pc.prefix {
				if end := d.rules[pc.c.rule].pats[pc.c.pat].match(toks, i); end >= 0 {
					hit(pc.c, i, end)
				}
			}
		}
	}
	a.withCues(toks, infos)
	return a
}

// signature is the utterance's token signature (pattern.go), from the word
// table's bits where the built-in rules run.
func (d *Detector) signature(toks []string, infos []tokInfo) tokSig {
	if !d.builtin {
		return sigOf(toks)
	}
	var sig tokSig
	for i, ti := range infos {
		if ti.w != nil {
			b := ti.w.sig
			sig[b>>6] |= 1 << (b & 63)
		} else {
			sig.add(toks[i])
		}
	}
	return sig
}

// withCues adds the lexicon's level and the rules' act, time and means cues
// taken together to the rules' analysis, and its language.
func (a *analysis) withCues(toks []string, infos []tokInfo) {
	if a.level < LevelCrisis {
		if l, r := lexiconWith(toks, infos); l > a.level {
			a.level, a.reason, a.lang = l, r, ""
		}
	}
	if a.level == LevelElevated && a.act {
		// Distress and an act cue in one breath: "nobody will care when i'm
		// dead so i'm doing it".
		a.level, a.reason = LevelCrisis, "ctx.act_after_distress"
	}
	if a.level < LevelCrisis && a.means && (a.act || a.time && (a.level >= LevelElevated || a.place)) {
		a.level, a.reason = LevelCrisis, "ctx.means_time"
		if a.lang == "" {
			_, a.lang = germanishLangInfos(infos)
		}
	}
	if a.lang == "" {
		_, a.lang = germanishLangInfos(infos)
	}
}

var negators = map[string]bool{
	"not": true, "never": true, "no": true, "nunca": true, "jamas": true, "pas": true, "jamais": true,
	"nicht": true, "nie": true, "niemals": true, "kein": true, "keine": true,
}

var beliefVerbs = map[string]bool{"think": true, "believe": true, "feel": true, "guess": true, "suppose": true, "reckon": true}

// pseudoNegation: "not going to lie", "not joking" negate nothing.
// "can't stop thinking about …", "no puedo dejar de pensar en …" negate
// the stopping, not the thought.
var pseudoNegation = map[string]bool{"lie": true, "lying": true, "joking": true, "kidding": true, "joke": true, "gonna": true,
	"stop": true, "dejar": true, "parar": true, "arreter": true, "aufhoren": true}

var clauseBoundary = map[string]bool{
	clauseMark: true, "i": true, "but": true, "and": true, "because": true, "cause": true, "or": true, "then": true,
	"yo": true, "pero": true, "y": true, "porque": true, "je": true, "mais": true, "et": true, "parce": true,
	"ich": true, "aber": true, "und": true, "weil": true, "denn": true,
}

// negated reports a negator up to three words before the match in the same
// clause, or one a gap absorbed inside the match ("ich werde mich nicht
// umbringen").
func negated(toks []string, start, end int, p *pattern) bool {
	for k := start - 1; k >= 0 && k >= start-3; k-- {
		t := toks[k]
		if clauseBoundary[t] {
			// "i do not think i will hurt myself": the negation sits on the
			// verb of belief before the clause's own subject.
			if t == "i" && k >= 2 && beliefVerbs[toks[k-1]] && negators[toks[k-2]] {
				return true
			}
			break
		}
		if negators[t] && !isPseudoNeg(toks, k) && negatesHere(toks, k, start) {
			return true
		}
	}
	for k := start; k < end; k++ {
		if negators[toks[k]] && !p.words[toks[k]] && !isPseudoNeg(toks, k) {
			return true
		}
	}
	return false
}

// noScope are the words a Spanish or English "no" negates when it sits
// between "no" and the match ("no voy a matarme", "no quiero"); otherwise
// "no" is an interjection or negates another verb ("ya no aguanto, me quiero
// quitar la vida").
var noScope = map[string]bool{
	"me": true, "te": true, "se": true, "lo": true, "voy": true, "quiero": true, "pienso": true, "vamos": true,
	"going": true, "want": true, "will": true,
}

func negatesHere(toks []string, k, start int) bool {
	if toks[k] != "no" {
		return true
	}
	return k+1 == start || noScope[toks[k+1]]
}

func isPseudoNeg(toks []string, k int) bool {
	for j := k + 1; j < len(toks) && j <= k+3; j++ {
		if pseudoNegation[toks[j]] {
			return true
		}
	}
	return false
}

var pastBefore = map[string]bool{
	"tried": true, "attempted": true, "used": true, "survived": true, "wanted": true, "intente": true,
	"intento": true, "tentative": true, "tente": true, "versucht": true, "fruher": true, "damals": true,
}

// recentWords: an attempt "yesterday" or "last night" is not a past
// attempt but an act just done.
// narratedWith: toks tell of someone else in the past — a third person or a
// year, a past form, no word of the speaker or the listener, no cue of
// now, and either a year, a past time ("years ago") or the length of
// prose (ten words or more): "hitler killed himself in 1945", "she walked
// to the edge of the cliff and watched the gulls". A short report with no
// subject ("just swallowed everything") or about someone now ("he took a
// bunch of pills") is not narrated. The words are squashed, as the rules
// read them; infos are their word-table entries (wordSetBits).
func narratedWith(toks []string, infos []tokInfo, pastTime bool) bool {
	pastTold, other, year := false, false, false
	for i, t := range toks {
		b := infos[i].bits
		if b&(bSpeaker|bNow) != 0 {
			return false
		}
		year = year || len(t) == 4 && isNumber(t) && (t[:2] == "19" || t[:2] == "20") && i > 0
		other = other || b&bThirdParty != 0 && b&bObject == 0 && !spanishHe(toks, i) || b&(bOtherSelf|bPossessive3P) != 0
		pastTold = pastTold || b&bPastTell != 0 || len(t) >= 5 && strings.HasSuffix(t, "ed")
	}
	return other && pastTold && (year || pastTime || len(toks) >= 10) && !recentCueWith(toks, infos)
}

// objectWords are third-party words that are no subject: "turned the gas
// rings on and didn't light them" has none.
var objectWords = map[string]bool{"him": true, "them": true, "her": true, "his": true, "their": true}

// otherSelf: "hitler killed himself".
var otherSelf = map[string]bool{"himself": true, "herself": true, "themselves": true, "themself": true}

// spanishHe: "he" is Spanish "(I) have" before a participle ("lo he
// intentado").
func spanishHe(toks []string, i int) bool {
	if toks[i] != "he" || i+1 >= len(toks) {
		return false
	}
	n := toks[i+1]
	return strings.HasSuffix(n, "ado") || strings.HasSuffix(n, "ido") || strings.HasSuffix(n, "to") || strings.HasSuffix(n, "cho")
}

// speakerWords: the speaker and the listener, squashed, in every language.
var speakerWords = map[string]bool{
	"i": true, "me": true, "my": true, "mine": true, "myself": true, "we": true, "us": true, "our": true,
	"you": true, "your": true, "yo": true, "mi": true, "mis": true, "nos": true, "nosotros": true, "tu": true,
	"te": true, "ti": true, "je": true, "moi": true, "mon": true, "ma": true, "mes": true, "nous": true,
	"vous": true, "toi": true, "ton": true, "ta": true, "tes": true, "ich": true, "mich": true, "mir": true,
	"mein": true, "meine": true, "meinen": true, "meiner": true, "wir": true, "uns": true, "du": true,
	"dich": true, "dir": true, "dein": true, "deine": true,
}

// nowWords: something happening now ("she's on the roof right now").
var nowWords = map[string]bool{
	"now": true, "just": true, "curently": true, "still": true, "ahora": true, "maintenant": true,
	"actuelement": true, "jetzt": true, "gerade": true, "grad": true, "soon": true, "pronto": true,
}

// pastTellWords: past forms a narration uses, squashed.
var pastTellWords = map[string]bool{
	"was": true, "were": true, "had": true, "tok": true, "died": true, "shot": true, "fel": true, "fue": true,
	"murio": true, "era": true, "etait": true, "fut": true, "mourut": true, "war": true, "starb": true,
	"nahm": true, "wurde": true,
}

var recentWords = map[string]bool{
	"yesterday": true, "tonight": true, "today": true, "earlier": true, "ayer": true, "anoche": true, "hoy": true,
	"gestern": true, "heute": true, "vorhin": true, "aujourdhui": true,
}

// recentCueWith is recentCue reading the word table's bits.
func recentCueWith(toks []string, infos []tokInfo) bool {
	for i, t := range toks {
		b := infos[i].bits
		if b&bRecent != 0 {
			return true
		}
		if b&bRecentFirst != 0 && i+1 < len(toks) && (t == "last" && toks[i+1] == "night" || t == "this" && toks[i+1] == "morning" ||
			t == "ce" && (toks[i+1] == "matin" || toks[i+1] == "soir") || t == "hier" && toks[i+1] == "soir") {
			return true
		}
	}
	return false
}

func recentCue(toks []string) bool {
	for i, t := range toks {
		if recentWords[t] {
			return true
		}
		if i+1 < len(toks) && (t == "last" && toks[i+1] == "night" || t == "this" && toks[i+1] == "morning" ||
			t == "ce" && (toks[i+1] == "matin" || toks[i+1] == "soir") || t == "hier" && toks[i+1] == "soir") {
			return true
		}
	}
	return false
}

var pastUnits = map[string]bool{
	"year": true, "month": true, "summer": true, "winter": true, "spring": true, "fall": true,
	"autumn": true, "week": true, "time": true,
}

// past reports a past-time marker: "tried to", "used to", "wanted to" just
// before the match, or "… ago", "last year", "when i was", "hace", "il y a",
// "vor jahren" shortly after it.
func past(toks []string, start, end int, p *pattern) bool {
	for k := start; k < end; k++ {
		if pastBefore[toks[k]] && !p.words[toks[k]] {
			return true // absorbed by a gap: "i used to want to die"
		}
	}
	for k := start - 1; k >= 0 && k >= start-4; k-- {
		if toks[k] == clauseMark {
			break
		}
		if pastBefore[toks[k]] && !recentCue(toks) {
			return true // "i tried to hang myself" — but not "yesterday i tried …"
		}
	}
	for k := end; k < len(toks) && k < end+6; k++ {
		t := toks[k]
		if t == clauseMark {
			break
		}
		nxt := ""
		if k+1 < len(toks) {
			nxt = toks[k+1]
		}
		switch {
		case t == "ago" || t == "hace":
			return true
		case t == "last" && pastUnits[nxt]:
			return true
		case t == "when" && nxt == "i" && k+2 < len(toks) && toks[k+2] == "was":
			return true
		case t == "il" && nxt == "y":
			return true
		case t == "vor" && (nxt == "jahren" || nxt == "monaten" || nxt == "wochen"):
			return true
		case t == "as" && nxt == "a" || t == "in" && nxt == "high":
			return true
		case len(t) == 4 && isNumber(t) && (t[:2] == "19" || t[:2] == "20"):
			return true // a year: "i took an overdose in 2021"
		}
	}
	return false
}

var thirdPartyWords = map[string]bool{
	"he": true, "she": true, "they": true, "his": true, "her": true, "their": true, "him": true, "them": true,
	"friend": true, "friends": true, "brother": true, "sister": true, "son": true, "daughter": true, "mom": true,
	"mum": true, "dad": true, "mother": true, "father": true, "wife": true, "husband": true, "girlfriend": true,
	"boyfriend": true, "partner": true, "kid": true, "kids": true, "child": true, "cousin": true, "someone": true,
	"somebody": true, "character": true, "man": true, "woman": true, "guy": true, "girl": true, "boy": true,
	"people": true, "person": true, "roommate": true, "coworker": true, "colleague": true, "villain": true,
	"hero": true, "amigo": true, "amiga": true, "hermano": true, "hermana": true, "hijo": true, "hija": true,
	"ami": true, "amie": true, "frere": true, "soeur": true, "fils": true, "fille": true, "freund": true,
	"freundin": true, "bruder": true, "schwester": true, "sohn": true, "tochter": true,
	"madre": true, "padre": true, "mama": true, "papa": true, "mere": true, "pere": true, "mutter": true,
	"vater": true, "il": true, "elle": true, "ella": true, "er": true, "novio": true, "novia": true,
	"marido": true, "mari": true, "copain": true, "copine": true, "mann": true, "frau": true,
}

var firstPersonSubject = map[string]bool{"i": true, "me": true, "je": true, "ich": true, "yo": true, "myself": true}

// thirdParty reports that the nearest subject before the match is someone
// else ("my friend said he wants to die"), not the speaker.
func thirdParty(toks []string, start int) bool {
	for k := start - 1; k >= 0 && k >= start-6; k-- {
		t := toks[k]
		if firstPersonSubject[t] || t == clauseMark {
			return false
		}
		if thirdPartyWords[t] {
			return true
		}
	}
	return false
}

var langStop = map[string]string{
	"i": "en", "the": "en", "to": "en", "and": "en", "is": "en", "you": "en", "it": "en", "am": "en", "want": "en",
	"what": "en", "not": "en", "this": "en", "that": "en", "of": "en",
	"que": "es", "el": "es", "los": "es", "las": "es", "quiero": "es", "estoy": "es", "y": "es", "muy": "es",
	"hace": "es", "tengo": "es", "por": "es", "mi": "es", "esta": "es", "es": "es", "no": "es", "con": "es",
	"je": "fr", "le": "fr", "les": "fr", "pas": "fr", "ne": "fr", "suis": "fr", "veux": "fr", "et": "fr",
	"est": "fr", "ce": "fr", "une": "fr", "mon": "fr", "va": "fr", "au": "fr", "du": "fr",
	"ich": "de", "nicht": "de", "der": "de", "das": "de", "und": "de", "ist": "de", "mich": "de",
	"bin": "de", "ein": "de", "mein": "de", "wie": "de", "den": "de", "vor": "de",
}

// langCue is what one word says of an utterance's language: its langStop
// entry and whether germanish counts it as German or English. Those
// questions are asked of every token several times per utterance (normalize,
// clean, the concept tagger, the rules, germanOrder), so one lookup answers
// them all.
type langCue uint8

const (
	cueGerman  langCue = 1 << iota // germanWords
	cueEnglish                     // englishWords
	cueStopEN                      // langStop "en" … "de"
	cueStopES
	cueStopFR
	cueStopDE
	cueDialect // germanColloquial, not germanAmbiguous (germanishDialect)
)

// langCues holds the cues of langStop, germanWords and englishWords, each
// also under its squashed spelling as squash.go adds it to those tables,
// and of germanColloquial (TestLangCues checks they agree).
var langCues = func() map[string]langCue {
	m := map[string]langCue{}
	stop := map[string]langCue{"en": cueStopEN, "es": cueStopES, "fr": cueStopFR, "de": cueStopDE}
	for k, v := range langStop {
		m[k] |= stop[v]
	}
	for k, v := range langStop {
		// as squash.go: the squashed spelling, unless a plain word has it
		if s := squashWord(k); s != k && langStop[s] == "" && m[s]&(cueStopEN|cueStopES|cueStopFR|cueStopDE) == 0 {
			m[s] |= stop[v]
		}
	}
	for _, t := range []struct {
		words map[string]bool
		cue   langCue
	}{{germanWords, cueGerman}, {englishWords, cueEnglish}} {
		for k, v := range t.words {
			if v {
				m[k] |= t.cue
				m[squashWord(k)] |= t.cue
			}
		}
	}
	for k, v := range germanColloquial {
		if v != nil && !germanAmbiguous[k] {
			m[k] |= cueDialect
		}
	}
	return m
}()

// guessLang picks the language with the most stop words, "en" on a tie or
// with none; it only labels results, it never changes a level.
func guessLang(toks []string) string {
	_, lang := germanishLang(toks)
	return lang
}

// germanishLang is germanish(toks) and guessLang(toks) in one pass.
func germanishLang(toks []string) (german bool, lang string) {
	var t langTally
	for _, w := range toks {
		t.add(langCues[w])
	}
	return t.result()
}

// langTally counts the language cues of an utterance's tokens: stop words
// per language and German against English words.
type langTally struct {
	stops  [4]int
	de, en int
}

func (t *langTally) add(c langCue) {
	countStop(&t.stops, c)
	if c&cueGerman != 0 {
		t.de++
	}
	if c&cueEnglish != 0 {
		t.en++
	}
}

func (t *langTally) result() (german bool, lang string) { return t.de > t.en, stopLang(t.stops) }

// countStop counts c's stop word in stops (en, es, fr, de).
func countStop(stops *[4]int, c langCue) {
	switch {
	case c&cueStopEN != 0:
		stops[0]++
	case c&cueStopES != 0:
		stops[1]++
	case c&cueStopFR != 0:
		stops[2]++
	case c&cueStopDE != 0:
		stops[3]++
	}
}

// stopLang is the language with the most stop words, "en" on a tie.
func stopLang(stops [4]int) string {
	best, lang := stops[0], "en"
	if stops[1] > best {
		best, lang = stops[1], "es"
	}
	if stops[2] > best {
		best, lang = stops[2], "fr"
	}
	if stops[3] > best {
		lang = "de"
	}
	return lang
}
