package glasses

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// Independent glyph oracle: parse the font here rather than trust font.go.
var oracleFont = func() *sfnt.Font {
	f, err := sfnt.Parse(goregular.TTF)
	if err != nil {
		panic(err) // test-only: the embedded font is a constant
	}
	return f
}()

func fontHas(r rune) bool {
	var b sfnt.Buffer
	x, err := oracleFont.GlyphIndex(&b, r)
	return err == nil && x != 0 && !unicode.IsControl(r)
}

var (
	vocab = []string{"you", "are", "not", "alone", "call", "support", "free", "confidential", "help", "tonight",
		"größer", "façade", "naïve", "café", "Привет", "помощь", "рядом", "καλημέρα", "βοήθεια", "Ωmega",
		"hotline,", "(24/7)", "don't", "it's", "well-being", "e-mail:", "co-operate", "—", "\"quoted\"", "“curly”"}
	spans = []string{"988", "116 123", "13 11 14", "text HOME to 741741", "1-800-273-8255", "+44 116 123", "Call 988"}
	ws    = []string{" ", " ", " ", "  ", "\t", "\n", "\n\n", "\u00a0", "\u2003", " \r\n "}
)

type genText struct {
	text  string
	spans []string // no-break spans that were inserted
}

// genBody produces random and adversarial text: mixed scripts, phone spans,
// URLs, very long words, long numbers and (rarely) emoji or CJK.
func genBody(r *rand.Rand, words int, allowBad bool) genText {
	var b strings.Builder
	var g genText
	for i := range words {
		if i > 0 {
			b.WriteString(ws[r.Intn(len(ws))])
		}
		switch k := r.Intn(100); {
		case k < 70:
			b.WriteString(vocab[r.Intn(len(vocab))])
		case k < 80:
			s := spans[r.Intn(len(spans))]
			g.spans = append(g.spans, s)
			b.WriteString(s)
		case k < 85:
			b.WriteString("https://www.example.org/" + strings.Repeat("path-part/", 1+r.Intn(8)) + "?q=" + fmt.Sprint(r.Intn(1000)))
		case k < 89:
			b.WriteString(strings.Repeat("abcdefghij", 3+r.Intn(6)))
		case k < 94:
			n := 1 + r.Intn(40)
			var d strings.Builder
			for range n {
				d.WriteByte(byte('0' + r.Intn(10)))
			}
			b.WriteString(d.String())
		case k < 97 && allowBad:
			b.WriteString([]string{"😀", "求助", "\u200d", "שלום", "\x01"}[r.Intn(5)])
		default:
			b.WriteString(strings.Repeat("x", 1+r.Intn(5)))
		}
	}
	g.text = b.String()
	return g
}

func genResource(r *rand.Rand, i int) safety.Resource {
	base := []safety.Resource{res988, resCTL, resSamaritans, resLifeline}[r.Intn(4)]
	base.ID = fmt.Sprintf("%s-%d", base.ID, i)
	if r.Intn(3) == 0 {
		base.Description = genBody(r, 5+r.Intn(40), false).text
	}
	if r.Intn(4) == 0 {
		base.Name = genBody(r, 1+r.Intn(8), false).text
		if NormalizeSpace(base.Name) == "" {
			base.Name = "Resource"
		}
	}
	if r.Intn(2) == 0 {
		base.Actions = nil
		for range r.Intn(5) {
			base.Actions = append(base.Actions, genAction(r))
		}
	}
	return base
}

var (
	genNumbers = []string{"988", "116 123", "13 11 14", "0800 111 0 111", "1-800-273-8255", "+44 116 123", "(800) 273-8255", "0477 13 11 14", "741741", "0800-0113"}
	genLabels  = []string{"", "Call", "Call us", "Phone:", "Text", "Visit", "Visit:", "Chat at", "Web", "Help site", "Find help online at", "Samaritans:", "Chat online with a trained counsellor at", "Supercalifragilisticexpialidocious:"}
	genHosts   = []string{"988lifeline.org", "www.samaritans.org", "findahelpline.com", "www.example.org", "a-very-very-long-host-name-for-testing.example.org", strings.Repeat("abcdefghij", 5) + ".org"}
	genSegs    = []string{"how-we-can-help", "contact-samaritan", "chat", "articles", "2026", "11", "how-to-sleep-better-after-a-long-day", strings.Repeat("segment", 8), "a.b-c_d", "index.html"}
)

