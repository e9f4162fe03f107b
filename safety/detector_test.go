package safety

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"I'm gonna KILL myself!!!", "i am going to kill myself"},
		{"im gonna kill my self", "i am going to kill myself"},
		{"I don't wanna live", "i do not want to live"},
		{"i dont want to live", "i do not want to live"},
		{"I cannot go on", "i can not go on"},
		{"i can’t go on", "i can not go on"},
		{"um, like, i want to, you know, uh, die", "i want to die"},
		{"i i want to kill kill myself", "i want to kill myself"},
		{"I want too dye", "i want to die"},
		{"i want to dye my hair", "i want to dye my hair"},
		{"i wanna k1ll myself", "i want to kill myself"},
		{"i want to diiiie", "i want to die"},
		{"killmyself", "kill myself"},
		{"self-harm", "self harm"},
		{"J'ai envie de mourir", "je ai envie de mourir"},
		{"Je n'en peux plus", "je ne en peux plus"},
		{"¿Quiero suicidarme?", "quiero suicidarme"},
		{"Ich möchte nicht mehr leben", "ich mochte nicht mehr leben"},
		{"ich bringe mich um", "ich bringe mich um"},
		{"um ich weiß nicht", "ich weiss nicht"},
		{"it's not worth living", "it is not worth living"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(normalize(tt.in, nil), " "); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRulesCompile: the built-in table compiles and every literal word of
// every pattern is already in normalised form, or it could never match.
func TestRulesCompile(t *testing.T) {
	d := NewDetector()
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, cr := range d.rules {
		if ids[cr.def.id] {
			t.Errorf("duplicate rule id %s", cr.def.id)
		}
		ids[cr.def.id] = true
		for _, p := range cr.pats {
			words := map[string]bool{}
			for _, e := range p.elems {
				for _, w := range e.words {
					words[w] = true
				}
			}
			for w := range words {
				if w == "um" { // kept after "mich" only (germanUm)
					continue
				}
				if got := squash(strings.Join(normalize(w, nil), " ")); got != w {
					t.Errorf("rule %s pattern %q: word %q normalises and squashes to %q", cr.def.id, p.src, w, got)
				}
			}
		}
	}
}

func TestDetect(t *testing.T) {
	d := NewDetector()
	tests := []struct {
		text string
		want Level
	}{
		// explicit and indirect crisis, ASR-style
		{"I want to kill myself", LevelCrisis},
		{"want kill myself", LevelCrisis},
		{"i wanna um like kill myself", LevelCrisis},
		{"im going to end my life tonight", LevelCrisis},
		{"i don't want to live", LevelCrisis},
		{"i do not want to live anymore", LevelCrisis},
		{"there's no reason to live", LevelCrisis},
		{"i'm not going to lie i want to die", LevelCrisis},
		{"kms", LevelCrisis},
		{"what's the most painless way to die", LevelCrisis},
		{"quiero morir", LevelCrisis},
		{"je veux mourir", LevelCrisis},
		{"ich will sterben", LevelCrisis},
		{"ich bringe mich heute um", LevelCrisis},
		// negation lowers crisis to elevated, never to none
		{"i'm not going to kill myself", LevelElevated},
		{"i would never kill myself", LevelElevated},
		{"i don't want to die", LevelElevated},
		{"no voy a matarme", LevelElevated},
		{"je ne vais pas me suicider", LevelElevated},
		{"ich werde mich nicht umbringen", LevelElevated},
		// past and third party lower to elevated
		{"i tried to kill myself two years ago", LevelElevated},
		{"i used to want to die", LevelElevated},
		{"my friend wants to kill herself", LevelElevated},
		{"he said he want to die", LevelElevated},
		// elevated
		{"everything feels hopeless", LevelElevated},
		{"i feel like a burden to everyone", LevelElevated},
		{"i can't do this anymore", LevelElevated},
		// hard negatives
		{"kill the process", LevelNone},
		// ordinary speech as the recogniser hears it: stopping, finishing,
		// thinking out loud are no danger words on their own
		{"please stop talking now and listen to me because i have something important to tell you", LevelNone},
		{"please stop talking about and listen to me because i have something important to fail you", LevelNone},
		{"just thinking out loud", LevelNone},
		// recogniser text of real benign speech that raised cards live
		// (an audiobook's narration, a mis-heard speech), and what must
		// still raise beside the same words
		{"it was the first great sorrow of his life it was not so much the loss of the tightening itself", LevelNone},
		{"and not my problem act", LevelNone},
		{"my problem is i can't find my keys", LevelNone},
		{"i am such a problem for everyone", LevelElevated},
		{"my boyfriend is going to kill me", LevelElevated},
		{"the gym was fine but i'm thinking about suicide again", LevelElevated},
		{"me corté el pelo y luego me corté los brazos", LevelElevated},
		{"we are done for today, the meeting is over", LevelNone},
		// a request to the listener: "do it" asks VERA to act (a consent
		// answer, heard or mis-heard)
		{"please do it settled for me", LevelNone},
		{"can you do it for me", LevelNone},
		{"yes please do it", LevelNone},
		{"how do i kill the process on port 8080", LevelNone},
		{"i'm dying to see that film", LevelNone},
		{"this traffic is killing me", LevelNone},
		{"i could murder a pizza", LevelNone},
		{"i want to dye my hair", LevelNone},
		{"i don't want to live in the city", LevelNone},
		{"tonight is the night of the big game", LevelNone},
		{"i cut myself shaving", LevelNone},
		{"me muero de hambre", LevelNone},
		{"je meurs de faim", LevelNone},
		{"der verkehr bringt mich um", LevelNone},
		{"", LevelNone},
	}
	for _, tt := range tests {
		r := d.Detect(tt.text)
		if r.Level != tt.want {
			t.Errorf("Detect(%q) = %v (%s), want %v", tt.text, r.Level, r.Reason, tt.want)
		}
	}
}

// knownReasons is every reason id the detector can give: rule, lexicon,
// frame, model and context ids, each with every lowering suffix.
func knownReasons(d *Detector) map[string]bool {
	base := []string{"ctx.means_time", "ctx.act_after_distress", "ctx.recent_crisis", "ctx.turns",
		"lexicon.intent", "lexicon.mention", "lexicon.distress", "model.crisis", "model.elevated"}
	for _, cr := range d.rules {
		base = append(base, cr.def.id)
	}
	for _, f := range frames {
		base = append(base, "frame."+f.def.id)
	}
	known := map[string]bool{}
	for _, b := range base {
		known[b] = true
		for _, s := range []string{"/negated", "/past", "/third_party", "/joking", "/context", "/everyday"} {
			known[b+s] = true
		}
	}
	return known
}

func TestDetectReasonIsRuleID(t *testing.T) {
	d := NewDetector()
	known := knownReasons(d)
	for _, f := range []string{"utterances.jsonl", "corpus-train.jsonl", "corpus-dev.jsonl"} {
		for _, s := range loadSamples(t, f) {
			r := d.Detect(s.Text)
			if r.Level == LevelNone {
				if r.Reason != "" {
					t.Errorf("none with reason %q", r.Reason)
				}
				continue
			}
			if !known[r.Reason] || !reasonRE.MatchString(r.Reason) {
				t.Errorf("reason %q is not a known id", r.Reason)
			}
		}
	}
}

func TestDetectLang(t *testing.T) {
	d := NewDetector()
	for text, want := range map[string]string{
		"i want to die": "en", "quiero morir": "es", "je veux mourir": "fr", "ich will sterben": "de",
		"what time is it": "en", "qué hora es por favor": "es", "quelle heure est-il, je ne sais pas": "fr", "wie spät ist es, ich weiß nicht": "de",
	} {
		if got := d.Detect(text).Lang; got != want {
			t.Errorf("Lang(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestDetectTurn(t *testing.T) {
	d := NewDetector()
	tests := []struct {
		name    string
		history []string
		text    string
		want    Level
	}{
		{"means then time", []string{"i have pills saved up"}, "tonight", LevelCrisis},
		{"means then act", []string{"i bought a rope"}, "i'm going to do it", LevelCrisis},
		{"distress then act", []string{"i feel hopeless"}, "goodbye", LevelCrisis},
		{"crisis keeps elevated", []string{"i want to kill myself"}, "what's the weather", LevelElevated},
		{"context never lowers", []string{"what a nice day"}, "i want to kill myself", LevelCrisis},
		{"benign history, benign turn", []string{"i love pizza", "what time is it"}, "tonight we go out", LevelNone},
		{"time alone is nothing", []string{"i had a long day"}, "tonight", LevelNone},
		{"owning a knife then tonight is nothing", []string{"i have a new knife for the kitchen"}, "what's for dinner tonight", LevelNone},
		{"place then time", []string{"i'm at the bridge"}, "right now", LevelCrisis},
		{"old context falls out of the window", []string{"i have pills saved up", "a", "b", "c", "d", "e", "f"}, "tonight", LevelNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.DetectTurn(tt.history, tt.text)
			if got.Level != tt.want {
				t.Errorf("DetectTurn = %v (%s), want %v", got.Level, got.Reason, tt.want)
			}
			if alone := d.Detect(tt.text); got.Level < alone.Level {
				t.Errorf("context lowered %v to %v", alone.Level, got.Level)
			}
		})
	}
}

func TestAssess(t *testing.T) {
	d := NewDetector()
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	a := d.Assess(nil, "i want to kill myself", c, RegionPrefs{Locale: "en-US"})
	if a.Level != LevelCrisis || !a.DisplayRequired || a.Source != SourceLocal {
		t.Fatalf("crisis assess = %+v", a)
	}
	if got := ids(a.Resources); got[0] != "us-emergency-911" || got[1] != "us-988-lifeline" {
		t.Errorf("crisis card order = %v, want emergency first then 988", got)
	}
	a = d.Assess(nil, "i feel hopeless", nil, RegionPrefs{User: "GB"})
	if a.Level != LevelElevated || !a.DisplayRequired || ids(a.Resources)[0] != "gb-samaritans" {
		t.Errorf("elevated assess = %v %v %v", a.Level, a.DisplayRequired, ids(a.Resources))
	}
	a = d.Assess(nil, "quiero morir", c, RegionPrefs{})
	if got := ids(a.Resources); len(got) != 2 || got[0] != "local-emergency-number" {
		t.Errorf("unknown region crisis card = %v", got)
	}
	a = d.Assess(nil, "what's the weather", c, RegionPrefs{User: "US"})
	if a.Level != LevelNone || a.DisplayRequired || a.Resources == nil || len(a.Resources) != 0 {
		t.Errorf("none assess = %+v", a)
	}
}

// sharedDir is unused here: the labelled sets live in this repo's testdata.
func loadSamples(t testing.TB, name string) []Sample {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "safety", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ReadSamples(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Floors for the labelled sets (see testdata/safety/README.md): regression
// guards under the measured numbers, not targets. corpus-dev is the
// development split the targets are measured on (crisis shown ≥
// 0.95, crisis labelled crisis ≥ 0.85, false alarms ≤ 5 %, every language ≥
// 0.85 shown); corpus-train is what the model was fitted on; the older
// sets (utterances, heldout*) were written for the phrase rules and guard
// against regressions there; conversations are multi-turn (DetectTurn).
func TestLabelledSets(t *testing.T) {
	d := NewDetector()
	for _, tc := range []struct {
		file                         string
		minCrisisRecall, minAlertRec float64
		maxFalseAlarm                float64
		minLangShown                 float64
		minLines                     int
	}{
		{"corpus-dev.jsonl", 0.85, 0.95, 0.05, 0.85, 500},
		{"corpus-train.jsonl", 0.93, 0.98, 0.02, 0.95, 2000},
		{"conversations.jsonl", 0.75, 0.95, 0.20, 0.90, 25},
		// scored once before its misses were read (first run: crisis shown
		// 0.887, crisis 0.793, false alarms 0.074); a dev set since
		{"corpus-holdout.jsonl", 0.83, 0.95, 0.05, 0.90, 500},
		{"utterances.jsonl", 0.95, 0.97, 0.05, 0, 300},
		{"heldout.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-b.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-c.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-d.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-e.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-f.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-g.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-h.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-i.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-j.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-k.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-l.jsonl", 0.90, 0.90, 0.10, 0, 60},
		{"heldout-m.jsonl", 0.90, 0.90, 0.10, 0, 60},
	} {
		t.Run(tc.file, func(t *testing.T) {
			samples := loadSamples(t, tc.file)
			if len(samples) < tc.minLines {
				t.Fatalf("%d samples, want ≥ %d", len(samples), tc.minLines)
			}
			rep := Evaluate(d, samples)
			cr := rep.Levels["crisis"].Recall
			t.Logf("%s: crisis recall %.3f precision %.3f, alert recall %.3f, elevated recall %.3f, false alarms %.3f",
				tc.file, cr, rep.Levels["crisis"].Precision, rep.CrisisAlertRecall, rep.Levels["elevated"].Recall, rep.FalseAlarmRate)
			if cr < tc.minCrisisRecall {
				t.Errorf("crisis recall %.3f < %.2f", cr, tc.minCrisisRecall)
			}
			if rep.CrisisAlertRecall < tc.minAlertRec {
				t.Errorf("crisis alert recall %.3f < %.2f", rep.CrisisAlertRecall, tc.minAlertRec)
			}
			if rep.FalseAlarmRate > tc.maxFalseAlarm {
				t.Errorf("false-alarm rate %.3f > %.2f", rep.FalseAlarmRate, tc.maxFalseAlarm)
			}
			for _, l := range []string{"en", "es", "fr", "de"} {
				g, ok := rep.ByLang[l]
				if !ok {
					t.Errorf("no %s samples", l)
					continue
				}
				if g.CrisisSupport > 0 && g.CrisisShown < tc.minLangShown {
					t.Errorf("%s: crisis shown %.3f < %.2f", l, g.CrisisShown, tc.minLangShown)
				}
			}
			if t.Failed() {
				for _, m := range rep.Misses {
					t.Logf("miss gold=%v got=%v reason=%s %q", m.Gold, m.Got, m.Reason, m.Text)
				}
			}
		})
	}
}

// TestCorpusShape: the development corpus covers every category in every
// language, with level, category, lang and split on every line, and the
// train and dev splits share no utterance.
func TestCorpusShape(t *testing.T) {
	seen := map[string]string{}
	cats := map[string]map[string]bool{}
	for _, f := range []string{"corpus-train.jsonl", "corpus-dev.jsonl"} {
		for _, s := range loadSamples(t, f) {
			if s.Category == "" || s.Lang == "" || s.Split == "" {
				t.Fatalf("%s: %q lacks category, lang or split", f, s.Text)
			}
			key := strings.ToLower(s.Text)
			if prev, dup := seen[key]; dup {
				t.Errorf("%q in %s and %s", s.Text, prev, f)
			}
			seen[key] = f
			if cats[s.Category] == nil {
				cats[s.Category] = map[string]bool{}
			}
			cats[s.Category][s.Lang] = true
		}
	}
	if len(seen) < 1500 {
		t.Errorf("%d utterances, want ≥ 1500", len(seen))
	}
	for c, langs := range cats {
		for _, l := range []string{"en", "es", "fr", "de"} {
			// code-switching (English mixed with the others) and the
			// English sleep batch are the only ones allowed to miss one
			if !langs[l] && c != "neg_code_switch" && c != "neg_sleep" {
				t.Errorf("category %s has no %s utterance", c, l)
			}
		}
	}
}

var reasonRE = regexp.MustCompile(`^[a-z_]+(\.[a-z_]+)+(/[a-z_]+)?$`)

func FuzzDetect(f *testing.F) {
	for _, s := range []string{"i want to kill myself", "kill the process", "je n'en peux plus", "ich bringe mich um", "\xff\xfe", "'''", "my self my self", "um um um"} {
		f.Add(s, "i have pills saved up")
	}
	d := NewDetector()
	f.Fuzz(func(t *testing.T, text, hist string) {
		r := d.DetectTurn([]string{hist}, text)
		if !r.Level.Valid() {
			t.Fatalf("invalid level %d", r.Level)
		}
		if r.Level != LevelNone && !reasonRE.MatchString(r.Reason) {
			t.Fatalf("reason %q is not a rule id", r.Reason)
		}
		if alone := d.Detect(text); r.Level < alone.Level {
			t.Fatalf("context lowered %v to %v", alone.Level, r.Level)
		}
	})
}

func BenchmarkDetect(b *testing.B) {
	samples := loadSamples(b, "utterances.jsonl")
	d := NewDetector()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d.Detect(samples[i%len(samples)].Text)
		i++
	}
}

func BenchmarkDetectTurn(b *testing.B) {
	samples := loadSamples(b, "utterances.jsonl")
	d := NewDetector()
	hist := []string{"i had a long day at work", "my boss yelled at me", "i feel tired"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d.DetectTurn(hist, samples[i%len(samples)].Text)
		i++
	}
}

// TestLangCues: the one-lookup table agrees with langStop, germanWords,
// englishWords (after squash.go added their squashed spellings) and
// germanColloquial on every
// word either side knows.
func TestLangCues(t *testing.T) {
	stop := map[string]langCue{"en": cueStopEN, "es": cueStopES, "fr": cueStopFR, "de": cueStopDE}
	words := map[string]bool{}
	for w := range langCues {
		words[w] = true
	}
	for _, m := range []map[string]bool{germanWords, englishWords} {
		for w := range m {
			words[w] = true
		}
	}
	for w := range langStop {
		words[w] = true
	}
	for w := range germanColloquial {
		words[w] = true
	}
	for w := range words {
		want := stop[langStop[w]]
		if germanWords[w] {
			want |= cueGerman
		}
		if englishWords[w] {
			want |= cueEnglish
		}
		if germanColloquial[w] != nil && !germanAmbiguous[w] {
			want |= cueDialect
		}
		if got := langCues[w]; got != want {
			t.Errorf("langCues[%q] = %b, want %b", w, got, want)
		}
	}
}

// TestMayMatchSound: the signature pre-check never rejects a pattern that
// matches, for every rule and explanation pattern at every token of the
// development corpus (repaired and squashed, as the rules
// read them), and it does reject most that do not (else it is useless).
func TestMayMatchSound(t *testing.T) {
	d := NewDetector()
	var pats []*pattern
	for ri := range d.rules {
		for pi := range d.rules[ri].pats {
			pats = append(pats, &d.rules[ri].pats[pi])
		}
	}
	for di := range negTable.defs {
		nd := &negTable.defs[di]
		for _, ps := range append([][]pattern{nd.cues, nd.veto}, nd.domain...) {
			for pi := range ps {
				pats = append(pats, &ps[pi])
			}
		}
	}
	var tried, rejected int
	for _, f := range []string{"corpus-dev.jsonl"} {
		for _, s := range loadSamples(t, f) {
			toks := squashAll(germanOrder(repairTokens(normalize(s.Text, nil), nil, d.model.lex)), nil)
			sig := sigOf(toks)
			for _, p := range pats {
				may := p.mayMatch(&sig)
				tried++
				if !may {
					rejected++
				}
				for i := range toks {
					if end := p.match(toks, i); end >= 0 && !may {
						t.Fatalf("%q: pattern %q matches at %d but mayMatch is false", s.Text, p.src, i)
					}
				}
			}
		}
	}
	if rejected < tried/2 {
		t.Errorf("mayMatch rejected %d of %d pattern checks", rejected, tried)
	}
}
