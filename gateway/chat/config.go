package chat

import (
	"errors"
	"fmt"
	"time"

	"github.com/veraneural/vera-gateway/gateway/event"
)

// Config bounds the websocket endpoint. Decoded from YAML under "chat".
type Config struct {
	// AllowedOrigins are extra Origin host patterns (path.Match syntax, e.g.
	// "app.example.com", "*.example.com") allowed besides the request's own
	// host. Empty means same-origin only.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// ReadLimitBytes is the largest frame accepted; larger closes with 1009.
	ReadLimitBytes int64 `yaml:"read_limit_bytes"`
	// EventsPerSecond and Burst rate-limit client events per connection.
	EventsPerSecond float64 `yaml:"events_per_second"`
	Burst           int     `yaml:"burst"`
	// HelloTimeout bounds the wait for a successful hello.
	HelloTimeout time.Duration `yaml:"hello_timeout"`
	// WriteTimeout bounds one frame write; a socket that takes longer is a
	// slow reader and is closed.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// PingInterval and PingTimeout drive keep-alive.
	PingInterval time.Duration `yaml:"ping_interval"`
	PingTimeout  time.Duration `yaml:"ping_timeout"`
	// MaxConnections bounds concurrent connections; more get 503.
	MaxConnections int `yaml:"max_connections"`
}

// DefaultConfig returns production defaults.
func DefaultConfig() Config {
	return Config{
		ReadLimitBytes:  2 * event.MaxEventBytes,
		EventsPerSecond: 10,
		Burst:           20,
		HelloTimeout:    10 * time.Second,
		WriteTimeout:    10 * time.Second,
		PingInterval:    20 * time.Second,
		PingTimeout:     10 * time.Second,
		MaxConnections:  10000,
	}
}

// ErrConfig is wrapped by every Validate error.
var ErrConfig = errors.New("invalid config")

// Validate checks every key; messages name it.
func (c Config) Validate() error {
	bad := func(key, msg string) error { return fmt.Errorf("chat.%s: %s: %w", key, msg, ErrConfig) }
	switch {
	case c.ReadLimitBytes <= event.MaxEventBytes:
		return bad("read_limit_bytes", fmt.Sprintf("must be > %d so oversized events get an error event", event.MaxEventBytes))
	case c.ReadLimitBytes > 16<<20:
		return bad("read_limit_bytes", "must be <= 16 MiB")
	case c.EventsPerSecond <= 0:
		return bad("events_per_second", "must be > 0")
	case c.Burst < 1:
		return bad("burst", "must be >= 1")
	case c.HelloTimeout <= 0:
		return bad("hello_timeout", "must be > 0")
	case c.WriteTimeout <= 0:
		return bad("write_timeout", "must be > 0")
	case c.PingInterval <= 0:
		return bad("ping_interval", "must be > 0")
	case c.PingTimeout <= 0:
		return bad("ping_timeout", "must be > 0")
	case c.MaxConnections < 1:
		return bad("max_connections", "must be >= 1")
	}
	for i, o := range c.AllowedOrigins {
		if o == "" || o == "*" {
			return bad(fmt.Sprintf("allowed_origins[%d]", i), `must be a host pattern, not empty or "*"`)
		}
	}
	return nil
}