// genNumber is a phone number in one of the formats people publish, or a
// random digit run (rarely longer than a line).
func genNumber(r *rand.Rand) string {
	if r.Intn(4) > 0 {
		return genNumbers[r.Intn(len(genNumbers))]
	}
	var d strings.Builder
	for range 3 + r.Intn(r.Intn(40)+1) {
		d.WriteByte(byte('0' + r.Intn(10)))
	}
	return d.String()
}

// genURL is an address with and without scheme, long hosts, long segments,
// dots, dashes, queries and fragments.
func genURL(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString([]string{"", "https://", "http://"}[r.Intn(3)])
	b.WriteString(genHosts[r.Intn(len(genHosts))])
	for range r.Intn(6) {
		b.WriteString("/" + genSegs[r.Intn(len(genSegs))])
	}
	if r.Intn(3) == 0 {
		b.WriteString("/")
	}
	if r.Intn(3) == 0 {
		fmt.Fprintf(&b, "?ref=vera&id=%d", r.Intn(100000))
	}
	if r.Intn(5) == 0 {
		b.WriteString("#top")
	}
	return b.String()
}

func genAction(r *rand.Rand) safety.Action {
	label := genLabels[r.Intn(len(genLabels))]
	switch k := r.Intn(10); {
	case k < 4:
		return safety.Action{Type: safety.ActionCall, Value: genNumber(r), Label: label}
	case k < 6:
		n := genNumber(r)
		if r.Intn(2) == 0 {
			label = "Text HOME to " + n
		}
		return safety.Action{Type: safety.ActionText, Value: n, Label: label}
	default:
		ty := safety.ActionURL
		if k == 9 {
			ty = safety.ActionChat
		}
		u := genURL(r)
		if r.Intn(4) == 0 {
			label = label + " " + bareURL(u) // a label that shows the address
		}
		return safety.Action{Type: ty, Value: u, Label: label}
	}
}

