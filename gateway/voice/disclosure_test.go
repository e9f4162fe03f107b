package voice

import (
	"context"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// spokenLength synthesises text with the gateway's own speak slot (the
// embedded espeak-ng at its configured rate) and returns its length.
func spokenLength(t *testing.T, text string) time.Duration {
	t.Helper()
	r, _ := getShared(t)
	n := 0
	_, err := r.Speak(context.Background(), router.SpeakRequest{Text: text, SampleRate: rtc.PCMRate, PCMOnly: true},
		func(c router.AudioChunk) error { n += len(c.PCM); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(n) * time.Second / rtc.PCMRate
}

// TestSpokenDisclosureIsShort: what every voice session says first takes
// at most 4 s of speech with espeak-ng (the on-screen text is three times
// that, which is why it is shown, not spoken).
func TestSpokenDisclosureIsShort(t *testing.T) {
	spoken, screen := spokenLength(t, safety.DisclosureVoice), spokenLength(t, safety.DisclosureScreen)
	t.Logf("spoken disclosure %v, on-screen text would take %v", spoken, screen)
	if spoken > 4*time.Second || spoken < time.Second {
		t.Fatalf("spoken disclosure %q takes %v of speech, want (1 s, 4 s]", safety.DisclosureVoice, spoken)
	}
	if screen < 2*spoken {
		t.Fatalf("the screen text takes %v, the spoken one %v: the measurement is off", screen, spoken)
	}
}

// talkOverDisclosure connects as device and says "I would like to go
// home" right away, over the spoken disclosure, then waits until done
// says the session is over.
func talkOverDisclosure(t *testing.T, st *stack, device string, done func([]fixtures.Event) bool) *fixtures.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	stream := encode(t, concat(t, fixture(t, "gohome.16k.wav"), fixtures.Silence(16000, 2*time.Second)))
	res, err := fixtures.Run(ctx, fixtures.Scenario{
		Client: fixtures.ClientOptions{URL: st.URL, LoopbackOnly: true, Device: device},
		Stream: stream, Complete: done,
	})
	if err != nil {
		if res != nil {
			t.Logf("events so far:\n%s", dumpEvents(res.Events))
		}
		t.Fatalf("scenario: %v", err)
	}
	return res
}

// noticeAudio returns the notice's reply.audio_stopped events and the
// index in evs of the first one.
func noticeAudio(t *testing.T, evs []fixtures.Event) (stops []fixtures.Event, first int) {
	first = -1
	for i, e := range evs {
		if e.Type == "reply.audio_stopped" && decode(t, e).TurnID == noticeTurn {
			if first < 0 {
				first = i
			}
			stops = append(stops, e)
		}
	}
	return stops, first
}

func indexOf(evs []fixtures.Event, typ string) int {
	for i, e := range evs {
		if e.Type == typ {
			return i
		}
	}
	return -1
}

// TestDisclosureBargeInOnScreen: on a phone, whose screen shows the full
// disclosure, the person talks over the spoken one: it stops before their
// turn is even transcribed, counts as given, is not spoken again, and the
// reply follows.
func TestDisclosureBargeInOnScreen(t *testing.T) {
	st := newStack(t, stackOptions{})
	res := talkOverDisclosure(t, st, "phone", repliesEnded(1))
	evs := res.Events
	ns := ofType(evs, "notice")
	if len(ns) != 1 {
		t.Fatalf("%d notices, want 1 (a disclosure shown on screen is not repeated)\n%s", len(ns), dumpEvents(evs))
	}
	if p := decode(t, ns[0]); p.Text != safety.DisclosureScreen {
		t.Fatalf("notice text %q, want the screen text", p.Text)
	}
	stops, first := noticeAudio(t, evs)
	if len(stops) != 1 || first < 0 || first > indexOf(evs, "transcript.final") {
		t.Fatalf("the disclosure's audio did not stop before the turn's transcript\n%s", dumpEvents(evs))
	}
	if n := st.bargeIns("disclosure_shown"); n != 1 || st.bargeIns("disclosure_owed") != 0 {
		t.Fatalf("barge-ins on the disclosure: shown %v owed %v, want 1 and 0", n, st.bargeIns("disclosure_owed"))
	}
	if len(transcripts(t, evs)) != 1 || indexOf(evs, "reply.audio_started") < 0 {
		t.Fatalf("the turn was not answered\n%s", dumpEvents(evs))
	}
	// Nothing of the notice is reply text: no reply.interrupted for it.
	for _, e := range ofType(evs, "reply.interrupted") {
		t.Fatalf("unexpected %s", e.Data)
	}
}

// TestDisclosureBargeInVoiceOnly: on a voice-only device nothing shows the
// disclosure, so one cut short is owed: the reply to the person's turn
// comes first, and at the next pause — once that reply has played out — a
// second notice is sent and the disclosure is spoken again, whole.
func TestDisclosureBargeInVoiceOnly(t *testing.T) {
	st := newStack(t, stackOptions{})
	secondPlayed := func(evs []fixtures.Event) bool {
		stops, _ := noticeAudio(t, evs)
		return len(stops) >= 2
	}
	res := talkOverDisclosure(t, st, "voice-only", secondPlayed)
	evs := res.Events
	ns := ofType(evs, "notice")
	if len(ns) != 2 {
		t.Fatalf("%d notices, want the first and the repeat\n%s", len(ns), dumpEvents(evs))
	}
	for _, n := range ns {
		if p := decode(t, n); p.Text != safety.DisclosureVoice {
			t.Fatalf("notice %s: want the spoken text on a voice-only device", n.Data)
		}
	}
	// Order: cut before the transcript; the reply played out; then the repeat.
	replyStop := -1
	for i, e := range evs {
		if e.Type == "reply.audio_stopped" && decode(t, e).TurnID == "v1" {
			replyStop = i
		}
	}
	_, first := noticeAudio(t, evs)
	second, seen := -1, 0
	for i, e := range evs {
		if e.Type == "notice" {
			if seen++; seen == 2 {
				second = i
			}
		}
	}
	if first > indexOf(evs, "transcript.final") || replyStop < 0 || second < replyStop {
		t.Fatalf("want disclosure cut, reply played out, then the repeat; got\n%s", dumpEvents(evs))
	}
	// The repeat played to its end: nothing is owed, one cut was counted.
	st.mu.Lock()
	v := st.voices[0]
	st.mu.Unlock()
	if v.disclosureOwed.Load() || st.bargeIns("disclosure_owed") != 1 || st.bargeIns("disclosure_shown") != 0 {
		t.Fatalf("owed %v, cuts owed %v shown %v; want false, 1, 0", v.disclosureOwed.Load(), st.bargeIns("disclosure_owed"), st.bargeIns("disclosure_shown"))
	}
}

// unbargeableLongDisclosure is a stack where no speech is long enough to be
// a barge-in (under load, a pause can also resume before the recogniser's
// first words: the same for the disclosure) and the disclosure is the long
// screen text, so that it is still playing when a turn ends.
func unbargeableLongDisclosure(t *testing.T) *stack {
	t.Helper()
	cfg := testConfig()
	cfg.Turn.BargeInMs, cfg.Turn.BackchannelMs = 10000, 10000
	scfg := session.DefaultConfig()
	scfg.Disclosure = safety.DisclosureScreen
	return newStack(t, stackOptions{cfg: &cfg, sessCfg: &scfg})
}

// replyAudioStart is the index in evs of turnID's first
// reply.audio_started, or -1.
func replyAudioStart(t *testing.T, evs []fixtures.Event, turnID string) int {
	for i, e := range evs {
		if e.Type == "reply.audio_started" && decode(t, e).TurnID == turnID {
			return i
		}
	}
	return -1
}

// TestDisclosureYieldsToATurn: words that never pause the disclosure still
// stop it when their turn is transcribed, so the reply does not wait behind
// it; on a phone that counts as given, and it is not spoken again.
func TestDisclosureYieldsToATurn(t *testing.T) {
	st := unbargeableLongDisclosure(t)
	res := talkOverDisclosure(t, st, "phone", repliesEnded(1))
	evs := res.Events
	stops, first := noticeAudio(t, evs)
	replyStart := replyAudioStart(t, evs, "v1")
	if len(stops) != 1 || replyStart < 0 || first > replyStart {
		t.Fatalf("want the disclosure's audio stopped before the reply's started\n%s", dumpEvents(evs))
	}
	if n := st.bargeIns("disclosure_shown"); n != 1 {
		t.Fatalf("disclosure cut short %v times, want 1 (it played on behind the turn)\n%s", n, dumpEvents(evs))
	}
	if n := len(ofType(evs, "notice")); n != 1 {
		t.Fatalf("%d notices on a phone, want 1", n)
	}
}
