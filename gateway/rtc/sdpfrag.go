package rtc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pion/sdp/v3"
)

// ErrBadFragment: a PATCH body is not a usable trickle-ice-sdpfrag.
var ErrBadFragment = errors.New("rtc: bad trickle-ice-sdpfrag")

// Fragment is a parsed application/trickle-ice-sdpfrag body (RFC 8840).
type Fragment struct {
	Ufrag, Pwd      string
	Candidates      []FragmentCandidate
	EndOfCandidates bool
}

// FragmentCandidate is one a=candidate line with the mid it belongs to.
type FragmentCandidate struct {
	Mid       string
	Candidate string // without the "a=" prefix, e.g. "candidate:1 1 udp ..."
}

// ParseFragment parses a trickle-ice-sdpfrag body. Unknown lines are ignored.
func ParseFragment(b []byte) (*Fragment, error) {
	f := &Fragment{}
	mid := ""
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
		case strings.HasPrefix(line, "a=ice-ufrag:"):
			f.Ufrag = strings.TrimPrefix(line, "a=ice-ufrag:")
		case strings.HasPrefix(line, "a=ice-pwd:"):
			f.Pwd = strings.TrimPrefix(line, "a=ice-pwd:")
		case strings.HasPrefix(line, "a=mid:"):
			mid = strings.TrimPrefix(line, "a=mid:")
		case strings.HasPrefix(line, "m="):
			mid = ""
		case strings.HasPrefix(line, "a=candidate:"):
			c := strings.TrimPrefix(line, "a=")
			if len(strings.Fields(c)) < 8 {
				return nil, fmt.Errorf("%w: short candidate line %q", ErrBadFragment, c)
			}
			f.Candidates = append(f.Candidates, FragmentCandidate{Mid: mid, Candidate: c})
		case line == "a=end-of-candidates":
			f.EndOfCandidates = true
		case len(line) < 2 || line[1] != '=':
			return nil, fmt.Errorf("%w: not an SDP line: %q", ErrBadFragment, truncate(line, 40))
		}
	}
	if f.Ufrag != "" && (!iceChars(f.Ufrag) || len(f.Ufrag) < 4 || len(f.Ufrag) > 256) {
		return nil, fmt.Errorf("%w: a=ice-ufrag must be 4-256 ice-chars (RFC 8839)", ErrBadFragment)
	}
	if f.Pwd != "" && (!iceChars(f.Pwd) || len(f.Pwd) < 22 || len(f.Pwd) > 256) {
		return nil, fmt.Errorf("%w: a=ice-pwd must be 22-256 ice-chars (RFC 8839)", ErrBadFragment)
	}
	for _, c := range f.Candidates {
		if strings.ContainsFunc(c.Candidate+c.Mid, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("%w: control character in a candidate or mid", ErrBadFragment)
		}
	}
	if (f.Ufrag == "") != (f.Pwd == "") {
		return nil, fmt.Errorf("%w: a=ice-ufrag and a=ice-pwd must come together", ErrBadFragment)
	}
	if f.Ufrag == "" && len(f.Candidates) == 0 && !f.EndOfCandidates {
		return nil, fmt.Errorf("%w: no candidates and no ICE credentials", ErrBadFragment)
	}
	return f, nil
}

// iceChars reports whether s is only ALPHA / DIGIT / "+" / "/".
func iceChars(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '+' || b == '/') {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Marshal renders a fragment for a PATCH response (server credentials and
// candidates after an ICE restart).
func (f *Fragment) Marshal() []byte {
	var b strings.Builder
	b.WriteString("a=ice-ufrag:" + f.Ufrag + "\r\n")
	b.WriteString("a=ice-pwd:" + f.Pwd + "\r\n")
	mid := "\x00"
	for _, c := range f.Candidates {
		if c.Mid != mid {
			b.WriteString("m=audio 9 UDP/TLS/RTP/SAVPF 0\r\n")
			b.WriteString("a=mid:" + c.Mid + "\r\n")
			mid = c.Mid
		}
		b.WriteString("a=" + c.Candidate + "\r\n")
	}
	if f.EndOfCandidates {
		b.WriteString("a=end-of-candidates\r\n")
	}
	return []byte(b.String())
}

// restartOffer rewrites a previous remote offer with new ICE credentials and
// candidates (ICE restart by PATCH): credentials everywhere, candidates on
// the first (bundled) m-section, session version bumped.
func restartOffer(prev string, f *Fragment) (string, error) {
	var sd sdp.SessionDescription
	if err := sd.UnmarshalString(prev); err != nil {
		return "", fmt.Errorf("rtc: restart: previous offer: %w", err)
	}
	sd.Origin.SessionVersion++
	sd.Attributes = dropICE(sd.Attributes)
	for i, md := range sd.MediaDescriptions {
		attrs := dropICE(md.Attributes)
		attrs = append(attrs, sdp.NewAttribute("ice-ufrag", f.Ufrag), sdp.NewAttribute("ice-pwd", f.Pwd))
		if i == 0 {
			for _, c := range f.Candidates {
				k, v, _ := strings.Cut(c.Candidate, ":")
				attrs = append(attrs, sdp.NewAttribute(k, v))
			}
			if f.EndOfCandidates {
				attrs = append(attrs, sdp.NewPropertyAttribute("end-of-candidates"))
			}
		}
		md.Attributes = attrs
	}
	out, err := sd.Marshal()
	if err != nil {
		return "", fmt.Errorf("rtc: restart: marshal: %w", err)
	}
	return string(out), nil
}

func dropICE(attrs []sdp.Attribute) []sdp.Attribute {
	out := attrs[:0:0]
	for _, a := range attrs {
		switch a.Key {
		case "ice-ufrag", "ice-pwd", "candidate", "end-of-candidates":
			continue
		}
		out = append(out, a)
	}
	return out
}

// localFragment extracts the ICE credentials and candidates of a local
// description for a PATCH response.
func localFragment(desc string) (*Fragment, error) {
	var sd sdp.SessionDescription
	if err := sd.UnmarshalString(desc); err != nil {
		return nil, fmt.Errorf("rtc: local description: %w", err)
	}
	f := &Fragment{EndOfCandidates: true}
	f.Ufrag, _ = sd.Attribute("ice-ufrag")
	f.Pwd, _ = sd.Attribute("ice-pwd")
	for i, md := range sd.MediaDescriptions {
		if u, ok := md.Attribute("ice-ufrag"); ok {
			f.Ufrag = u
		}
		if p, ok := md.Attribute("ice-pwd"); ok {
			f.Pwd = p
		}
		if i > 0 {
			continue // bundled: the first section's candidates serve all
		}
		mid, _ := md.Attribute("mid")
		for _, a := range md.Attributes {
			if a.Key == "candidate" {
				f.Candidates = append(f.Candidates, FragmentCandidate{Mid: mid, Candidate: "candidate:" + a.Value})
			}
		}
	}
	return f, nil
}