// checkLayout asserts every paging invariant of l against card c.
func checkLayout(t *testing.T, l *Layout, c Card, spansIn []string) {
	t.Helper()
	s := l.Surface
	fs, err := facesFor(s)
	if err != nil {
		t.Fatal(err)
	}
	// 1. Joined text equals the source under the one normalisation.
	src := c.SourceText(s)
	if got := NormalizeSpace(JoinText(l.Pages)); got != src {
		t.Fatalf("joined text differs\n got: %q\nwant: %q", got, src)
	}
	if len(l.Pages) == 0 {
		t.Fatal("no pages")
	}
	wantTitle := NormalizeSpace(c.Title)
	for i, pg := range l.Pages {
		// 2. Title and n/N on every page.
		if pg.N != i+1 || pg.Of != len(l.Pages) {
			t.Fatalf("page %d says %d/%d", i+1, pg.N, pg.Of)
		}
		var tj strings.Builder
		for j, tl := range pg.Title {
			if j > 0 && !l.Title[j].Cont {
				tj.WriteByte(' ')
			}
			tj.WriteString(tl)
		}
		if tj.String() != wantTitle || len(pg.Title) > s.TextBudget.TitleLines {
			t.Fatalf("page %d title %q (want %q, ≤%d lines)", i+1, pg.Title, wantTitle, s.TextBudget.TitleLines)
		}
		// 3. Budget: lines, pixel height, runes and measured width.
		if len(pg.Lines) > s.TextBudget.LinesPerPage {
			t.Fatalf("page %d: %d lines > %d", i+1, len(pg.Lines), s.TextBudget.LinesPerPage)
		}
		h := 0
		for _, ln := range pg.Lines {
			h += fs.lineH[ln.Style]
			if n := utf8.RuneCountInString(ln.Text); n > s.TextBudget.CharsPerLine {
				t.Fatalf("line %q: %d runes > %d", ln.Text, n, s.TextBudget.CharsPerLine)
			}
			if w, err := fs.face(ln.Style).widthPx(ln.Text); err != nil || w > s.ContentWidth() || w != ln.WidthPx {
				t.Fatalf("line %q: width %d (recorded %d) > %d: %v", ln.Text, w, ln.WidthPx, s.ContentWidth(), err)
			}
			if ln.Text == "" || ln.Text != strings.TrimSpace(ln.Text) {
				t.Fatalf("line %q empty or padded", ln.Text)
			}
		}
		if h > s.BodyAreaPx() {
			t.Fatalf("page %d: %d px > body area %d px", i+1, h, s.BodyAreaPx())
		}
	}
	// 4. Numbers intact: a Cont join never falls inside a number or a digit run.
	var all []Line
	for _, pg := range l.Pages {
		all = append(all, pg.Lines...)
	}
	var jb strings.Builder
	var joins []int // byte offsets in jb where a Cont line was joined
	for i, ln := range all {
		if i > 0 {
			if ln.Cont {
				joins = append(joins, jb.Len())
			} else {
				jb.WriteByte(' ')
			}
		}
		jb.WriteString(ln.Text)
	}
	joinedAll := jb.String()
	for _, at := range joins {
		start := strings.LastIndexByte(joinedAll[:at], ' ') + 1
		end := strings.IndexByte(joinedAll[at:], ' ')
		if end < 0 {
			end = len(joinedAll)
		} else {
			end += at
		}
		if tok := joinedAll[start:end]; IsNumber(tok) {
			t.Fatalf("number %q split across lines", tok)
		}
		a, _ := utf8.DecodeLastRuneInString(joinedAll[:at])
		b, _ := utf8.DecodeRuneInString(joinedAll[at:])
		if unicode.IsDigit(a) && unicode.IsDigit(b) {
			t.Fatalf("digit run split at %q|%q", joinedAll[start:at], joinedAll[at:end])
		}
	}
	// 5. Every no-break span (atoms) that fits on one line is on one line;
	// the inserted spans are additionally looked for by text.
	for _, b := range c.Blocks(s) {
		for _, a := range atoms(b.Text) {
			if len(a.words) < 2 {
				continue
			}
			at := a.text()
			w, _ := fs.face(b.Style).widthPx(at)
			if w > s.ContentWidth() || utf8.RuneCountInString(at) > s.TextBudget.CharsPerLine {
				continue
			}
			if !spanOnOneLine(all, at) {
				t.Fatalf("no-break span %q split", at)
			}
		}
	}
	// The generator's inserted spans must have survived as atoms somewhere
	// (guards atoms() against silently not merging them).
	for _, sp := range spansIn {
		if strings.Contains(sp, " ") && !strings.Contains(src, sp) {
			t.Fatalf("inserted span %q missing from source", sp)
		}
	}
	// 6. Ops carry exactly the page lines, title and n/N.
	doc, err := l.Ops()
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Pages) != len(l.Pages) || doc.Hash != SourceHash(src) {
		t.Fatalf("ops pages %d hash %s", len(doc.Pages), doc.Hash)
	}
	for i, op := range doc.Pages {
		ind := false
		for _, o := range op.Ops {
			if o.Op == "text" && o.Text == l.Pages[i].Indicator() {
				ind = true
			}
			if o.Op == "text" && o.X+mustWidth(t, o) > s.Width-s.MarginPx {
				t.Fatalf("op %q overflows: x %d", o.Text, o.X)
			}
			if o.Y > s.Height {
				t.Fatalf("op %q below surface: y %d", o.Text, o.Y)
			}
		}
		// Body text never runs into the control row or off the surface.
		bottom := s.Height - s.MarginPx
		if s.Buttons && len(op.Controls) > 0 {
			bottom -= s.ButtonRowPx
		}
		for _, o := range op.Ops {
			if o.Op == "text" && o.Y > bottom {
				t.Fatalf("page %d: text %q baseline %d below %d", i+1, o.Text, o.Y, bottom)
			}
		}
		if !ind || op.Title != wantTitle || len(op.Lines) != len(l.Pages[i].Lines) {
			t.Fatalf("ops page %d: indicator %v title %q", i+1, ind, op.Title)
		}
	}
	checkPacking(t, l, c)
}

