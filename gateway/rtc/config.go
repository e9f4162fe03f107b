package rtc

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/pion/stun/v4"
)

// ICEServer is a STUN/TURN server offered to clients in the answer's Link
// headers (WHIP style). The gateway itself does not use it.
type ICEServer struct {
	URLs       []string `yaml:"urls" json:"urls"`
	Username   string   `yaml:"username" json:"username,omitempty"`
	Credential string   `yaml:"credential" json:"credential,omitempty"`
}

// TURNConfig mints short-lived TURN credentials for each answer in the TURN
// REST API convention coturn implements with use-auth-secret: username
// "<expiry unix seconds>:<opaque>", password base64(HMAC-SHA1(secret,
// username)). The secret never leaves the gateway. No URLs = off.
type TURNConfig struct {
	// URLs are turn: or turns: URLs (RFC 7065), e.g.
	// "turn:turn.example.com:3478?transport=udp".
	URLs []string `yaml:"urls"`
	// SecretEnv names the environment variable holding coturn's
	// static-auth-secret; cmd reads it into Secret.
	SecretEnv string `yaml:"secret_env"`
	// Secret is the shared secret (never in the file, never printed).
	Secret string `yaml:"-"`
	// TTLSeconds is how long a minted credential stays valid. coturn checks
	// the expiry when a client allocates (and on every new allocation, e.g.
	// after an ICE restart), not during a running allocation.
	TTLSeconds int `yaml:"ttl_seconds"`
}

// Enabled reports whether TURN credentials are minted.
func (t TURNConfig) Enabled() bool { return len(t.URLs) > 0 }

// Config is the WebRTC transport configuration (yaml key "rtc").
type Config struct {
	// UDPPort is the single UDP port every session shares (ICE UDP mux).
	// 0 picks an ephemeral port (tests). Ignored when PortMin/PortMax are set.
	UDPPort int `yaml:"udp_port"`
	// UDPAddress is the local address the mux binds ("" = all interfaces).
	UDPAddress string `yaml:"udp_address"`
	// UDPReadBuffer is the mux socket's receive buffer in bytes (SO_RCVBUF,
	// capped by net.core.rmem_max). One socket carries every session, so
	// the kernel default (~200 KiB) overflows under bursts.
	UDPReadBuffer int `yaml:"udp_read_buffer"`
	// PortMin and PortMax, when both set, replace the mux by one ephemeral
	// port per session from this range. Size it for at least 2× sessions.
	PortMin int `yaml:"port_min"`
	PortMax int `yaml:"port_max"`
	// PublicIPs replace host candidate addresses (1:1 NAT, e.g. a cloud VM's
	// public address) through pion's ICE address rewrite rules.
	PublicIPs []string `yaml:"public_ips"`
	// IncludeLoopback adds 127.0.0.1/::1 candidates (tests, local dev).
	IncludeLoopback bool `yaml:"include_loopback"`
	// LoopbackOnly restricts gathering and remote candidates to loopback
	// addresses so nothing leaves the host (tests). Implies IncludeLoopback.
	LoopbackOnly bool `yaml:"loopback_only"`
	// Interfaces, when non-empty, is the allowlist of interface names used
	// for gathering (port-range mode).
	Interfaces []string `yaml:"interfaces"`
	// UDP6 also gathers IPv6 candidates.
	UDP6 bool `yaml:"udp6"`
	// TCPPort, when non-zero, is the single TCP port of passive ICE-TCP
	// candidates (ICE TCP mux), for clients whose network blocks UDP. It
	// binds UDPAddress ("" = all interfaces). 0 = off.
	TCPPort int `yaml:"tcp_port"`
	// TCPMaxConns bounds open ICE-TCP connections (each costs a goroutine
	// and buffers until its first STUN request or its session ends); past
	// it new connections are closed at once.
	TCPMaxConns int `yaml:"tcp_max_conns"`
	// ICEServers (static STUN/TURN entries) are returned to clients as Link
	// headers with the answer, before any TURN entry minted from TURN.
	ICEServers []ICEServer `yaml:"ice_servers"`
	// TURN mints per-answer TURN credentials (coturn use-auth-secret).
	TURN TURNConfig `yaml:"turn"`
	// MaxOfferBytes bounds the SDP offer body; larger offers get 413.
	MaxOfferBytes int `yaml:"max_offer_bytes"`
	// MaxPatchBytes bounds a trickle-ice-sdpfrag body.
	MaxPatchBytes int `yaml:"max_patch_bytes"`
	// GatherTimeout bounds waiting for local candidates before answering.
	GatherTimeout time.Duration `yaml:"gather_timeout"`
	// ICEDisconnectedTimeout, ICEFailedTimeout and ICEKeepalive are handed
	// to pion's ICE agent.
	ICEDisconnectedTimeout time.Duration `yaml:"ice_disconnected_timeout"`
	ICEFailedTimeout       time.Duration `yaml:"ice_failed_timeout"`
	ICEKeepalive           time.Duration `yaml:"ice_keepalive"`
	// ICEFailedGrace is how long a session survives in ICE "failed" so a
	// client can still PATCH an ICE restart; then it is closed.
	ICEFailedGrace time.Duration `yaml:"ice_failed_grace"`
	// IdleTimeout closes a session with no inbound RTP and no data channel
	// message for this long (also bounds a session that never connects).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// EventQueue bounds events queued before the data channel opens; when
	// full, SendEvent returns ErrEventQueueFull.
	EventQueue int `yaml:"event_queue"`
	// EncoderBitrate and EncoderComplexity configure the Opus encoder used
	// for PCM playout sources.
	EncoderBitrate    int `yaml:"encoder_bitrate"`
	EncoderComplexity int `yaml:"encoder_complexity"`
}

