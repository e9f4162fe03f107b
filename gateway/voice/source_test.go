package voice

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

func TestSplitSentences(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		rest string
	}{
		{"Hello there. How are", []string{"Hello there."}, " How are"},
		{"One! Two? Three.", []string{"One!", "Two?"}, " Three."},
		{"Call 9.8 now.\nNext", []string{"Call 9.8 now."}, "\nNext"},
		{"no end yet", nil, "no end yet"},
		{"", nil, ""},
	} {
		got, rest := splitSentences(c.in)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || rest != c.rest {
			t.Errorf("splitSentences(%q) = %q, %q; want %q, %q", c.in, got, rest, c.want, c.rest)
		}
	}
}

// source builds a speech source of sentences, each n samples long.
func source(n int, sentences ...struct {
	text      string
	protected bool
}) *speechSource {
	s := &speechSource{played: make(chan struct{})}
	for _, x := range sentences {
		s.beginSentence(x.text, x.protected)
		s.write(make([]int16, n))
	}
	return s
}

type sent = struct {
	text      string
	protected bool
}

func TestHeardFromPlayoutPosition(t *testing.T) {
	s := source(1000, sent{"Call 988 now.", true}, sent{"It sounds hard.", false}, sent{"Who else knows about this?", false})
	for _, c := range []struct {
		played int
		want   string
	}{
		{0, ""},
		{500, ""},                                // inside the spoken resource: not reply text
		{1000, ""},                               // resource done, reply not started
		{1500, "It"},                             // half of a three-word sentence: 3*500/1000 = 1 word
		{2000, "It sounds hard."},                // whole sentence
		{2600, "It sounds hard. Who else knows"}, // 5*600/1000 = 3 words
		{3000, "It sounds hard. Who else knows about this?"},
		{9999, "It sounds hard. Who else knows about this?"},
	} {
		if got := s.heard(c.played); got != c.want {
			t.Errorf("heard(%d) = %q, want %q", c.played, got, c.want)
		}
	}
}

func TestProtectedAt(t *testing.T) {
	s := source(1000, sent{"VERA is an AI.", true}, sent{"Hello.", false})
	for _, c := range []struct {
		played int
		want   bool
	}{{0, true}, {999, true}, {1000, false}, {1999, false}, {5000, false}} {
		if got := s.protectedAt(c.played); got != c.want {
			t.Errorf("protectedAt(%d) = %v, want %v", c.played, got, c.want)
		}
	}
	// A protected sentence still being synthesised at the end protects its
	// start; once finished and played out, nothing is protected.
	p := source(0, sent{"Call 988.", true})
	if !p.protectedAt(0) {
		t.Error("the start of a protected sentence still coming is not protected")
	}
	p.finish()
	if p.protectedAt(0) {
		t.Error("a finished, empty source is protected")
	}
}

func TestSourceReadFrame(t *testing.T) {
	s := &speechSource{played: make(chan struct{})}
	firsts := 0
	s.onFirst = func() { firsts++ }
	dst := make([]int16, rtc.PCMFrame)
	if _, err := s.ReadFrame(dst); !errors.Is(err, rtc.ErrUnderrun) {
		t.Fatalf("empty source: %v, want underrun", err)
	}
	s.beginSentence("a", false)
	s.write(make([]int16, rtc.PCMFrame+10))
	for i, want := range []int{rtc.PCMFrame, 10} {
		n, err := s.ReadFrame(dst)
		if err != nil || n != want {
			t.Fatalf("read %d: %d, %v", i, n, err)
		}
	}
	if _, err := s.ReadFrame(dst); !errors.Is(err, rtc.ErrUnderrun) {
		t.Fatalf("drained, not finished: %v", err)
	}
	s.finish()
	if _, err := s.ReadFrame(dst); err != io.EOF {
		t.Fatalf("drained and finished: %v, want EOF", err)
	}
	if firsts != 1 {
		t.Errorf("onFirst called %d times", firsts)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mut func(*Config)
		key string
	}{
		{func(c *Config) { c.ResumeAfterMs = 10 }, "resume_after_ms"},
		{func(c *Config) { c.PartialEveryMs = 1 }, "partial_every_ms"},
		{func(c *Config) { c.SpeakQueue = 0 }, "speak_queue"},
		{func(c *Config) { c.PhraseCache = -1 }, "phrase_cache"},
		{func(c *Config) { c.PhraseCache = 65 }, "phrase_cache"},
		{func(c *Config) { c.Codec.DecodeRate = 48000 }, "codec.decode_rate"},
		{func(c *Config) { c.Jitter.MaxDelayMs = 0 }, "jitter"},
	} {
		cfg := DefaultConfig()
		c.mut(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: error %v does not name the key", c.key, err)
		}
	}
}