func mustWidth(t *testing.T, o Op) int {
	m, err := metricsFor(o.Bold, o.Px)
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.widthPx(o.Text)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// spanOnOneLine reports whether every occurrence of sp in the text lies
// within one line.
func spanOnOneLine(lines []Line, sp string) bool {
	for _, ln := range lines {
		if strings.Contains(ln.Text, sp) {
			return true
		}
	}
	return false
}

// checkErr accepts only justified layout errors and verifies the
// justification independently.
func checkErr(t *testing.T, err error, c Card, s devices.Surface) {
	t.Helper()
	src := c.SourceText(s) + " " + c.Title
	var ge *GlyphError
	var ue *UnbreakableError
	switch {
	case errors.As(err, &ge):
		if fontHas(ge.Rune) || !strings.ContainsRune(src, ge.Rune) {
			t.Fatalf("unjustified glyph error: %v", err)
		}
	case errors.As(err, &ue):
		if !strings.Contains(src, ue.Token) || ue.Token == "" {
			t.Fatalf("unbreakable token %q not in source", ue.Token)
		}
		digits := 0
		for _, r := range ue.Token {
			if unicode.IsDigit(r) {
				digits++
			}
		}
		if digits == 0 || (ue.Runes <= ue.LimitRunes && ue.WidthPx <= ue.LimitPx) {
			t.Fatalf("unjustified unbreakable error: %v", err)
		}
	case errors.Is(err, ErrTitleTooLong):
	default:
		t.Fatalf("unexpected error: %v", err)
	}
}

func TestPropertyEveryProfile(t *testing.T) {
	const iters = 200
	for _, p := range devices.Builtins() {
		t.Run(p.ID, func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(len(p.ID)) * 7919))
			_, visual := p.Display()
			ok, failed := 0, 0
			for i := range iters {
				var c Card
				var spans []string
				switch i % 3 {
				case 0:
					g := genBody(r, 1+r.Intn(120), i%9 == 0)
					c, spans = Card{Kind: KindInfo, Title: "Note " + fmt.Sprint(i), Body: g.text}, g.spans
				case 1:
					n := 1 + r.Intn(12)
					if i%10 == 1 {
						n = 12
					}
					rs := make([]safety.Resource, n)
					for j := range rs {
						rs[j] = genResource(r, j)
					}
					c = Card{ID: "s", Kind: KindSafety, Title: SafetyTitle, Resources: rs}
					spans = nil // resource action lines are checked as atoms
				default:
					g := genBody(r, 1+r.Intn(60), false)
					c = Card{Kind: KindCaption, Title: genBody(r, 1+r.Intn(3), false).text, Body: g.text}
					if NormalizeSpace(c.Title) == "" || NormalizeSpace(c.Body) == "" {
						c.Title, c.Body = "Caption", c.Body+" ok"
					}
					spans = g.spans
				}
				l, err := LayoutCard(c, p)
				if !visual {
					if !errors.Is(err, ErrNoDisplay) {
						t.Fatalf("voice-only: err = %v", err)
					}
					continue
				}
				if err != nil {
					s, _ := p.Display()
					checkErr(t, err, c, s)
					failed++
					continue
				}
				checkLayout(t, l, c, spans)
				ok++
			}
			if visual && ok < iters/3 {
				t.Fatalf("only %d/%d layouts succeeded (%d justified errors): generator too hostile to test paging", ok, iters, failed)
			}
			t.Logf("%s: %d laid out, %d justified errors", p.ID, ok, failed)
		})
	}
}