// DefaultConfig returns production defaults: one UDP port (7882) on all
// interfaces, no loopback, mDNS off, 32 KiB offers.
func DefaultConfig() Config {
	return Config{
		UDPPort:                7882,
		UDPReadBuffer:          4 << 20,
		TCPMaxConns:            4096,
		TURN:                   TURNConfig{TTLSeconds: 3600},
		MaxOfferBytes:          32 << 10,
		MaxPatchBytes:          16 << 10,
		GatherTimeout:          2 * time.Second,
		ICEDisconnectedTimeout: 5 * time.Second,
		ICEFailedTimeout:       25 * time.Second,
		ICEKeepalive:           2 * time.Second,
		ICEFailedGrace:         15 * time.Second,
		IdleTimeout:            60 * time.Second,
		EventQueue:             256,
		EncoderBitrate:         24000,
		EncoderComplexity:      5,
	}
}

// LoopbackConfig returns DefaultConfig restricted to loopback on an
// ephemeral mux port: what in-process tests and benchmarks use.
func LoopbackConfig() Config {
	c := DefaultConfig()
	c.UDPPort = 0
	c.UDPAddress = "127.0.0.1"
	c.IncludeLoopback = true
	c.LoopbackOnly = true
	return c
}

// ErrInvalidConfig is wrapped by every Validate error.
var ErrInvalidConfig = errors.New("rtc: invalid config")

func cfgErr(key, format string, args ...any) error {
	return fmt.Errorf("%w: rtc.%s: %s", ErrInvalidConfig, key, fmt.Sprintf(format, args...))
}

// Validate checks every key and names the first bad one.
func (c Config) Validate() error {
	if c.UDPPort < 0 || c.UDPPort > 65535 {
		return cfgErr("udp_port", "must be in [0,65535], got %d", c.UDPPort)
	}
	if c.UDPAddress != "" && net.ParseIP(c.UDPAddress) == nil {
		return cfgErr("udp_address", "not an IP address: %q", c.UDPAddress)
	}
	if c.UDPReadBuffer < 0 || c.UDPReadBuffer > 1<<30 {
		return cfgErr("udp_read_buffer", "must be in [0, 1073741824], got %d", c.UDPReadBuffer)
	}
	if (c.PortMin == 0) != (c.PortMax == 0) {
		return cfgErr("port_min", "port_min and port_max must be set together")
	}
	if c.PortMin != 0 {
		if c.PortMin < 1 || c.PortMax > 65535 || c.PortMin > c.PortMax {
			return cfgErr("port_min", "need 1 <= port_min <= port_max <= 65535, got %d..%d", c.PortMin, c.PortMax)
		}
	}
	for i, ip := range c.PublicIPs {
		if net.ParseIP(ip) == nil {
			return cfgErr(fmt.Sprintf("public_ips[%d]", i), "not an IP address: %q", ip)
		}
	}
	if c.TCPPort < 0 || c.TCPPort > 65535 {
		return cfgErr("tcp_port", "must be in [0,65535] (0 = off), got %d", c.TCPPort)
	}
	if c.TCPMaxConns < 1 || c.TCPMaxConns > 1<<20 {
		return cfgErr("tcp_max_conns", "must be in [1, 1048576], got %d", c.TCPMaxConns)
	}
	if err := c.validateICE(); err != nil {
		return err
	}
	if c.MaxOfferBytes < 1024 || c.MaxOfferBytes > 1<<20 {
		return cfgErr("max_offer_bytes", "must be in [1024, 1048576], got %d", c.MaxOfferBytes)
	}
	if c.MaxPatchBytes < 256 || c.MaxPatchBytes > 1<<20 {
		return cfgErr("max_patch_bytes", "must be in [256, 1048576], got %d", c.MaxPatchBytes)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"gather_timeout", c.GatherTimeout},
		{"ice_disconnected_timeout", c.ICEDisconnectedTimeout},
		{"ice_failed_timeout", c.ICEFailedTimeout},
		{"ice_keepalive", c.ICEKeepalive},
		{"idle_timeout", c.IdleTimeout},
	} {
		if d.v <= 0 {
			return cfgErr(d.key, "must be > 0, got %s", d.v)
		}
	}
	if c.ICEFailedGrace < 0 {
		return cfgErr("ice_failed_grace", "must be >= 0, got %s", c.ICEFailedGrace)
	}
	if c.ICEKeepalive >= c.ICEDisconnectedTimeout {
		return cfgErr("ice_keepalive", "must be < ice_disconnected_timeout (%s)", c.ICEDisconnectedTimeout)
	}
	if c.EventQueue < 1 || c.EventQueue > 1<<16 {
		return cfgErr("event_queue", "must be in [1, 65536], got %d", c.EventQueue)
	}
	if c.EncoderBitrate < 6000 || c.EncoderBitrate > 510000 {
		return cfgErr("encoder_bitrate", "must be in [6000, 510000], got %d", c.EncoderBitrate)
	}
	if c.EncoderComplexity < 0 || c.EncoderComplexity > 10 {
		return cfgErr("encoder_complexity", "must be in [0,10], got %d", c.EncoderComplexity)
	}
	return nil
}

