package rtc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	if err := LoopbackConfig().Validate(); err != nil {
		t.Fatalf("loopback config invalid: %v", err)
	}
	cases := []struct {
		key string
		mut func(*Config)
	}{
		{"udp_port", func(c *Config) { c.UDPPort = 70000 }},
		{"udp_address", func(c *Config) { c.UDPAddress = "localhost" }},
		{"port_min", func(c *Config) { c.PortMin = 5000 }},
		{"port_min", func(c *Config) { c.PortMin, c.PortMax = 6000, 5000 }},
		{"public_ips[1]", func(c *Config) { c.PublicIPs = []string{"203.0.113.1", "nope"} }},
		{"ice_servers[0].urls", func(c *Config) { c.ICEServers = []ICEServer{{}} }},
		{"ice_servers[0].urls", func(c *Config) { c.ICEServers = []ICEServer{{URLs: []string{"http://x"}}} }},
		{"ice_servers[0].urls", func(c *Config) { c.ICEServers = []ICEServer{{URLs: []string{"stun:x:3478?transport=udp"}}} }},
		{"ice_servers[0].urls", func(c *Config) { c.ICEServers = []ICEServer{{URLs: []string{"turn:x>; rel=evil"}}} }},
		{"tcp_port", func(c *Config) { c.TCPPort = -1 }},
		{"tcp_port", func(c *Config) { c.TCPPort = 65536 }},
		{"tcp_max_conns", func(c *Config) { c.TCPMaxConns = 0 }},
		{"turn.urls", func(c *Config) { c.TURN.SecretEnv = "TURN_SECRET" }},
		{"turn.urls[0]", func(c *Config) { *c = withTURN(*c); c.TURN.URLs = []string{"stun:turn.example.com:3478"} }},
		{"turn.urls[1]", func(c *Config) {
			*c = withTURN(*c)
			c.TURN.URLs = append(c.TURN.URLs, "https://turn.example.com")
		}},
		{"turn.urls[0]", func(c *Config) {
			*c = withTURN(*c)
			c.TURN.URLs = []string{"turn:turn.example.com:3478?transport=sctp"}
		}},
		{"turn.urls[0]", func(c *Config) { *c = withTURN(*c); c.TURN.URLs = []string{"turn::3478"} }},
		{"turn.urls[0]", func(c *Config) { *c = withTURN(*c); c.TURN.URLs = []string{"turn:turn.example.com:port"} }},
		{"turn.ttl_seconds", func(c *Config) { *c = withTURN(*c); c.TURN.TTLSeconds = 0 }},
		{"turn.ttl_seconds", func(c *Config) { *c = withTURN(*c); c.TURN.TTLSeconds = 59 }},
		{"turn.ttl_seconds", func(c *Config) { *c = withTURN(*c); c.TURN.TTLSeconds = 86401 }},
		{"turn.secret_env", func(c *Config) { *c = withTURN(*c); c.TURN.SecretEnv, c.TURN.Secret = "", "" }},
		{"turn.secret_env", func(c *Config) { *c = withTURN(*c); c.TURN.Secret = "" }},
		{"turn.secret_env", func(c *Config) { *c = withTURN(*c); c.TURN.Secret = "short" }},
		{"ice_servers[0]", func(c *Config) {
			c.ICEServers = []ICEServer{{URLs: []string{"turn:x"}, Username: "a\"b"}}
		}},
		{"max_offer_bytes", func(c *Config) { c.MaxOfferBytes = 10 }},
		{"max_patch_bytes", func(c *Config) { c.MaxPatchBytes = 2 << 20 }},
		{"gather_timeout", func(c *Config) { c.GatherTimeout = 0 }},
		{"idle_timeout", func(c *Config) { c.IdleTimeout = -time.Second }},
		{"ice_failed_grace", func(c *Config) { c.ICEFailedGrace = -1 }},
		{"ice_keepalive", func(c *Config) { c.ICEKeepalive = time.Minute }},
		{"event_queue", func(c *Config) { c.EventQueue = 0 }},
		{"encoder_bitrate", func(c *Config) { c.EncoderBitrate = 100 }},
		{"encoder_complexity", func(c *Config) { c.EncoderComplexity = 11 }},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.mut(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: want error", tc.key)
			continue
		}
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "rtc."+tc.key+":") {
			t.Errorf("%s: error %q does not name the key", tc.key, err)
		}
	}
}

func withTURN(c Config) Config {
	c.TURN = TURNConfig{URLs: []string{"turn:turn.example.com:3478?transport=udp"}, SecretEnv: "TURN_SECRET",
		Secret: "a-secret-of-32-bytes-0123456789ab", TTLSeconds: 3600}
	return c
}

// TestConfigValidateMessages: the messages say what to do.
func TestConfigValidateMessages(t *testing.T) {
	if err := withTURN(DefaultConfig()).Validate(); err != nil {
		t.Fatalf("a good turn section: %v", err)
	}
	good := withTURN(DefaultConfig())
	good.TURN.URLs = []string{"turn:127.0.0.1?transport=tcp", "turns:turn.example.com", "turn:[::1]:3478"}
	good.TCPPort = 7881
	if err := good.Validate(); err != nil {
		t.Fatalf("good URLs and tcp_port: %v", err)
	}
	for _, tc := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.TURN.URLs = []string{"stun:turn.example.com"} }, "STUN needs no credentials"},
		{func(c *Config) { c.TURN.SecretEnv, c.TURN.Secret = "", "" }, "name the environment variable"},
		{func(c *Config) { c.TURN.Secret = "" }, "environment variable TURN_SECRET is empty or unset"},
		{func(c *Config) { c.TURN.TTLSeconds = 5 }, "must be in [60, 86400], got 5"},
	} {
		c := withTURN(DefaultConfig())
		tc.mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to say %q", err, tc.want)
		}
	}
}

func TestLinkHeaders(t *testing.T) {
	got := linkHeaders([]ICEServer{
		{URLs: []string{"stun:stun.example.net:3478"}},
		{URLs: []string{"turn:turn.example.net?transport=udp"}, Username: "u", Credential: "p"},
	})
	want := []string{
		`<stun:stun.example.net:3478>; rel="ice-server"`,
		`<turn:turn.example.net?transport=udp>; rel="ice-server"; username="u"; credential="p"; credential-type="password"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