func FuzzLayout(f *testing.F) {
	f.Add("Call 116 123 or text HOME to 741741.", "Help")
	f.Add(strings.Repeat("https://example.org/a/b/c ", 5), "Links")
	f.Add("😀 "+strings.Repeat("9", 40), "x")
	f.Add("Привет καλημέρα größer\n\n\tend", "Ωmega")
	profiles := []devices.Profile{}
	for _, p := range devices.Builtins() {
		if _, ok := p.Display(); ok {
			profiles = append(profiles, p)
		}
	}
	f.Fuzz(func(t *testing.T, body, title string) {
		c := Card{Kind: KindInfo, Title: title, Body: body}
		if len(title)%2 == 0 {
			// The same text as a safety resource: name, description and a
			// number-bearing action.
			r := res988
			r.Name, r.Description = NormalizeSpace(title)+" line", body
			r.Actions = []safety.Action{{Type: safety.ActionCall, Value: title + "988"}}
			c = Card{ID: "s", Kind: KindSafety, Title: SafetyTitle, Resources: []safety.Resource{r, resLifeline}}
		}
		if c.Validate() != nil {
			return
		}
		p := profiles[len(body)%len(profiles)]
		l, err := LayoutCard(c, p)
		if err != nil {
			s, _ := p.Display()
			if errors.Is(err, ErrLayout) {
				return // max_pages guard for huge non-safety inputs
			}
			checkErr(t, err, c, s)
			return
		}
		checkLayout(t, l, c, nil)
	})
}

// checkPacking asserts how lines are packed into pages, independently of
// how layout.go does it (issue 16, "cards that read at a glance").
func checkPacking(t *testing.T, l *Layout, c Card) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Log(dumpLayout(l))
		}
	}()
	s := l.Surface
	fs, err := facesFor(s)
	if err != nil {
		t.Fatal(err)
	}
	blocks := c.Blocks(s)
	var all []Line
	var pageOf []int // page index of all[i]
	for p, pg := range l.Pages {
		for _, ln := range pg.Lines {
			all = append(all, ln)
			pageOf = append(pageOf, p)
		}
	}
	height := func(idx []int) int {
		h := 0
		for _, i := range idx {
			h += fs.lineH[all[i].Style]
		}
		return h
	}
	fits := func(n, h int) bool { return n <= s.TextBudget.LinesPerPage && h <= s.BodyAreaPx() }
	onePage := func(idx []int) bool {
		for _, i := range idx {
			if pageOf[i] != pageOf[idx[0]] {
				return false
			}
		}
		return true
	}

	// 1. Every character of every block, in order: the lines of block k
	// are consecutive and join to its text; blocks never interleave.
	byBlock := make([][]int, len(blocks))
	for i, ln := range all {
		if ln.block < 0 || ln.block >= len(blocks) || (i > 0 && ln.block < all[i-1].block) {
			t.Fatalf("line %d %q: block %d out of order", i, ln.Text, ln.block)
		}
		if ln.Section != blocks[ln.block].Section {
			t.Fatalf("line %q: section %d, block says %d", ln.Text, ln.Section, blocks[ln.block].Section)
		}
		byBlock[ln.block] = append(byBlock[ln.block], i)
	}
	for k, b := range blocks {
		idx := byBlock[k]
		if len(idx) == 0 {
			t.Fatalf("block %d %q has no lines", k, b.Text)
		}
		if all[idx[0]].Cont {
			t.Fatalf("block %d starts with a continuation line", k)
		}
		if got := joinLines(all, idx); got != b.Text {
			t.Fatalf("block %d lines join to %q, want %q", k, got, b.Text)
		}
	}
	if c.Kind != KindSafety {
		checkTails(t, l, all, pageOf, height, fits)
		return
	}

	// 2. Actions: the label with its value, on one line when the action fits
	// a line, on one page when it fits a page.
	for k, b := range blocks {
		idx := byBlock[k]
		want := 0
		if b.Style != StyleHeading {
			for j, a := range c.Resources[b.Section].Actions {
				if NormalizeSpace(ActionText(a)) == b.Text {
					want = j + 1
					break
				}
			}
		}
		for _, i := range idx {
			if all[i].act != want {
				t.Fatalf("line %q: action %d, want %d", all[i].Text, all[i].act, want)
			}
		}
		if want == 0 {
			continue
		}
		checkAction(t, fs, s, all, idx, b.Text, c.Resources[b.Section].Actions[want-1])
		if fits(len(idx), height(idx)) && !onePage(idx) {
			t.Fatalf("action %q split across pages", b.Text)
		}
	}

	// 3. A Call/Text button's number is on its page.
	for p, pg := range l.Pages {
		for _, ctl := range pg.Controls {
			if ctl.Role != RoleLink {
				continue
			}
			ok := false
			for _, ln := range pg.Lines {
				if ln.act > 0 {
					r := c.Resources[ln.Section]
					a := r.Actions[ln.act-1]
					ok = ok || string(a.Type)+":"+r.ID == ctl.ID
				}
			}
			if !ok {
				t.Fatalf("page %d: control %s without its number on the page", p+1, ctl.ID)
			}
		}
	}

	// 4. Resources: whole on one page when they fit; one per page on
	// surfaces that show one per page; the name with what follows it
	// (with its numbers, when they follow it and fit).
	for ri := range c.Resources {
		var idx []int
		var heading, numbers []int
		for k, b := range blocks {
			if b.Section != ri {
				continue
			}
			idx = append(idx, byBlock[k]...)
			switch {
			case b.Style == StyleHeading && len(heading) == 0:
				heading = byBlock[k]
			case all[byBlock[k][0]].act > 0 && len(numbers) == len(idx)-len(heading)-len(byBlock[k]):
				numbers = append(numbers, byBlock[k]...) // the run of actions right after the name
			}
		}
		if len(idx) == 0 {
			t.Fatalf("resource %d has no lines", ri)
		}
		if fits(len(idx), height(idx)) && !onePage(idx) {
			t.Fatalf("resource %d fits a page but is split", ri)
		}
		first := all[idx[0]]
		if OnePerPage(s) && l.Pages[pageOf[idx[0]]].Lines[0] != first {
			t.Fatalf("%s: resource %d does not start a page", l.Device, ri)
		}
		if len(idx) > len(heading) {
			// The name with the line after it, or with all of the action
			// after it when that fits a page (an action is never split to
			// keep a name company).
			next := []int{idx[len(heading)]}
			if nb := all[next[0]].block; all[next[0]].act > 0 && fits(len(byBlock[nb]), height(byBlock[nb])) {
				next = byBlock[nb]
			}
			lead := append(slices.Clone(heading), next...)
			if fits(len(lead), height(lead)) && !onePage(lead) {
				t.Fatalf("resource %d: name %q left without the line after it", ri, first.Text)
			}
			lead = append(slices.Clone(heading), numbers...)
			if len(numbers) > 0 && fits(len(lead), height(lead)) && !onePage(lead) {
				t.Fatalf("resource %d: name %q on another page than its numbers", ri, first.Text)
			}
		}
	}
	checkTails(t, l, all, pageOf, height, fits)
	if !OnePerPage(s) {
		checkFlow(t, l, c, blocks, byBlock, all, pageOf, height, fits)
	}
}

