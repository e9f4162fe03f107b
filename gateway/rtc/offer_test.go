package rtc

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/pion/webrtc/v4"
)

// makeOffer returns a real pion offer with an Opus track and an "events"
// data channel (loopback candidates only).
func makeOffer(t testing.TB) string {
	t.Helper()
	eng, err := NewEngine(LoopbackConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	pc, err := eng.NewPeerConnection()
	if err != nil {
		t.Fatal(err)
	}
	defer pc.GracefulClose()
	tr, err := webrtc.NewTrackLocalStaticRTP(OpusCodec, "a", "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTrack(tr); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.CreateDataChannel(EventsLabel, nil); err != nil {
		t.Fatal(err)
	}
	o, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	g := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	<-g
	return pc.LocalDescription().SDP
}

// Offer mutations used by the table test and as fuzz seeds.
var offerMutations = map[string]func(string) string{
	"no audio": func(s string) string {
		return regexp.MustCompile(`(?s)m=audio.*?(m=application)`).ReplaceAllString(s, "$1")
	},
	"pcmu only": func(s string) string {
		s = regexp.MustCompile(`m=audio (\d+) (\S+) [0-9 ]+`).ReplaceAllString(s, "m=audio $1 $2 0")
		s = strings.ReplaceAll(s, "a=rtpmap:111 opus/48000/2", "a=rtpmap:0 PCMU/8000")
		return s
	},
	"no data channel": func(s string) string {
		i := strings.Index(s, "m=application")
		return s[:i]
	},
	"recvonly audio": func(s string) string {
		return strings.Replace(strings.Replace(s, "a=sendrecv", "a=recvonly", 1), "a=sendonly", "a=recvonly", 1)
	},
	"no ice-ufrag": func(s string) string {
		return regexp.MustCompile(`a=ice-ufrag:\S+\r\n`).ReplaceAllString(s, "")
	},
	"no fingerprint": func(s string) string {
		return regexp.MustCompile(`a=fingerprint:[^\r\n]+\r\n`).ReplaceAllString(s, "")
	},
	"garbage":   func(string) string { return "hello, this is not SDP" },
	"truncated": func(s string) string { return s[:len(s)/3] },
}

func TestParseOffer(t *testing.T) {
	base := makeOffer(t)
	o, err := ParseOffer([]byte(base))
	if err != nil {
		t.Fatalf("real offer rejected: %v", err)
	}
	if o.OpusPayloadType != 111 || o.AudioMid == "" || o.DataMid == "" || o.ICEUfrag == "" || o.ICEPwd == "" {
		t.Fatalf("offer fields: %+v", o)
	}
	want := map[string]error{
		"no audio":        ErrNoAudio,
		"pcmu only":       ErrNoOpus,
		"no data channel": ErrNoDataChannel,
		"recvonly audio":  ErrNoAudio,
		"no ice-ufrag":    ErrMalformedSDP,
		"no fingerprint":  ErrMalformedSDP,
		"garbage":         ErrMalformedSDP,
	}
	for name, kind := range want {
		_, err := ParseOffer([]byte(offerMutations[name](base)))
		if !errors.Is(err, kind) {
			t.Errorf("%s: got %v, want %v", name, err, kind)
		}
		var oe *OfferError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), kind.Error()) {
			t.Errorf("%s: error %q does not name the problem", name, err)
		}
	}
	if _, err := ParseOffer(nil); !errors.Is(err, ErrMalformedSDP) {
		t.Errorf("empty: %v", err)
	}
	if _, err := ParseOffer([]byte(offerMutations["truncated"](base))); err == nil {
		t.Errorf("truncated offer accepted")
	}
}

func FuzzOffer(f *testing.F) {
	base := makeOffer(f)
	f.Add([]byte(base))
	for _, m := range offerMutations {
		f.Add([]byte(m(base)))
	}
	f.Add([]byte("v=0\r\no=- 0 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOffer(b)
		if err != nil {
			var oe *OfferError
			if !errors.As(err, &oe) {
				t.Fatalf("error is not an *OfferError: %v", err)
			}
			for _, k := range []error{ErrMalformedSDP, ErrNoAudio, ErrNoOpus, ErrNoDataChannel} {
				if errors.Is(err, k) {
					return
				}
			}
			t.Fatalf("error has no known kind: %v", err)
		}
		if o.ICEUfrag == "" || o.ICEPwd == "" || o.OpusPayloadType > 127 {
			t.Fatalf("accepted offer with missing fields: %+v", o)
		}
		// An accepted offer must re-validate identically (no hidden state).
		if _, err := ParseOffer([]byte(o.SDP)); err != nil {
			t.Fatalf("accepted offer fails on re-parse: %v", err)
		}
	})
}

func TestParseFragment(t *testing.T) {
	f, err := ParseFragment([]byte("a=ice-ufrag:abcd\r\na=ice-pwd:0123456789abcdefghijkl\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host\r\na=end-of-candidates\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Ufrag != "abcd" || len(f.Candidates) != 1 || f.Candidates[0].Mid != "0" || !f.EndOfCandidates {
		t.Fatalf("fragment: %+v", f)
	}
	g, err := ParseFragment(f.Marshal())
	if err != nil || g.Ufrag != f.Ufrag || g.Pwd != f.Pwd || len(g.Candidates) != 1 || g.Candidates[0] != f.Candidates[0] {
		t.Fatalf("round trip: %+v %v", g, err)
	}
	for _, bad := range []string{"", "a=ice-ufrag:x\r\n", "a=candidate:1 1 udp\r\n", "garbage line\r\n",
		"a=ice-ufrag:ab\r\na=ice-pwd:0123456789abcdefghijkl\r\n", "a=ice-ufrag:abcd\r\na=ice-pwd:short\r\n",
		"a=ice-ufrag:ab d\r\na=ice-pwd:0123456789abcdefghijkl\r\n", "a=candidate:1 1 udp 1 1.2.3.4 9 typ host\x00\r\n"} {
		if _, err := ParseFragment([]byte(bad)); !errors.Is(err, ErrBadFragment) {
			t.Errorf("%q: got %v", bad, err)
		}
	}
}

func FuzzFragment(f *testing.F) {
	f.Add([]byte("a=ice-ufrag:abcd\r\na=ice-pwd:0123456789abcdefghijkl\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host\r\na=end-of-candidates\r\n"))
	f.Add([]byte("a=candidate:1 1 udp 1 ::1 9 typ host\na=end-of-candidates\n"))
	f.Add([]byte("a=ice-ufrag:x\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseFragment(b)
		if err != nil {
			if !errors.Is(err, ErrBadFragment) {
				t.Fatalf("error without ErrBadFragment: %v", err)
			}
			return
		}
		// What parses must survive Marshal → Parse with the same content.
		g, err := ParseFragment(fr.Marshal())
		if err != nil {
			if fr.Ufrag == "" {
				return // Marshal always writes credentials; empty ones do not re-parse
			}
			t.Fatalf("re-parse of %q: %v", fr.Marshal(), err)
		}
		if g.Ufrag != fr.Ufrag || g.Pwd != fr.Pwd || len(g.Candidates) != len(fr.Candidates) {
			t.Fatalf("round trip changed the fragment: %+v vs %+v", fr, g)
		}
	})
}
