package glasses

import (
	"errors"
	"fmt"
	"math/rand"
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
	return base
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