// joinLines joins lines all[idx...] as JoinText does.
func joinLines(all []Line, idx []int) string {
	var b strings.Builder
	for j, i := range idx {
		if j > 0 && !all[i].Cont {
			b.WriteByte(' ')
		}
		b.WriteString(all[i].Text)
	}
	return b.String()
}

// checkAction checks one action's lines: the whole action on one line
// when it fits one; otherwise the value starts on the line of the label's
// last word whenever that word and the value's first unit fit a line.
func checkAction(t *testing.T, fs *faces, s devices.Surface, all []Line, idx []int, text string, a safety.Action) {
	t.Helper()
	m := fs.face(all[idx[0]].Style)
	lineFits := func(x string) bool {
		w, err := m.widthPx(x)
		return err == nil && w <= s.ContentWidth() && utf8.RuneCountInString(x) <= s.TextBudget.CharsPerLine
	}
	if lineFits(text) {
		if len(idx) != 1 {
			t.Fatalf("action %q fits a line but takes %d", text, len(idx))
		}
		return
	}
	v := NormalizeSpace(a.Value)
	off := -1
	for _, cand := range []string{v, bareURL(v)} {
		for o := strings.LastIndex(text, cand); o >= 0 && off < 0; o = strings.LastIndex(text[:o], cand) {
			if o == 0 || text[o-1] == ' ' {
				off = o
			}
			if o == 0 {
				break
			}
		}
		if off >= 0 {
			v = cand
			break
		}
	}
	if off <= 0 {
		return // no label before the value
	}
	// last is the label's last word, or its last no-break span ("0 00:").
	label := atoms(strings.TrimSpace(text[:off]))
	if label[len(label)-1].glue {
		return // the label's end is itself a value glued to the word before it
	}
	last := label[len(label)-1].text()
	// vw is the value's first word (a phone number: all of it).
	vw, _, _ := strings.Cut(v, " ")
	if IsNumber(vw) {
		vw = v
		for _, w := range strings.Fields(v) {
			if !IsNumber(w) {
				vw, _, _ = strings.Cut(v, " ")
				break
			}
		}
	}
	switch {
	case lineFits(last + " " + vw):
		// It fits after the label's last word: it must be there.
	case lineFits(vw):
		// It may start a line of its own, whole.
		for j, i := range idx {
			if strings.HasPrefix(vw, all[i].Text) && len(all[i].Text) < len(vw) && j+1 < len(idx) && all[idx[j+1]].Cont {
				t.Fatalf("action %q: value %q fits a line but is broken", text, vw)
			}
		}
		return
	case IsNumber(vw) || strings.Contains(vw, " "):
		return // a number wider than a line (a returned error elsewhere) or a span
	default:
		// Wider than a line, so broken: its first unit (up to its first
		// URL boundary where a line may break) goes after the label when
		// it fits there.
		unit := vw
		for i := 1; i < len(vw); i++ {
			if strings.IndexByte(boundaryRunes, vw[i-1]) >= 0 && vw[i] != vw[i-1] && breakAllowed(vw, i) {
				unit = vw[:i]
				break
			}
		}
		if !lineFits(last + " " + unit) {
			return
		}
	}
	// Find the line holding byte off of text.
	pos := 0
	for j, i := range idx {
		if j > 0 && !all[i].Cont {
			pos++
		}
		end := pos + len(all[i].Text)
		if off < end {
			if !strings.HasSuffix(all[i].Text[:off-pos], last+" ") {
				t.Fatalf("action %q: value starts line %q without its label %q", text, all[i].Text, last)
			}
			return
		}
		pos = end
	}
	t.Fatalf("action %q: value not found in its lines", text)
}