func TestNewFactoryNeedsDeps(t *testing.T) {
	if _, err := NewFactory(DefaultConfig(), Deps{}); !errors.Is(err, ErrMissingDeps) {
		t.Errorf("no deps: %v", err)
	}
	bad := DefaultConfig()
	bad.SpeakQueue = 0
	if _, err := NewFactory(bad, Deps{}); err == nil || !strings.Contains(err.Error(), "speak_queue") {
		t.Errorf("bad config: %v", err)
	}
}

// TestSpeakSafetyQueuesTheCard: what the session says to speak of a card
// is queued whole — the lead-in, then a sentence per resource — firm
// (barge-in cannot cut it) on a device that must speak safety and, while
// the card's turn is still replying, in that turn before its reply;
// otherwise as a turn of its own the person can talk over. It is counted
// as spoken once, with no text and no ids.
func TestSpeakSafetyQueuesTheCard(t *testing.T) {
	r, local := getShared(t)
	layout, err := session.NewGlassesLayout(glasses.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := session.NewManager(session.DefaultConfig(), session.Deps{
		Converser: newConverser(t, r), Safety: local, Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(t.Context()) })
	counters := safety.NewCounters(nil)
	f, err := NewFactory(DefaultConfig(), Deps{Listener: r, Speaker: r, Sessions: mgr, Counters: counters})
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := mgr.Open(session.Owner{PartnerID: "p"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vs := &voiceSession{factory: f, speakCh: make(chan speakItem, 16), log: slog.New(slog.DiscardHandler), ctx: t.Context(),
		cancelled: map[string]bool{}}
	vs.sess.Store(sess)
	sq := &speechQueue{s: vs, pending: map[string]string{}, ended: map[string]bool{}}
	a := local.Assess(nil, "i am going to kill myself tonight", "US")
	if len(a.Resources) < 2 {
		t.Fatalf("%d resources for a crisis text, want at least 2", len(a.Resources))
	}
	sentences := []string{"Here is help you can reach right now."}
	for _, res := range a.Resources {
		sentences = append(sentences, safety.SpokenResource(res))
	}
	drain := func() []speakItem {
		var out []speakItem
		for {
			select {
			case it := <-vs.speakCh:
				out = append(out, it)
			default:
				return out
			}
		}
	}
	check := func(name string, got []speakItem, turn string, firm, last bool) {
		t.Helper()
		if len(got) != len(sentences) {
			t.Fatalf("%s: %d items, want %d", name, len(got), len(sentences))
		}
		for i, it := range got {
			if it.text != sentences[i] || it.turnID != turn || it.protected != firm || it.last != (last && i == len(got)-1) {
				t.Fatalf("%s: item %d %+v, want %q in %s firm %v", name, i, it, sentences[i], turn, firm)
			}
		}
	}
	ss := session.SpokenSafety{CardID: "card_v1_1", TurnID: "v1", Level: a.Level, Why: session.SpeakMustSpeak, Firm: true,
		Sentences: sentences, Resources: a.Resources}
	sq.SpeakSafety(ss)
	check("must speak, reply to come", drain(), "v1", true, false)
	sq.ReplyDone(event.ReplyDone{TurnID: "v1"})
	drain()
	sq.SpeakSafety(ss)
	check("must speak, reply done", drain(), "safety:card_v1_1", true, true)
	ss.Why, ss.Firm = session.SpeakUnacknowledged, false
	sq.SpeakSafety(ss)
	check("unacknowledged on a screen device", drain(), "safety:card_v1_1", false, true)
	if got := counters.Snapshot().Totals["spoken"]; got != 3 {
		t.Errorf("spoken counter = %d, want 3", got)
	}
}
