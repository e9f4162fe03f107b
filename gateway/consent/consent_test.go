package consent_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/consent"
)

func TestClassifyTable(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "consent", "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	counts := map[consent.Verdict]int{}
	for line := 1; sc.Scan(); line++ {
		row := sc.Text()
		if strings.HasPrefix(row, "#") || row == "" {
			continue
		}
		want, text, ok := strings.Cut(row, "\t")
		if !ok {
			t.Fatalf("cases.tsv:%d: no tab", line)
		}
		var v consent.Verdict
		switch want {
		case "yes":
			v = consent.Yes
		case "no":
			v = consent.No
		case "ambiguous":
			v = consent.Ambiguous
		default:
			t.Fatalf("cases.tsv:%d: verdict %q", line, want)
		}
		n++
		counts[v]++
		if got := consent.Classify(text); got != v {
			t.Errorf("cases.tsv:%d: Classify(%q) = %v, want %v", line, text, got, v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 80 || counts[consent.Yes] < 20 || counts[consent.No] < 20 || counts[consent.Ambiguous] < 20 {
		t.Fatalf("only %d cases (%v): the table must hold at least 80, 20 of each", n, counts)
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"yes", "don't send it", "yes but wait", "", "not not not yes", "’", "of course not?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := consent.Classify(s)
		if v != consent.Yes && v != consent.No && v != consent.Ambiguous {
			t.Fatalf("Classify(%q) = %d", s, v)
		}
		// Hedging or questioning any answer never makes it a yes.
		if consent.Classify(s+" maybe") == consent.Yes || consent.Classify(s+"?") == consent.Yes {
			t.Fatalf("a hedged or questioned %q classified yes", s)
		}
	})
}

func newApproval(t *testing.T) (*consent.Approval, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	a, err := consent.NewApproval(consent.DefaultConfig(), clk, "act_1", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return a, clk
}

func mustDecision(t *testing.T, a *consent.Approval, status consent.Status, via, surface string, at time.Time) {
	t.Helper()
	d, ok := a.Decision()
	if !ok || d.Status != status || d.Via != via || d.Surface != surface || !d.At.Equal(at) || d.ActionID != "act_1" {
		t.Fatalf("decision = %+v (%v), want %s via %s on %q at %v", d, ok, status, via, surface, at)
	}
}

func TestTapApproves(t *testing.T) {
	a, clk := newApproval(t)
	clk.Advance(time.Minute)
	r, err := a.Tap(true, "phone")
	if err != nil || !r.Decided || r.Status != consent.Approved {
		t.Fatalf("tap approve = %+v, %v", r, err)
	}
	mustDecision(t, a, consent.Approved, consent.ViaTap, "phone", clk.Now())
	// Final: a later decline changes nothing.
	if r, err := a.Tap(false, "phone"); err != consent.ErrSettled || r.Status != consent.Approved {
		t.Fatalf("tap after decision = %+v, %v", r, err)
	}
}

func TestTapDeclines(t *testing.T) {
	a, _ := newApproval(t)
	if r, _ := a.Tap(false, "glasses"); r.Status != consent.Declined {
		t.Fatalf("tap decline = %+v", r)
	}
}

func TestKeys(t *testing.T) {
	// A stray Enter lands on decline: focus starts there.
	a, _ := newApproval(t)
	if a.Focus() != consent.FocusDecline {
		t.Fatalf("initial focus %s", a.Focus())
	}
	if r, _ := a.Key(consent.KeySelect, "glasses"); r.Status != consent.Declined {
		t.Fatalf("select on initial focus = %+v", r)
	}
	// next → approve, select approves.
	a, _ = newApproval(t)
	a.Key(consent.KeyNext, "glasses")
	if r, _ := a.Key(consent.KeySelect, "glasses"); r.Status != consent.Approved {
		t.Fatalf("next+select = %+v", r)
	}
	mustDecision(t, a, consent.Approved, consent.ViaKey, "glasses", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	// next, prev → back on decline; back dismisses without a decision.
	a, _ = newApproval(t)
	a.Key(consent.KeyNext, "glasses")
	a.Key(consent.KeyPrev, "glasses")
	if r, _ := a.Key(consent.KeyBack, "glasses"); r.Status != consent.Pending {
		t.Fatalf("back = %+v", r)
	}
	if _, err := a.Key("enter", "glasses"); err == nil {
		t.Fatal("unknown key accepted")
	}
	if r, _ := a.Key(consent.KeySelect, "glasses"); r.Status != consent.Declined {
		t.Fatalf("next+prev+select = %+v", r)
	}
}

func TestClearSpokenYesAndNo(t *testing.T) {
	a, clk := newApproval(t)
	if !a.Spoken() {
		t.Fatal("first ask refused")
	}
	clk.Advance(2 * time.Second)
	if r := a.Speech("yes, send it", "voice"); r.Status != consent.Approved || !r.Decided {
		t.Fatalf("clear yes = %+v", r)
	}
	mustDecision(t, a, consent.Approved, consent.ViaSpeech, "voice", clk.Now())

	a, _ = newApproval(t)
	a.Spoken()
	if r := a.Speech("no, don't", "voice"); r.Status != consent.Declined {
		t.Fatalf("clear no = %+v", r)
	}
}

func TestSpeechOutsideTheAnswerWindowIsIgnored(t *testing.T) {
	a, clk := newApproval(t)
	// Never asked: a "yes" in conversation is not an answer.
	if r := a.Speech("yes", "voice"); !r.Ignored || r.Status != consent.Pending {
		t.Fatalf("yes before the prompt was spoken = %+v", r)
	}
	a.Spoken()
	clk.Advance(consent.DefaultConfig().AnswerWindow)
	if r := a.Speech("yes", "voice"); !r.Ignored || r.Status != consent.Pending {
		t.Fatalf("yes after the answer window = %+v", r)
	}
}

func TestAmbiguousAsksAgainBounded(t *testing.T) {
	a, _ := newApproval(t)
	cfg := consent.DefaultConfig()
	for i := range cfg.MaxAsks {
		if !a.Spoken() {
			t.Fatalf("ask %d refused", i+1)
		}
		r := a.Speech("maybe", "voice")
		if r.Status != consent.Pending || r.AskAgain != (i+1 < cfg.MaxAsks) {
			t.Fatalf("ambiguous answer %d = %+v", i+1, r)
		}
	}
	if a.Spoken() {
		t.Fatalf("asked a %dth time", cfg.MaxAsks+1)
	}
	if a.Asks() != cfg.MaxAsks {
		t.Fatalf("asks = %d", a.Asks())
	}
	// Still pending, and a tap still works.
	if r, _ := a.Tap(true, "phone"); r.Status != consent.Approved {
		t.Fatalf("tap after the asks ran out = %+v", r)
	}
}

func TestSilenceNeverApproves(t *testing.T) {
	a, clk := newApproval(t)
	cfg := consent.DefaultConfig()
	asks := 0
	for a.Spoken() {
		asks++
		if d := a.NextDeadline(); !d.Equal(clk.Now().Add(cfg.AnswerWindow)) {
			t.Fatalf("deadline %v", d)
		}
		clk.Advance(cfg.AnswerWindow)
		r := a.Poll()
		if r.Status != consent.Pending || r.AskAgain != (asks < cfg.MaxAsks) {
			t.Fatalf("silence after ask %d = %+v", asks, r)
		}
	}
	if asks != cfg.MaxAsks {
		t.Fatalf("asked %d times, want %d", asks, cfg.MaxAsks)
	}
	if a.Status() != consent.Pending {
		t.Fatalf("status %s", a.Status())
	}
	// An empty transcript (the transcriber heard nothing) is silence too.
	b, _ := newApproval(t)
	b.Spoken()
	if r := b.Speech("", "voice"); r.Status != consent.Pending || !r.AskAgain {
		t.Fatalf("empty answer = %+v", r)
	}
}

func TestExpiryNeverApproves(t *testing.T) {
	a, clk := newApproval(t)
	start := clk.Now()
	a.Spoken()
	clk.Advance(3 * time.Second)
	a.Speech("hmm", "voice")
	if d := a.NextDeadline(); !d.Equal(start.Add(24 * time.Hour)) {
		t.Fatalf("next deadline %v, want the 24 h expiry", d)
	}
	clk.Advance(24*time.Hour - 3*time.Second - time.Nanosecond)
	if a.Status() != consent.Pending {
		t.Fatal("expired early")
	}
	clk.Advance(time.Nanosecond)
	r := a.Poll()
	if r.Status != consent.Expired || !r.Decided {
		t.Fatalf("at 24 h = %+v", r)
	}
	mustDecision(t, a, consent.Expired, consent.ViaClock, "", start.Add(24*time.Hour))
	// Nothing approves an expired prompt: not a tap, a key or a yes.
	if r, err := a.Tap(true, "phone"); err != consent.ErrSettled || r.Status != consent.Expired {
		t.Fatalf("tap after expiry = %+v %v", r, err)
	}
	if r := a.Speech("yes", "voice"); r.Status != consent.Expired || !r.Ignored {
		t.Fatalf("yes after expiry = %+v", r)
	}
	if a.Spoken() {
		t.Fatal("an expired prompt may be spoken")
	}
}

func TestActionExpiryEarlierThanConfig(t *testing.T) {
	clk := clocktest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	a, err := consent.NewApproval(consent.DefaultConfig(), clk, "act_1", clk.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	// A tap at the expiry instant loses: expiry is applied first.
	if r, err := a.Tap(true, "phone"); err != consent.ErrSettled || r.Status != consent.Expired {
		t.Fatalf("tap at expiry = %+v %v", r, err)
	}
	// An expiry later than 24 h is capped.
	b, _ := consent.NewApproval(consent.DefaultConfig(), clk, "act_2", clk.Now().Add(48*time.Hour))
	if d := b.NextDeadline(); !d.Equal(clk.Now().Add(24 * time.Hour)) {
		t.Fatalf("capped deadline %v", d)
	}
}

func TestHangUpMidPromptNeverApproves(t *testing.T) {
	a, clk := newApproval(t)
	a.Spoken()
	clk.Advance(time.Second)
	if r := a.HangUp(); r.Status != consent.Withdrawn || !r.Decided {
		t.Fatalf("hang-up = %+v", r)
	}
	mustDecision(t, a, consent.Withdrawn, consent.ViaHangUp, "", clk.Now())
	// The "yes" that arrives from the transcriber after the hang-up is ignored.
	if r := a.Speech("yes send it", "voice"); r.Status != consent.Withdrawn || !r.Ignored {
		t.Fatalf("late yes = %+v", r)
	}
	if r, err := a.Key(consent.KeySelect, "glasses"); err != consent.ErrSettled || r.Status != consent.Withdrawn {
		t.Fatalf("late key = %+v %v", r, err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := consent.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	err := consent.Config{Expiry: 48 * time.Hour}.Validate()
	for _, k := range []string{"consent.expiry", "consent.answer_window", "consent.max_asks"} {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("Validate() = %v, want it to name %s", err, k)
		}
	}
	if _, err := consent.NewApproval(consent.DefaultConfig(), nil, "a", time.Time{}); err == nil {
		t.Error("nil clock accepted")
	}
}

func BenchmarkClassify(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		consent.Classify("yeah, go ahead and send it to Sam please")
	}
}

func TestAnswerAddressed(t *testing.T) {
	cases := []struct {
		in        string
		v         consent.Verdict
		addressed bool
	}{
		{"yes", consent.Yes, true},
		{"Yes, go ahead.", consent.Yes, true},
		{"oh yes please", consent.Yes, true},
		{"yeah send it to Sam", consent.Yes, true},
		{"yes send the message to Sam", consent.Yes, true},
		{"no", consent.No, true},
		{"no thanks", consent.No, true},
		{"um, not now", consent.No, true},
		{"don't send it", consent.No, true},
		{"maybe", consent.Ambiguous, true},
		{"hmm, I'm not sure", consent.Ambiguous, true},
		{"hold on", consent.Ambiguous, true},
		{"yes but wait", consent.Ambiguous, true},
		{"no, what's the weather", consent.Ambiguous, true},
		{"sure?", consent.Ambiguous, true},
		// Not answers: a new topic is never a yes.
		{"", consent.Ambiguous, false},
		{"what's the weather like", consent.Ambiguous, false},
		{"I need to call my mom", consent.Ambiguous, false},
		{"great, I had a great day at work today", consent.Ambiguous, false},
		{"fine, I'm tired of all this", consent.Ambiguous, false},
		{"ok so what do you think about dinner tonight", consent.Ambiguous, false},
		{"tell me a joke", consent.Ambiguous, false},
		{"yes yes yes yes yes yes yes yes yes yes yes", consent.Ambiguous, false},
		{"how are you", consent.Ambiguous, false},
	}
	for _, c := range cases {
		v, addressed := consent.Answer(c.in)
		if v != c.v || addressed != c.addressed {
			t.Errorf("Answer(%q) = %s, %v; want %s, %v", c.in, v, addressed, c.v, c.addressed)
		}
	}
}

// FuzzAnswer: Answer never panics, and its yes is always Classify's yes
// (Answer only ever narrows what counts as a yes).
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{"yes", "no thanks", "maybe", "I need to call my mom", "", "don't cancel", "yes?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, addressed := consent.Answer(s)
		if v == consent.Yes && (!addressed || consent.Classify(s) != consent.Yes) {
			t.Fatalf("Answer(%q) = yes, addressed %v, Classify %s", s, addressed, consent.Classify(s))
		}
		if !addressed && v != consent.Ambiguous {
			t.Fatalf("Answer(%q) = %s without addressing the prompt", s, v)
		}
	})
}

func TestHoldKeepsListeningHeardRestarts(t *testing.T) {
	a, clk := newApproval(t)
	a.Spoken()
	a.Hold()
	clk.Advance(time.Hour) // the question is still playing (or typed chat)
	if !a.Listening() || a.Poll().AskAgain {
		t.Fatal("a held prompt stopped listening")
	}
	a.Heard()
	if d := a.NextDeadline(); !d.Equal(clk.Now().Add(consent.DefaultConfig().AnswerWindow)) {
		t.Fatalf("deadline %v after Heard at %v", d, clk.Now())
	}
	clk.Advance(consent.DefaultConfig().AnswerWindow)
	if r := a.Poll(); !r.AskAgain || a.Listening() || a.Status() != consent.Pending {
		t.Fatalf("silence after Heard: %+v", r)
	}
	if a.Asks() != 1 {
		t.Fatalf("Hold/Heard counted as asks: %d", a.Asks())
	}
}

func TestUnansweredAsksAgainNeverDecides(t *testing.T) {
	a, _ := newApproval(t)
	for i := 0; i < consent.DefaultConfig().MaxAsks; i++ {
		if !a.Spoken() {
			t.Fatalf("ask %d refused", i+1)
		}
		r := a.Unanswered()
		if r.Decided || a.Status() != consent.Pending || r.AskAgain != (i+1 < consent.DefaultConfig().MaxAsks) {
			t.Fatalf("ask %d: %+v", i+1, r)
		}
	}
	if a.Spoken() {
		t.Fatal("asked beyond the bound")
	}
	if r := a.Unanswered(); !r.Ignored {
		t.Fatalf("not listening, yet %+v", r)
	}
}

func TestQuietStopsAskingButKeysStillWork(t *testing.T) {
	a, _ := newApproval(t)
	a.Spoken()
	a.Quiet()
	if a.Listening() || a.Spoken() {
		t.Fatal("a quiet prompt still listens or asks")
	}
	if r := a.Speech("yes", "voice"); !r.Ignored || a.Status() != consent.Pending {
		t.Fatalf("speech after Quiet: %+v", r)
	}
	if r, err := a.Key(consent.KeySelect, "display"); err != nil || a.Status() != consent.Declined || !r.Decided {
		t.Fatalf("select on a quiet prompt: %+v %v %s", r, err, a.Status())
	}
}

func BenchmarkAnswer(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		consent.Answer("yeah go ahead and send it to Sam please")
	}
}