// checkTails: a page that holds only the continuation of the previous
// page's section could not have fit on that page.
func checkTails(t *testing.T, l *Layout, all []Line, pageOf []int, height func([]int) int, fits func(n, h int) bool) {
	t.Helper()
	start := 0
	var pages [][]int
	for p := range l.Pages {
		var idx []int
		for start < len(all) && pageOf[start] == p {
			idx = append(idx, start)
			start++
		}
		pages = append(pages, idx)
	}
	for p := 1; p < len(pages); p++ {
		prev, cur := pages[p-1], pages[p]
		if len(prev) == 0 || len(cur) == 0 {
			t.Fatalf("page %d or %d is empty", p, p+1)
		}
		sec := all[prev[len(prev)-1]].Section
		tail := true
		for _, i := range cur {
			tail = tail && all[i].Section == sec
		}
		if tail && fits(len(prev)+len(cur), height(prev)+height(cur)) {
			t.Fatalf("%s: page %d holds only a tail (%q…) that fits on page %d", l.Device, p+1, all[cur[0]].Text, p)
		}
	}
}

// checkFlow (surfaces that do not show one resource per page): a page that
// ends with the tail of a resource takes the next resource when it could,
// i.e. when the whole next resource fits there, or when it cannot fit any
// page and its name with the line after it (and its numbers) fit there.
func checkFlow(t *testing.T, l *Layout, c Card, blocks []Block, byBlock [][]int, all []Line, pageOf []int, height func([]int) int, fits func(n, h int) bool) {
	t.Helper()
	for ri := 1; ri < len(c.Resources); ri++ {
		var idx []int
		firstBlock := -1
		for k, b := range blocks {
			if b.Section == ri {
				if firstBlock < 0 {
					firstBlock = k
				}
				idx = append(idx, byBlock[k]...)
			}
		}
		p := pageOf[idx[0]]
		if p == 0 || l.Pages[p].Lines[0] != all[idx[0]] {
			continue // it starts mid-page, or on page 1
		}
		var prev []int
		for i := range all {
			if pageOf[i] == p-1 {
				prev = append(prev, i)
			}
		}
		n, h := len(prev), height(prev)
		if fits(n+len(idx), h+height(idx)) {
			t.Fatalf("%s: resource %d starts page %d though it fits on page %d", l.Device, ri, p+1, p)
		}
		if fits(len(idx), height(idx)) {
			continue // it fits a page: it starts one rather than split
		}
		// Name + the line after it: the least the implementation keeps
		// together; name + all its numbers: the most.
		heading := byBlock[firstBlock]
		if len(idx) <= len(heading) {
			continue
		}
		least := append(slices.Clone(heading), idx[len(heading)])
		if nb := all[idx[len(heading)]].block; all[idx[len(heading)]].act > 0 && fits(len(byBlock[nb]), height(byBlock[nb])) {
			least = append(slices.Clone(heading), byBlock[nb]...)
		}
		if !fits(n+len(least), h+height(least)) {
			continue
		}
		most := slices.Clone(heading)
		for k := firstBlock + 1; k < len(blocks) && blocks[k].Section == ri && all[byBlock[k][0]].act > 0; k++ {
			most = append(most, byBlock[k]...)
		}
		if len(most) == len(heading) || fits(n+len(most), h+height(most)) {
			t.Fatalf("%s: resource %d (cannot fit a page) starts page %d though its start fits on page %d", l.Device, ri, p+1, p)
		}
	}
}

