package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// TestPlainHelloIsNotAResume: a hello without a resume token on a live
// connection re-negotiates the device and is answered with a logged
// session.created that says resumed: false — never a second
// session.created with resumed: true, which only a real resume yields.
func TestPlainHelloIsNotAResume(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, nil)
	s, st, _ := m.Open(owner, nil)
	evs := until(t, st, event.TypeNotice)
	if evs[0].Type != event.TypeSessionCreated || string(evs[0].raw["resumed"]) != "false" {
		t.Fatalf("first event %v %s", evs[0].Type, evs[0].raw["resumed"])
	}
	last := evs[len(evs)-1].Seq
	for _, dev := range []string{devices.Phone, devices.Phone, devices.VoiceOnly} { // the same device twice too
		if err := s.HandleJSON(context.Background(), []byte(`{"type":"hello","device":"`+dev+`"}`)); err != nil {
			t.Fatal(err)
		}
		e := next(t, st)
		var c event.SessionCreated
		b, _ := json.Marshal(e.raw)
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if e.Type != event.TypeSessionCreated || c.Resumed || e.Seq != last+1 || c.ReplayFrom != e.Seq || c.Device != dev ||
			c.ResumeToken != s.ResumeToken() {
			t.Fatalf("hello %s answered with %s seq %d (last %d) %+v", dev, e.Type, e.Seq, last, c)
		}
		last = e.Seq
	}
	// A resume still says so, outside the log.
	st.Detach()
	_, st2, err := m.Open(owner, &event.Hello{Device: devices.VoiceOnly, ResumeToken: s.ResumeToken(), LastSeq: last})
	if err != nil {
		t.Fatal(err)
	}
	if e := next(t, st2); e.Type != event.TypeSessionCreated || string(e.raw["resumed"]) != "true" || e.Seq != 0 {
		t.Fatalf("resume answered with %s resumed %s seq %d", e.Type, e.raw["resumed"], e.Seq)
	}
}

// TestDisclosureNoticePerDevice: the notice opening a session carries the
// text its display shows — the full text on a screen, the HUD line on
// glasses, the spoken text where nothing is shown — and, on every device,
// the short text a voice session speaks.
func TestDisclosureNoticePerDevice(t *testing.T) {
	m := newManager(t, session.DefaultConfig(), echo(), keywordSafety{}, nil)
	want := map[string]string{
		devices.Phone: safety.DisclosureScreen, devices.Browser: safety.DisclosureScreen,
		devices.MetaRayBanDisplay: safety.DisclosureHUD, devices.Mentra: safety.DisclosureHUD,
		devices.EvenG2: safety.DisclosureHUD, devices.VoiceOnly: safety.DisclosureVoice,
	}
	for dev, text := range want {
		_, st, err := m.Open(owner, &event.Hello{Device: dev})
		if err != nil {
			t.Fatal(err)
		}
		evs := until(t, st, event.TypeNotice)
		n := evs[len(evs)-1]
		if len(evs) != 2 || n.str("kind") != event.NoticeAIDisclosure || n.str("text") != text || n.str("spoken") != safety.DisclosureVoice {
			t.Errorf("%s: %d events, notice %v", dev, len(evs), n.raw)
		}
	}
	// An override is shown and spoken alike.
	cfg := session.DefaultConfig()
	cfg.Disclosure = "VERA is an AI."
	_, st, _ := newManager(t, cfg, echo(), keywordSafety{}, nil).Open(owner, &event.Hello{Device: devices.Phone})
	if n := until(t, st, event.TypeNotice)[1]; n.str("text") != cfg.Disclosure || n.str("spoken") != cfg.Disclosure {
		t.Errorf("override: %v", n.raw)
	}
}
