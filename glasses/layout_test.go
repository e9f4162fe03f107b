package glasses

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/safety"
)

func mustProfile(t testing.TB, id string) devices.Profile {
	t.Helper()
	p, err := devices.Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustSafety(t testing.TB, rs ...safety.Resource) Card {
	t.Helper()
	c, err := NewSafetyCard("crisis-1", safety.Assessment{Level: safety.LevelCrisis, DisplayRequired: true, Resources: rs})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNormalizeSpace(t *testing.T) {
	tests := map[string]string{
		"":                        "",
		"  a  ":                   "a",
		"a\t\nb":                  "a b",
		"a\u00a0\u2003b":          "a b",
		"\u3000x\u2028y\r\n":      "x y",
		"one  two\n\nthree":       "one two three",
		"keep-punct…, ünïcödé!  ": "keep-punct…, ünïcödé!",
	}
	for in, want := range tests {
		if got := NormalizeSpace(in); got != want {
			t.Errorf("NormalizeSpace(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsNumberAndSpans(t *testing.T) {
	for tok, want := range map[string]bool{
		"988": true, "741741": true, "116": true, "+1": true, "(800)": true, "273-8255,": true, "24/7,": true,
		"988lifeline.org/chat": false, "HOME": false, "": false, "--": false, "3rd": false,
	} {
		if got := IsNumber(tok); got != want {
			t.Errorf("IsNumber(%q) = %v, want %v", tok, got, want)
		}
	}
	got := []string{}
	for _, a := range atoms("Call 116 123 or text HOME to 741741 now, or 13 11 14 in AU") {
		got = append(got, a.text())
	}
	want := []string{"Call 116 123", "or", "text HOME to 741741", "now,", "or", "13 11 14", "in", "AU"}
	if !slices.Equal(got, want) {
		t.Fatalf("atoms = %q, want %q", got, want)
	}
}

func TestSafetyCardMetaOneResourcePerPage(t *testing.T) {
	p := mustProfile(t, devices.MetaRayBanDisplay)
	l, err := LayoutCard(mustSafety(t, threeResources()...), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Pages) != 3 {
		t.Fatalf("pages = %d, want 3 (one resource per page)", len(l.Pages))
	}
	for i, pg := range l.Pages {
		if pg.N != i+1 || pg.Of != 3 || pg.Indicator() != []string{"1/3", "2/3", "3/3"}[i] {
			t.Errorf("page %d indicator %s", i, pg.Indicator())
		}
		if !slices.Equal(pg.Title, []string{SafetyTitle}) {
			t.Errorf("page %d title %q", i+1, pg.Title)
		}
		if !slices.Equal(pg.Resources, []int{i}) {
			t.Errorf("page %d resources %v, want [%d]", i+1, pg.Resources, i)
		}
		if pg.Lines[0].Style != StyleHeading || pg.Lines[0].Text != threeResources()[i].Name {
			t.Errorf("page %d starts with %+v", i+1, pg.Lines[0])
		}
		if len(pg.Controls) != 2 || pg.Focus != 0 || pg.Controls[1].Role != RoleLink {
			t.Errorf("page %d controls %+v focus %d", i+1, pg.Controls, pg.Focus)
		}
	}
	if l.Pages[0].Controls[0].ID != ControlNext || l.Pages[2].Controls[0].ID != ControlDone {
		t.Errorf("nav controls: %v ... %v", l.Pages[0].Controls, l.Pages[2].Controls)
	}
	if l.Pages[0].Controls[1].ID != "call:us-988" || l.Pages[1].Controls[1].ID != "text:us-ctl" {
		t.Errorf("link controls: %v %v", l.Pages[0].Controls, l.Pages[1].Controls)
	}
	// Phone numbers stand large and whole.
	lines := map[string]Style{}
	for _, pg := range l.Pages {
		for _, ln := range pg.Lines {
			lines[ln.Text] = ln.Style
		}
	}
	for _, want := range []string{"Call 988", "Text 988", "Text HOME to 741741", "Call 116 123"} {
		if st, ok := lines[want]; !ok || st != StyleEmph {
			t.Errorf("line %q: present=%v style=%s", want, ok, st)
		}
	}
}

func TestManyResourcesKeepOrderAndNeverDrop(t *testing.T) {
	var rs []safety.Resource
	for i := range 12 {
		r := []safety.Resource{res988, resCTL, resSamaritans, resLifeline}[i%4]
		r.ID = r.ID + "-" + string(rune('a'+i))
		r.Name = r.Name + " " + string(rune('A'+i))
		rs = append(rs, r)
	}
	for _, id := range devices.IDs() {
		p := mustProfile(t, id)
		l, err := LayoutCard(mustSafety(t, rs...), p)
		if id == devices.VoiceOnly {
			if !errors.Is(err, ErrNoDisplay) {
				t.Fatalf("voice-only: err = %v, want ErrNoDisplay", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		next := 0
		for _, pg := range l.Pages {
			for _, ln := range pg.Lines {
				if ln.Section < next-1 || ln.Section > next {
					t.Fatalf("%s: resource %d out of order (expected %d or %d)", id, ln.Section, next-1, next)
				}
				if ln.Section == next {
					if OnePerPage(l.Surface) && pg.Lines[0] != ln {
						t.Errorf("%s: resource %d does not start a page", id, ln.Section)
					}
					if ln.Text != rs[next].Name && !strings.HasPrefix(rs[next].Name, ln.Text) {
						t.Errorf("%s: resource %d starts with %q", id, next, ln.Text)
					}
					next++
				}
			}
		}
		if next != len(rs) {
			t.Errorf("%s: %d of %d resources shown", id, next, len(rs))
		}
		checkLayout(t, l, mustSafety(t, rs...), nil)
	}
}

func TestGlyphErrorNamesRune(t *testing.T) {
	p := mustProfile(t, devices.MetaRayBanDisplay)
	for _, tc := range []struct {
		text string
		r    rune
	}{{"Feeling 😀 today", 0x1F600}, {"求助 hotline", '求'}, {"bell\x07", 0x07}, {"zero\u200bwidth", 0x200B}, {"e\u0301", 0x301}} {
		_, err := LayoutCard(Card{Kind: KindInfo, Title: "Note", Body: tc.text}, p)
		var ge *GlyphError
		if !errors.As(err, &ge) || !errors.Is(err, ErrGlyph) || ge.Rune != tc.r {
			t.Errorf("%q: err = %v, want GlyphError for %U", tc.text, err, tc.r)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%U", tc.r)) {
			t.Errorf("error %q does not name the rune", err)
		}
	}
	// Greek, Cyrillic and Latin-1 are covered.
	if _, err := LayoutCard(Card{Kind: KindInfo, Title: "Ωmega", Body: "Привет, καλημέρα, größer, çà"}, p); err != nil {
		t.Fatalf("covered scripts: %v", err)
	}
}

func TestNumbersNeverSplit(t *testing.T) {
	num40 := strings.Repeat("1234567890", 4)
	body := "Reference " + num40 + " please."
	// Meta: 38 runes per line < 40 digits: a returned error, never a cut.
	_, err := LayoutCard(Card{Kind: KindInfo, Title: "Ref", Body: body}, mustProfile(t, devices.MetaRayBanDisplay))
	var ue *UnbreakableError
	if !errors.As(err, &ue) || ue.Token != num40 || ue.LimitRunes != 38 {
		t.Fatalf("meta: err = %v, want UnbreakableError for the number", err)
	}
	// Browser: 72 runes per line: the number fits, whole, on one line.
	l, err := LayoutCard(Card{Kind: KindInfo, Title: "Ref", Body: body}, mustProfile(t, devices.Browser))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pg := range l.Pages {
		for _, ln := range pg.Lines {
			if strings.Contains(ln.Text, num40) {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("browser: 40-digit number not whole on one line")
	}
	// A digit run inside a long non-number token is not split either.
	num45 := num40 + "12345"
	_, err = LayoutCard(Card{Kind: KindInfo, Title: "Ref", Body: "id:" + num45 + "x"}, mustProfile(t, devices.EvenG1))
	if !errors.As(err, &ue) || ue.Token != num45 {
		t.Fatalf("g1 digit run: err = %v", err)
	}
}

func TestLongURLBreaksAtCharacters(t *testing.T) {
	url := "https://www.example.org/" + strings.Repeat("very-long-path-segment/", 6) + "end"
	c := Card{Kind: KindInfo, Title: "Link", Body: "Open " + url + " now."}
	for _, id := range []string{devices.MetaRayBanDisplay, devices.EvenG1} {
		l, err := LayoutCard(c, mustProfile(t, id))
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		conts := 0
		for _, pg := range l.Pages {
			for _, ln := range pg.Lines {
				if ln.Cont {
					conts++
				}
			}
		}
		if conts == 0 {
			t.Errorf("%s: URL was not broken across lines", id)
		}
		if got := NormalizeSpace(JoinText(l.Pages)); got != c.SourceText(l.Surface) {
			t.Errorf("%s: joined %q", id, got)
		}
	}
}

func TestTitleBounds(t *testing.T) {
	long := strings.Repeat("Title words ", 10)
	_, err := LayoutCard(Card{Kind: KindInfo, Title: long, Body: "x"}, mustProfile(t, devices.MetaRayBanDisplay))
	if !errors.Is(err, ErrTitleTooLong) {
		t.Fatalf("err = %v, want ErrTitleTooLong", err)
	}
	l, err := LayoutCard(Card{Kind: KindInfo, Title: "Two line title for the Meta display", Body: "x"}, mustProfile(t, devices.MetaRayBanDisplay))
	if err != nil || len(l.Pages[0].Title) != 2 {
		t.Fatalf("two-line title: %v %v", err, l)
	}
}

func TestCardValidate(t *testing.T) {
	bad := []Card{
		{Kind: KindSafety, Title: "Help"},
		{Kind: KindSafety, Title: "Help", Resources: []safety.Resource{{ID: "x", Name: " "}}},
		{Kind: KindSafety, Title: "Help", Resources: []safety.Resource{{ID: "x", Name: "X", Actions: []safety.Action{{Type: safety.ActionCall}}}}},
		{Kind: KindAction, Title: "Send?", Actions: []Action{{ID: "a", Label: "Send", Role: RoleCommit}}},
		{Kind: KindAction, Title: "Send?", Actions: []Action{{ID: "a", Label: "Send", Role: RoleCommit}, {ID: "b", Label: "Send too", Role: RoleCommit}}},
		{Kind: KindInfo, Title: "", Body: "x"},
		{Kind: KindInfo, Title: "t", Body: " \n "},
		{Kind: "toast", Title: "t", Body: "x"},
	}
	for i, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrInvalidCard) {
			t.Errorf("case %d: err = %v, want ErrInvalidCard", i, err)
		}
	}
	if _, err := NewSafetyCard("x", safety.Assessment{}); !errors.Is(err, ErrInvalidCard) {
		t.Errorf("empty safety card: %v", err)
	}
	if (Card{Kind: KindSafety, Priority: 3}).Rank() != PrioritySafety || (Card{Kind: KindInfo}).Rank() == PrioritySafety {
		t.Error("only safety ranks as safety")
	}
}

func TestPromptCard(t *testing.T) {
	c, err := NewPrompt("confirm-7", "Send message to Sam?", "“Running 10 minutes late.” via SMS.",
		Action{ID: "send", Label: "Send", Voice: []string{"send", "send it"}},
		Action{ID: "cancel", Label: "Don't send", Voice: []string{"don't send"}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := LayoutCard(c, mustProfile(t, devices.MetaRayBanDisplay))
	if err != nil {
		t.Fatal(err)
	}
	last := l.Pages[len(l.Pages)-1]
	if len(last.Controls) != 2 || last.Controls[last.Focus].ID != "cancel" || last.Controls[0].Label != "Send" {
		t.Fatalf("controls %+v focus %d", last.Controls, last.Focus)
	}
	if l.TimeoutMS != DefaultConfig().PromptTimeoutMS {
		t.Errorf("timeout %d", l.TimeoutMS)
	}
	// Without buttons the card says what to say.
	g1, err := LayoutCard(c, mustProfile(t, devices.EvenG1))
	if err != nil {
		t.Fatal(err)
	}
	if j := JoinText(g1.Pages); !strings.Contains(j, `Say "send" or "don't send".`) {
		t.Fatalf("g1 prompt text %q", j)
	}
	if _, err := NewPrompt("x", "t", "", Action{ID: "a", Label: "Send this message right now"}, Action{ID: "b", Label: "No"}); !errors.Is(err, ErrInvalidCard) {
		t.Errorf("long label: %v", err)
	}
}

func TestActionText(t *testing.T) {
	for _, tc := range []struct {
		a    safety.Action
		want string
	}{
		{safety.Action{Type: safety.ActionCall, Value: "988"}, "Call 988"},
		{safety.Action{Type: safety.ActionText, Value: "741741", Label: "Text HOME to 741741"}, "Text HOME to 741741"},
		{safety.Action{Type: safety.ActionCall, Value: "116 123", Label: "Call Samaritans"}, "Call Samaritans: 116 123"},
		{safety.Action{Type: safety.ActionChat, Value: "988lifeline.org/chat"}, "Chat: 988lifeline.org/chat"},
		{safety.Action{Type: safety.ActionURL, Value: "https://findahelpline.com"}, "https://findahelpline.com"},
		{safety.Action{Type: safety.ActionURL, Value: "https://findahelpline.com", Label: "findahelpline.com"}, "findahelpline.com"},
		{safety.Action{Type: safety.ActionChat, Value: "https://988lifeline.org/", Label: "Chat at 988lifeline.org"}, "Chat at 988lifeline.org"},
		{safety.Action{Type: safety.ActionURL, Value: "https://example.org/help", Label: "Help site"}, "Help site: https://example.org/help"},
	} {
		if got := ActionText(tc.a); got != tc.want {
			t.Errorf("ActionText(%+v) = %q, want %q", tc.a, got, tc.want)
		}
	}
}

func TestConfig(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c   Config
		key string
	}{{Config{MaxPages: 0, PromptTimeoutMS: 20000}, "glasses.max_pages"}, {Config{MaxPages: 5, PromptTimeoutMS: 10}, "glasses.prompt_timeout_ms"}} {
		if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("Validate(%+v) = %v", tc.c, err)
		}
	}
	e, err := New(Config{MaxPages: 1, PromptTimeoutMS: 5000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := Card{Kind: KindInfo, Title: "Long", Body: strings.Repeat("word ", 400)}
	if _, err := e.Layout(long, mustProfile(t, devices.EvenG1)); !errors.Is(err, ErrLayout) {
		t.Errorf("max_pages: %v", err)
	}
	// Safety ignores max_pages: it is never cut.
	if _, err := e.Layout(mustSafety(t, threeResources()...), mustProfile(t, devices.EvenG1)); err != nil {
		t.Errorf("safety with max_pages 1: %v", err)
	}
}

func TestSmallSurfacesPutNumbersFirst(t *testing.T) {
	l, err := LayoutCard(mustSafety(t, threeResources()...), mustProfile(t, devices.EvenG1))
	if err != nil {
		t.Fatal(err)
	}
	// Every resource's first page shows its name and its first number.
	for i, r := range threeResources() {
		for _, pg := range l.Pages {
			if pg.Lines[0].Section != i || pg.Lines[0].Text != r.Name {
				continue
			}
			if want := ActionText(r.Actions[0]); pg.Lines[1].Text != want {
				t.Errorf("%s: second line %q, want %q", r.ID, pg.Lines[1].Text, want)
			}
		}
	}
}

func TestLayoutFailureLogsNoText(t *testing.T) {
	var buf strings.Builder
	e, err := New(DefaultConfig(), slog.New(slog.NewTextHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	secret := "555 0199 8888 7777 6666 5555 4444 3333 2222 1111 0000 9999"
	_, err = e.Layout(Card{Kind: KindInfo, Title: "Call", Body: "call " + strings.ReplaceAll(secret, " ", "")}, mustProfile(t, devices.EvenG1))
	if !errors.Is(err, ErrUnbreakable) {
		t.Fatalf("err = %v", err)
	}
	out := buf.String()
	if !strings.Contains(out, "reason=unbreakable") || !strings.Contains(out, "device=even-g1") || strings.Contains(out, "5550199") {
		t.Fatalf("log = %q", out)
	}
}

// resVisit is the case a new user met: a resource whose last action is a
// labelled link, one line too long for a Meta page when "Visit:" and the
// address sat on separate lines. The page after held only the address's tail.
var resVisit = safety.Resource{
	ID: "gb-samaritans", Name: "Samaritans", Country: "GB",
	Description: "Free, any time, for anyone who is struggling to cope or needs someone to listen.",
	Hours:       "24/7",
	Actions: []safety.Action{{Type: safety.ActionCall, Value: "116 123"},
		{Type: safety.ActionURL, Label: "Visit", Value: "https://www.samaritans.org/how-we-can-help/contact-samaritan/"}},
}

var resShout = safety.Resource{
	ID: "gb-shout", Name: "Shout", Country: "GB",
	Description: "Free, confidential text support for anyone in the UK who is struggling to cope.",
	Actions:     []safety.Action{{Type: safety.ActionText, Value: "85258", Label: "Text 85258"}},
}

func pageTexts(l *Layout) [][]string {
	out := make([][]string, len(l.Pages))
	for i, pg := range l.Pages {
		for _, ln := range pg.Lines {
			out[i] = append(out[i], ln.Text)
		}
	}
	return out
}

func TestLabelStaysWithValue(t *testing.T) {
	c := mustSafety(t, resVisit, resShout)
	l, err := LayoutCard(c, mustProfile(t, devices.MetaRayBanDisplay))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Samaritans", "Free, any time, for anyone who is", "struggling to cope or needs someone to", "listen.", "24/7", "Call 116 123",
			"Visit: https://www.samaritans.org/", "how-we-can-help/contact-samaritan/"},
		{"Shout", "Free, confidential text support for", "anyone in the UK who is struggling to", "cope.", "Text 85258"},
	}
	if got := pageTexts(l); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("meta pages:\n got %q\nwant %q", got, want)
	}
	if !l.Pages[0].Lines[7].Cont || l.Pages[0].Lines[6].Cont {
		t.Errorf("continuation flags: %+v", l.Pages[0].Lines[6:])
	}
	// A label that wraps keeps its last word with the value, on every
	// profile; a label whose value fits a line of its own keeps it whole.
	r := resVisit
	r.Actions = []safety.Action{{Type: safety.ActionChat, Label: "Chat online with a trained volunteer at", Value: "https://988lifeline.org/chat"}}
	for _, id := range []string{devices.MetaRayBanDisplay, devices.EvenG1, devices.EvenG2, devices.Phone} {
		l, err := LayoutCard(mustSafety(t, r), mustProfile(t, id))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, pg := range l.Pages {
			for _, ln := range pg.Lines {
				found = found || strings.HasSuffix(ln.Text, "at: https://988lifeline.org/chat") || strings.HasSuffix(ln.Text, "at: https://988lifeline.org/")
			}
		}
		if !found {
			t.Errorf("%s: value left its label: %q", id, pageTexts(l))
		}
		checkLayout(t, l, mustSafety(t, r), nil)
	}
}

func TestURLWrapsAtBoundaries(t *testing.T) {
	meta := mustProfile(t, devices.MetaRayBanDisplay)
	s, _ := meta.Display()
	fs, err := facesFor(s)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 50)
	for _, tc := range []struct {
		text  string
		runes int
		want  []string
	}{
		// Prefer "/" when it fills at least half the line.
		{"https://www.samaritans.org/how-we-can-help/contact-samaritan/", 38, []string{"https://www.samaritans.org/", "how-we-can-help/contact-samaritan/"}},
		// Else the last boundary that fits: ".", "-", "?", "&".
		{"example.org/how-to-sleep-better-after-a-long-day?ref=vera&id=7", 30, []string{"example.org/how-to-sleep-", "better-after-a-long-day?", "ref=vera&id=7"}},
		{"findahelpline.com/a?topic=suicide-prevention&country=nz&lang=en", 28, []string{"findahelpline.com/a?", "topic=suicide-prevention&", "country=nz&lang=en"}},
		// A segment longer than a line breaks at characters, nothing dropped.
		{"https://www.example.org/" + long + "/end", 30, []string{"https://www.example.org/xxxxxx", strings.Repeat("x", 30), "xxxxxxxxxxxxxx/end"}},
		// Never inside a number or a date.
		{"example.org/help/2026/11/call-1-800-273-8255/now", 20, []string{"example.org/help/", "2026/11/call-", "1-800-273-8255/now"}},
		{"example.org/1-800-273-8255", 16, []string{"example.org/", "1-800-273-8255"}},
		// "//" is never split.
		{"https://" + long, 20, []string{"https://xxxxxxxxxxxx", strings.Repeat("x", 20), "xxxxxxxxxxxxxxxxxx"}},
	} {
		w, err := newWrapper(fs, StyleBody, s.ContentWidth(), tc.runes, "test")
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.wrap(tc.text)
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		var texts []string
		joined := ""
		for i, l := range got {
			texts = append(texts, l.text)
			if l.cont != (i > 0) {
				t.Errorf("%q line %d cont=%v", tc.text, i, l.cont)
			}
			joined += l.text
		}
		if joined != tc.text {
			t.Errorf("joined %q, want %q", joined, tc.text)
		}
		if !slices.Equal(texts, tc.want) {
			t.Errorf("%q at %d runes:\n got %q\nwant %q", tc.text, tc.runes, texts, tc.want)
		}
	}
	// A phone number inside a token wider than the line is an error, not a cut.
	w, _ := newWrapper(fs, StyleBody, s.ContentWidth(), 10, "test")
	var ue *UnbreakableError
	if _, err := w.wrap("tel:1-800-273-8255"); !errors.As(err, &ue) || ue.Token != "1-800-273-8255" {
		t.Fatalf("err = %v", err)
	}
}

// On 4-line surfaces resources flow: the page after a resource's tail takes
// the next resource's name and numbers when they fit, a resource that fits
// a page is never split, and a name never ends a page without its numbers.
func TestSmallSurfacesFlowWithoutTailPages(t *testing.T) {
	rs := []safety.Resource{res988, resLifeline, resCTL}
	rs[1].Hours = "24/7"
	for _, id := range []string{devices.EvenG1, devices.Mentra} {
		c := mustSafety(t, rs...)
		l, err := LayoutCard(c, mustProfile(t, id))
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{
			{"988 Suicide & Crisis Lifeline", "Call 988", "Text 988", "Chat: 988lifeline.org/chat"},
			{"Free, confidential support, 24/7, in", "English and Spanish.", "Lifeline Australia", "Call 13 11 14"},
			{"24-hour crisis support and suicide", "prevention.", "24/7"},
			{"Crisis Text Line", "Text HOME to 741741", "Free, 24/7 text support with a trained", "volunteer."},
		}
		if got := pageTexts(l); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("%s pages:\n got %q\nwant %q", id, got, want)
		}
		checkLayout(t, l, c, nil)
	}
}

// The Call/Text button dials a number shown on its page: a resource whose
// description fills a page gets the button on the page with the number.
func TestLinkControlOnThePageOfItsNumber(t *testing.T) {
	r := res988
	r.Description = strings.Repeat("Free, confidential support for anyone, any time. ", 5)
	l, err := LayoutCard(mustSafety(t, r, resCTL), mustProfile(t, devices.MetaRayBanDisplay))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Pages) != 3 {
		t.Fatalf("pages %q", pageTexts(l))
	}
	if ids := controlIDs(l.Pages[0]); !slices.Equal(ids, []string{ControlNext}) {
		t.Errorf("page 1 (no number) controls %v", ids)
	}
	if ids := controlIDs(l.Pages[1]); !slices.Equal(ids, []string{ControlNext, "call:us-988"}) || !slices.Contains(pageTexts(l)[1], "Call 988") {
		t.Errorf("page 2 controls %v lines %q", ids, pageTexts(l)[1])
	}
	if ids := controlIDs(l.Pages[2]); !slices.Equal(ids, []string{ControlDone, "text:us-ctl"}) {
		t.Errorf("page 3 controls %v", ids)
	}
}

func controlIDs(p Page) []string {
	var ids []string
	for _, c := range p.Controls {
		ids = append(ids, c.ID)
	}
	return ids
}

// The catalog as one card, on every profile: what a person pages through
// when the region is unknown. Goldens record the packing.
func TestGoldenPacking(t *testing.T) {
	cards := map[string]Card{"visit": mustSafety(t, resVisit, resShout)}
	for name, c := range cards {
		for _, p := range devices.Builtins() {
			if _, ok := p.Display(); !ok {
				continue
			}
			t.Run(name+"/"+p.ID, func(t *testing.T) {
				l, err := LayoutCard(c, p)
				if err != nil {
					t.Fatal(err)
				}
				checkLayout(t, l, c, nil)
				doc, err := l.Ops()
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.MarshalIndent(doc, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				compareGolden(t, filepath.Join(goldenDir, fmt.Sprintf("%s.%s.ops.json", name, p.ID)), append(got, '\n'))
			})
		}
	}
}

// BenchmarkLayoutCard: one layout per card and profile — the three-resource
// card and the whole embedded catalog as one card (13 resources).
func BenchmarkLayoutCard(b *testing.B) {
	cat, err := safety.DefaultCatalog()
	if err != nil {
		b.Fatal(err)
	}
	cards := []struct {
		name string
		card Card
	}{{"safety3", mustSafety(b, threeResources()...)}, {"catalog", mustSafety(b, cat.All()...)}}
	for _, c := range cards {
		for _, p := range devices.Builtins() {
			if _, ok := p.Display(); !ok {
				continue
			}
			b.Run(c.name+"/"+p.ID, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := LayoutCard(c.card, p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
