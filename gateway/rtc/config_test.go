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
