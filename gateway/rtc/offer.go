package rtc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pion/sdp/v3"
)

// Offer problems. Each is wrapped in an *OfferError whose message says what
// exactly is wrong; the handler maps all of them to 400 invalid_request.
var (
	// ErrOfferTooLarge: the body exceeds Config.MaxOfferBytes (413).
	ErrOfferTooLarge = errors.New("offer too large")
	// ErrMalformedSDP: the body does not parse as an SDP offer.
	ErrMalformedSDP = errors.New("malformed SDP")
	// ErrNoAudio: no usable audio m-line that sends audio to the gateway.
	ErrNoAudio = errors.New("no audio m-line")
	// ErrNoOpus: the audio m-line does not offer opus/48000/2.
	ErrNoOpus = errors.New("no Opus")
	// ErrNoDataChannel: no m=application line for the "events" data channel.
	ErrNoDataChannel = errors.New("no data channel")
)

// OfferError is a rejected offer: Kind is one of the sentinels above, Detail
// says what was found. errors.Is(err, ErrNoOpus) works on it.
type OfferError struct {
	Kind   error
	Detail string
}

func (e *OfferError) Error() string {
	if e.Detail == "" {
		return "offer: " + e.Kind.Error()
	}
	return "offer: " + e.Kind.Error() + ": " + e.Detail
}

func (e *OfferError) Unwrap() error { return e.Kind }

func offerErr(kind error, format string, args ...any) error {
	return &OfferError{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Offer is a validated client offer.
type Offer struct {
	// SDP is the offer text as received.
	SDP string
	// AudioMid and DataMid are the mids of the audio and application lines.
	AudioMid string
	DataMid  string
	// OpusPayloadType is the payload type the client uses for Opus.
	OpusPayloadType uint8
	// ICEUfrag and ICEPwd are the client's ICE credentials.
	ICEUfrag string
	ICEPwd   string
}

// ParseOffer parses and validates an SDP offer: it must hold an audio
// m-line that sends Opus at 48 kHz/2 and an SCTP application m-line, with ICE
// credentials and a DTLS fingerprint. It never panics on any input.
func ParseOffer(b []byte) (*Offer, error) {
	if len(b) == 0 {
		return nil, offerErr(ErrMalformedSDP, "empty body")
	}
	var sd sdp.SessionDescription
	if err := sd.UnmarshalString(string(b)); err != nil {
		return nil, offerErr(ErrMalformedSDP, "%v", err)
	}
	o := &Offer{SDP: string(b)}
	sessUfrag, _ := sd.Attribute("ice-ufrag")
	sessPwd, _ := sd.Attribute("ice-pwd")
	_, sessFP := sd.Attribute("fingerprint")

	var audio, app *sdp.MediaDescription
	var audioProblem, opusProblem error
	for _, md := range sd.MediaDescriptions {
		switch md.MediaName.Media {
		case "audio":
			if audio != nil {
				continue
			}
			if md.MediaName.Port.Value == 0 {
				audioProblem = offerErr(ErrNoAudio, "audio m-line is rejected (port 0)")
				continue
			}
			if dirRecvOnly(md) {
				audioProblem = offerErr(ErrNoAudio, "audio m-line does not send (recvonly/inactive)")
				continue
			}
			pt, ok := findOpus(md)
			if !ok {
				opusProblem = offerErr(ErrNoOpus, "audio m-line offers %s, want opus/48000/2", strings.Join(md.MediaName.Formats, " "))
				continue
			}
			audio = md
			o.OpusPayloadType = pt
		case "application":
			if app != nil || md.MediaName.Port.Value == 0 {
				continue
			}
			if !slicesContainsFold(md.MediaName.Protos, "SCTP") {
				continue
			}
			app = md
		}
	}
	if audio == nil {
		if opusProblem != nil {
			return nil, opusProblem
		}
		if audioProblem != nil {
			return nil, audioProblem
		}
		return nil, offerErr(ErrNoAudio, "offer has no m=audio line")
	}
	if app == nil {
		return nil, offerErr(ErrNoDataChannel, "offer has no m=application SCTP line (create the \"events\" data channel before the offer)")
	}
	o.AudioMid, _ = audio.Attribute("mid")
	o.DataMid, _ = app.Attribute("mid")
	o.ICEUfrag, o.ICEPwd = sessUfrag, sessPwd
	if u, ok := audio.Attribute("ice-ufrag"); ok {
		o.ICEUfrag = u
	}
	if p, ok := audio.Attribute("ice-pwd"); ok {
		o.ICEPwd = p
	}
	if o.ICEUfrag == "" || o.ICEPwd == "" {
		return nil, offerErr(ErrMalformedSDP, "missing a=ice-ufrag or a=ice-pwd")
	}
	if _, ok := audio.Attribute("fingerprint"); !ok && !sessFP {
		return nil, offerErr(ErrMalformedSDP, "missing a=fingerprint")
	}
	return o, nil
}

func dirRecvOnly(md *sdp.MediaDescription) bool {
	for _, a := range md.Attributes {
		if a.Key == "recvonly" || a.Key == "inactive" {
			return true
		}
	}
	return false
}

// findOpus returns the payload type of an rtpmap "opus/48000/2" entry that is
// also listed in the m-line's formats.
func findOpus(md *sdp.MediaDescription) (uint8, bool) {
	for _, a := range md.Attributes {
		if a.Key != "rtpmap" {
			continue
		}
		ptStr, enc, ok := strings.Cut(a.Value, " ")
		if !ok {
			continue
		}
		parts := strings.Split(strings.TrimSpace(enc), "/")
		if len(parts) < 2 || !strings.EqualFold(parts[0], "opus") || parts[1] != "48000" {
			continue
		}
		if len(parts) >= 3 && parts[2] != "2" {
			continue
		}
		pt, err := strconv.ParseUint(ptStr, 10, 8)
		if err != nil || pt > 127 {
			continue
		}
		for _, f := range md.MediaName.Formats {
			if f == ptStr {
				return uint8(pt), true
			}
		}
	}
	return 0, false
}

func slicesContainsFold(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(strings.ToUpper(s), sub) {
			return true
		}
	}
	return false
}