// Bounds of rtc.turn.ttl_seconds: a client must have time to gather and
// allocate; the TURN REST draft recommends one day as the longest.
const (
	MinTURNTTLSeconds = 60
	MaxTURNTTLSeconds = 86400
	// MinTURNSecretLen: anyone who learns the secret can mint credentials.
	MinTURNSecretLen = 16
)

// validateICE checks ice_servers and turn.
func (c Config) validateICE() error {
	for i, s := range c.ICEServers {
		key := fmt.Sprintf("ice_servers[%d].urls", i)
		if len(s.URLs) == 0 {
			return cfgErr(key, "must not be empty")
		}
		for _, u := range s.URLs {
			if err := checkICEURL(u, false); err != nil {
				return cfgErr(key, "%v", err)
			}
		}
		if strings.ContainsAny(s.Username+s.Credential, "\"\\\r\n") {
			return cfgErr(fmt.Sprintf("ice_servers[%d]", i), "username/credential must not contain quotes, backslashes or newlines")
		}
	}
	t := c.TURN
	if !t.Enabled() {
		if t.SecretEnv != "" || t.Secret != "" {
			return cfgErr("turn.urls", "must list at least one turn: or turns: URL when turn.secret_env is set")
		}
		return nil
	}
	for i, u := range t.URLs {
		if err := checkICEURL(u, true); err != nil {
			return cfgErr(fmt.Sprintf("turn.urls[%d]", i), "%v", err)
		}
	}
	if t.TTLSeconds < MinTURNTTLSeconds || t.TTLSeconds > MaxTURNTTLSeconds {
		return cfgErr("turn.ttl_seconds", "must be in [%d, %d], got %d", MinTURNTTLSeconds, MaxTURNTTLSeconds, t.TTLSeconds)
	}
	switch {
	case t.Secret == "" && t.SecretEnv == "":
		return cfgErr("turn.secret_env", "required: name the environment variable that holds the TURN server's shared secret (coturn static-auth-secret)")
	case t.Secret == "":
		return cfgErr("turn.secret_env", "environment variable %s is empty or unset", t.SecretEnv)
	case len(t.Secret) < MinTURNSecretLen:
		return cfgErr("turn.secret_env", "the secret in %s is %d bytes; use at least %d (anyone who guesses it can use the relay)", t.SecretEnv, len(t.Secret), MinTURNSecretLen)
	}
	return nil
}

// checkICEURL parses u as a STUN/TURN URL (RFC 7064/7065, the parser pion
// clients use); turnOnly refuses stun:/stuns:. Characters that would break
// a Link header are refused too.
func checkICEURL(u string, turnOnly bool) error {
	if strings.ContainsAny(u, "<>\"\\ \t\r\n,;") {
		return fmt.Errorf("illegal character in %q", u)
	}
	uri, err := stun.ParseURI(u)
	if err != nil {
		if turnOnly {
			return fmt.Errorf("want turn:host[:port][?transport=udp|tcp] or turns:…, got %q (%v)", u, err)
		}
		return fmt.Errorf("want a stun:, stuns:, turn: or turns: URL, got %q (%v)", u, err)
	}
	if turnOnly && uri.Scheme != stun.SchemeTypeTURN && uri.Scheme != stun.SchemeTypeTURNS {
		return fmt.Errorf("want a turn: or turns: URL (STUN needs no credentials: list it in ice_servers), got %q", u)
	}
	return nil
}
