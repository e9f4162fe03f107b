package cluster

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Config is the file's cluster section. No section (the zero Config) is
// one node on today's in-process and bbolt stores; with it, the node joins
// the cluster on RedisURL.
type Config struct {
	// RedisURL is redis://host:port/db, rediss:// for TLS, or
	// unix:///path/to/redis.sock (?db=N).
	RedisURL string `yaml:"redis_url"`
	// RedisPasswordEnv names the variable holding Redis's password
	// (optional; a password in the URL works too). cmd fills RedisPassword.
	RedisPasswordEnv string `yaml:"redis_password_env"`
	RedisPassword    string `yaml:"-"`
	// NodeID names this node; cmd defaults it to the hostname. Start-up is
	// refused while a live node has it.
	NodeID string `yaml:"node_id"`
	// AdvertiseURL is how the other nodes reach this one (the forwarded
	// calls); required.
	AdvertiseURL string `yaml:"advertise_url"`
	// PublicURL is how clients reach this node: the WHIP answer's Location
	// points there. Empty: AdvertiseURL.
	PublicURL string `yaml:"public_url"`
	// SecretEnv names the variable holding the HMAC key of node-to-node
	// calls (at least 32 bytes, the same on every node); required. cmd
	// fills Secret.
	SecretEnv string `yaml:"secret_env"`
	Secret    string `yaml:"-"`
	// HeartbeatMS is how often the node refreshes its directory entries;
	// they lapse after two heartbeats without one. 0: 2000.
	HeartbeatMS int `yaml:"heartbeat_ms"`
}

// DefaultHeartbeat is heartbeat_ms's default.
const DefaultHeartbeat = 2 * time.Second

// minSecretBytes is the shortest cluster secret accepted (HMAC-SHA256).
const minSecretBytes = 32

// Enabled reports whether the file has a cluster section.
func (c Config) Enabled() bool { return c != Config{} }

// Heartbeat is HeartbeatMS as a duration, with its default.
func (c Config) Heartbeat() time.Duration {
	if c.HeartbeatMS == 0 {
		return DefaultHeartbeat
	}
	return time.Duration(c.HeartbeatMS) * time.Millisecond
}

// Public is PublicURL, or AdvertiseURL when it is empty, without a
// trailing slash.
func (c Config) Public() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	return strings.TrimRight(c.AdvertiseURL, "/")
}

var validNodeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Validate checks an enabled section (cmd has filled the secrets); keys
// are named as in the file.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("cluster.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.RedisURL == "" {
		bad("redis_url", "required (redis://host:6379/0, rediss://… or unix:///run/redis.sock)")
	} else if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
		bad("redis_url", "%q is not a redis://, rediss:// or unix:// URL", redactURL(c.RedisURL))
	}
	if !validNodeID.MatchString(c.NodeID) {
		bad("node_id", "%q must be 1 to 63 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit", c.NodeID)
	}
	for _, k := range []struct{ key, v string }{{"advertise_url", c.AdvertiseURL}, {"public_url", c.PublicURL}} {
		if k.v == "" && k.key == "public_url" {
			continue
		}
		if u, err := url.Parse(k.v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			bad(k.key, "%q must be an http:// or https:// URL with a host and no path", k.v)
		}
	}
	switch {
	case c.SecretEnv == "":
		bad("secret_env", "required: the environment variable holding the node-to-node HMAC key (the same on every node)")
	case c.Secret == "":
		bad("secret_env", "environment variable %s is empty or unset", c.SecretEnv)
	case len(c.Secret) < minSecretBytes:
		bad("secret_env", "%s must hold at least %d bytes (it is %d)", c.SecretEnv, minSecretBytes, len(c.Secret))
	}
	if c.HeartbeatMS != 0 && (c.HeartbeatMS < 50 || c.HeartbeatMS > 60_000) {
		bad("heartbeat_ms", "must be in [50, 60000], got %d", c.HeartbeatMS)
	}
	return errors.Join(errs...)
}

// redactURL hides a password in a Redis URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
