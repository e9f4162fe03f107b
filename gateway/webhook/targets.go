package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// ErrForbiddenTarget: a webhook URL names, or its host resolved to, an
// address webhooks may not reach (loopback, private, link-local, metadata…)
// without webhook_delivery.allow_private_targets.
var ErrForbiddenTarget = errors.New("webhook target address is not allowed")

// targetPolicy says which addresses deliveries may reach. A partner's
// endpoint host is the partner's to point anywhere (DNS included), so
// without a policy a webhook is a way into the gateway's own network: its
// loopback services, its cloud metadata endpoint, its private peers.
type targetPolicy struct {
	allowPrivate  bool // webhook_delivery.allow_private_targets
	allowLoopback bool // dev mode: receivers on this machine
}

// Prefixes refused besides what netip classifies (loopback, private,
// link-local, multicast, unspecified): "this network", carrier-grade NAT
// (cloud metadata lives there too, e.g. 100.100.100.200), IETF protocol
// assignments (192.0.0.192 is a metadata address), benchmarking, reserved
// and broadcast, deprecated site-local IPv6.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("fec0::/10"),
}

// Prefixes of IPv6 addresses that carry an IPv4 address to check instead:
// NAT64 (the last 32 bits) and 6to4 (bits 16 to 48).
var (
	nat64 = []netip.Prefix{netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48")}
	sixTo = netip.MustParsePrefix("2002::/16")
)

// refusal names why p refuses a, or "".
func (p targetPolicy) refusal(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		for _, n := range nat64 {
			if n.Contains(a) {
				return p.refusal(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
			}
		}
		if sixTo.Contains(a) {
			return p.refusal(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	kind := ""
	switch {
	case a.IsLoopback():
		if p.allowLoopback {
			return ""
		}
		kind = "loopback"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		kind = "link-local (cloud metadata lives there)"
	case a.IsPrivate():
		kind = "private"
	case a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast():
		kind = "unspecified or multicast"
	}
	for _, pre := range refusedPrefixes {
		if kind == "" && pre.Contains(a) {
			kind = "reserved or internal"
		}
	}
	if kind == "" || p.allowPrivate {
		return ""
	}
	return fmt.Sprintf("%s is a %s address", a, kind)
}

// internalNames are host names that always mean this machine or its
// cloud's metadata service.
var internalNames = []string{"localhost", "metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"}

// hostRefusal names why p refuses the host of an endpoint URL at start, or
// "": an IP literal is checked now; a name that is an internal name, or an
// IP written in a non-standard form ("2130706433", "127.1", "0x7f.0.0.1",
// which some resolvers accept), is refused now; any other name is checked
// against what it resolves to at every dial.
func (p targetPolicy) hostRefusal(host string) string {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return p.refusal(a)
	}
	if p.allowPrivate {
		return ""
	}
	for _, n := range internalNames {
		if h == n || strings.HasSuffix(h, "."+n) {
			if p.allowLoopback && (h == "localhost" || strings.HasSuffix(h, ".localhost")) {
				return ""
			}
			return fmt.Sprintf("%s names an internal host", host)
		}
	}
	if strings.HasSuffix(h, ".localhost") && !p.allowLoopback {
		return fmt.Sprintf("%s names an internal host", host)
	}
	if numericHost(h) {
		return fmt.Sprintf("%s looks like an IP address in a non-standard form", host)
	}
	return ""
}

// numericHost: one to four dot-separated numbers, decimal, octal or hex,
// the forms inet_aton reads as an IPv4 address.
func numericHost(h string) bool {
	labels := strings.Split(h, ".")
	if len(labels) > 4 {
		return false
	}
	for _, l := range labels {
		digits := strings.TrimPrefix(l, "0x")
		set := "0123456789"
		if digits != l {
			set = "0123456789abcdef"
		}
		if l == "" || strings.Trim(digits, set) != "" {
			return false
		}
	}
	return true
}

// ValidateTargets checks that endpoints configured under key (e.g.
// "auth.keys[0].webhooks") reach only public addresses, unless cfg allows
// private targets; dev mode (no keys, loopback only) allows loopback
// receivers. Messages name the endpoint's key and the key that would allow
// it.
func ValidateTargets(key string, eps []Endpoint, cfg Config, dev bool) error {
	p := targetPolicy{allowPrivate: cfg.AllowPrivateTargets, allowLoopback: dev}
	var errs []error
	for i, e := range eps {
		u, err := url.Parse(e.URL)
		if err != nil {
			continue // ValidateEndpoints reports it
		}
		if why := p.hostRefusal(u.Hostname()); why != "" {
			errs = append(errs, fmt.Errorf("%s[%d].url: %q: %s; set webhook_delivery.allow_private_targets: true to allow it (tests, on-premises)", key, i, e.URL, why))
		}
	}
	return errors.Join(errs...)
}

// dialControl checks every address a delivery connects to, after the name
// is resolved and before the connection is made: a host whose DNS answer
// changes to an internal address (DNS rebinding) is refused at the dial.
func (p targetPolicy) dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenTarget, address)
	}
	if why := p.refusal(ap.Addr()); why != "" {
		return fmt.Errorf("%w: %s", ErrForbiddenTarget, why)
	}
	return nil
}

// newDialer returns a dialer that applies p to every address it connects
// to, resolving names with r (nil: the default resolver).
func (p targetPolicy) newDialer(r *net.Resolver) *net.Dialer {
	return &net.Dialer{Control: p.dialControl, Resolver: r}
}