// dumpLayout renders a layout's pages as text, for failure messages.
func dumpLayout(l *Layout) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%d lines/page):\n", l.Device, l.Surface.ID, l.Surface.TextBudget.LinesPerPage)
	for _, pg := range l.Pages {
		fmt.Fprintf(&b, "--- %s %v controls %v\n", pg.Indicator(), pg.Resources, pg.Controls)
		for _, ln := range pg.Lines {
			cont := " "
			if ln.Cont {
				cont = "+"
			}
			fmt.Fprintf(&b, "  s%d b%d a%d %-7s %s%s\n", ln.Section, ln.block, ln.act, ln.Style, cont, ln.Text)
		}
	}
	return b.String()
}

// FuzzPacking lays out a safety card whose first resource is built from
// the fuzzer's strings (name, description, an action's label and value) on
// every visual profile and checks every paging and packing invariant.
func FuzzPacking(f *testing.F) {
	f.Add("Samaritans", "Free, any time, for anyone who is struggling to cope or needs someone to listen.", "Visit", "https://www.samaritans.org/how-we-can-help/contact-samaritan/", uint8(3))
	f.Add("Lifeline", "24/7", "Call us on", "13 11 14", uint8(0))
	f.Add("Shout", "Text support.", "", "85258", uint8(1))
	f.Add("Find A Helpline", strings.Repeat("abcdefghij", 9), "Chat at", "www.example.org/"+strings.Repeat("segment", 12)+"?a=1&b=2", uint8(2))
	f.Add("x", "y", "Phone:", "0800 111 0 111", uint8(0))
	f.Add("n", "d", "Help site", "example.org/2026/11/1-800-273-8255/x", uint8(3))
	var profiles []devices.Profile
	for _, p := range devices.Builtins() {
		if _, ok := p.Display(); ok {
			profiles = append(profiles, p)
		}
	}
	types := []safety.ActionType{safety.ActionCall, safety.ActionText, safety.ActionChat, safety.ActionURL}
	f.Fuzz(func(t *testing.T, name, desc, label, value string, kind uint8) {
		if len(name)+len(desc)+len(label)+len(value) > 2000 {
			return // bounded: a resource is a few hundred characters
		}
		r := safety.Resource{ID: "fz", Name: name, Description: desc,
			Actions: []safety.Action{{Type: types[int(kind)%len(types)], Label: label, Value: value}, {Type: safety.ActionCall, Value: "988"}}}
		c := Card{ID: "s", Kind: KindSafety, Title: SafetyTitle, Resources: []safety.Resource{resCTL, r, resSamaritans, r}}
		if c.Validate() != nil {
			return
		}
		for _, p := range profiles {
			l, err := LayoutCard(c, p)
			if err != nil {
				s, _ := p.Display()
				checkErr(t, err, c, s)
				continue
			}
			checkLayout(t, l, c, nil)
		}
	})
}
