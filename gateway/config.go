package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Scopes a key may hold. A route names the one it needs.
const (
	ScopeSessionsWrite      = "sessions:write"
	ScopeConversationsRead  = "conversations:read"
	ScopeConversationsWrite = "conversations:write"
	ScopeActionsWrite       = "actions:write"
	ScopeToolsWrite         = "tools:write"
	ScopeWebhooksWrite      = "webhooks:write"
	ScopeAuditRead          = "audit:read"
)

// AllScopes lists every scope, in documentation order.
var AllScopes = []string{
	ScopeSessionsWrite, ScopeConversationsRead, ScopeConversationsWrite,
	ScopeActionsWrite, ScopeToolsWrite, ScopeWebhooksWrite, ScopeAuditRead,
}

// Config is the HTTP edge's configuration.
type Config struct {
	// Listen is the address of the public listener.
	Listen string `yaml:"listen"`
	// DebugListen, when set, serves pprof on a separate listener. It must be
	// a loopback address: profiles reveal internals.
	DebugListen string `yaml:"debug_listen"`
	// APIVersion is sent as VERA-Version on every response.
	APIVersion string `yaml:"api_version"`
	// Auth is decoded by cmd/vera-gateway, which reads each key's webhook
	// receivers next to it (auth.keys[].webhooks) and hands the edge only
	// what it uses; hence no YAML key here.
	Auth        AuthConfig        `yaml:"-"`
	Limits      LimitsConfig      `yaml:"limits"`
	Idempotency IdempotencyConfig `yaml:"idempotency"`
	// ShutdownGraceMS is how long live sessions get after SIGTERM before the
	// process exits.
	ShutdownGraceMS int `yaml:"shutdown_grace_ms"`
}

// AuthConfig holds partner keys and the client-token settings. With no keys
// the gateway runs in dev mode: loopback clients only, no authentication.
type AuthConfig struct {
	// Keys: see Config.Auth for why they carry no YAML key.
	Keys []KeyConfig `yaml:"-"`
	// TokenSecret signs client tokens (HMAC-SHA256, at least 32 bytes). cmd
	// fills it from TokenSecretEnv; when both are empty a random secret is
	// made at start-up, so tokens do not survive a restart or cross nodes.
	TokenSecret     string `yaml:"token_secret"`
	TokenSecretEnv  string `yaml:"token_secret_env"`
	TokenTTLSeconds int    `yaml:"token_ttl_seconds"`
	TokenMaxTTL     int    `yaml:"token_max_ttl_seconds"`
}

// KeyConfig is one partner key. Secret is filled by cmd from SecretEnv when
// that is set (preferred: secrets stay out of files).
type KeyConfig struct {
	ID        string   `yaml:"id"`
	Secret    string   `yaml:"secret"`
	SecretEnv string   `yaml:"secret_env"`
	Scopes    []string `yaml:"scopes"`
}

// LimitsConfig bounds what one key, one person and one source may do.
type LimitsConfig struct {
	// RequestsPerMinute is a partner's bucket: every request made with its
	// key or any of its client tokens counts.
	RequestsPerMinute int `yaml:"requests_per_minute"`
	// PerEndUserRPM is each end user's own bucket, taken from besides the
	// partner's by that end user's client tokens.
	PerEndUserRPM int   `yaml:"per_end_user_rpm"`
	BodyBytes     int64 `yaml:"body_bytes"`
	MessageChars  int   `yaml:"message_chars"`
	ContextChars  int   `yaml:"context_chars"`
	// AuthFailuresPerMinute throttles failed authentications per source
	// address: past it the source gets 429 before its credentials are
	// looked at.
	AuthFailuresPerMinute int `yaml:"auth_failures_per_minute"`

	// Connections. Every bound holds before authentication.

	// MaxConnectionsPerSource caps one source address's open connections
	// (and, behind a trusted proxy, its requests in flight); past it a new
	// connection gets 503 with Retry-After and is closed.
	MaxConnectionsPerSource int `yaml:"max_connections_per_source"`
	// TrustedProxies are the CIDRs of load balancers whose X-Forwarded-For
	// or PROXY protocol header names the real source. Nobody else's is
	// believed.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// HeaderTimeout bounds reading a request's headers; BodyTimeout its
	// body (JSON, SDP and fragments are small); WriteTimeout writing the
	// response (a route that waits on a model sets its own); IdleTimeout a
	// keep-alive connection between requests. Websocket upgrades clear the
	// deadlines once upgraded and keep themselves alive with pings.
	HeaderTimeout time.Duration `yaml:"header_timeout"`
	BodyTimeout   time.Duration `yaml:"body_timeout"`
	WriteTimeout  time.Duration `yaml:"write_timeout"`
	IdleTimeout   time.Duration `yaml:"idle_timeout"`
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes int `yaml:"max_header_bytes"`

	// PerPartner and PerToken are the shares of the global capacities
	// (chat.max_connections, session.max_sessions,
	// admission.max_voice_sessions) one partner, and one end user's client
	// tokens, may hold at once.
	PerPartner ShareConfig `yaml:"per_partner"`
	PerToken   ShareConfig `yaml:"per_token"`
}

// IdempotencyConfig bounds the Idempotency-Key store.
type IdempotencyConfig struct {
	TTLSeconds int `yaml:"ttl_seconds"`
	// MaxEntries is each partner's capacity: past it that partner's oldest
	// key is dropped, never another partner's.
	MaxEntries int `yaml:"max_entries"`
	// MaxResponseBytes is the largest response body kept for replay; larger
	// responses are not stored and their key is released.
	MaxResponseBytes int `yaml:"max_response_bytes"`
}

// DefaultConfig is what `make run` uses: loopback, dev mode, the Partner
// API's limits.
func DefaultConfig() Config {
	return Config{
		Listen:     "127.0.0.1:8080",
		APIVersion: "2026-11-30",
		Auth: AuthConfig{
			TokenTTLSeconds: 60,
			TokenMaxTTL:     600,
		},
		Limits: LimitsConfig{
			RequestsPerMinute: 60,
			PerEndUserRPM:     20,
			BodyBytes:         64 << 10,
			MessageChars:      8000,
			ContextChars:      4000,

			AuthFailuresPerMinute:   30,
			MaxConnectionsPerSource: 256,
			PerPartner:              ShareConfig{Chats: 0.5, Sessions: 0.5, VoiceSessions: 0.5},
			PerToken:                ShareConfig{Chats: 0.001, Sessions: 0.001, VoiceSessions: 0.004},
			HeaderTimeout:           5 * time.Second,
			BodyTimeout:             10 * time.Second,
			WriteTimeout:            60 * time.Second,
			IdleTimeout:             60 * time.Second,
			MaxHeaderBytes:          16 << 10,
		},
		Idempotency: IdempotencyConfig{
			TTLSeconds:       24 * 3600,
			MaxEntries:       100_000,
			MaxResponseBytes: 256 << 10,
		},
		ShutdownGraceMS: 10_000,
	}
}

// DevMode reports whether no partner key is configured.
func (c Config) DevMode() bool { return len(c.Auth.Keys) == 0 }

// problems collects validation errors, each named by its config key.
type problems []error

func (p *problems) bad(key, format string, args ...any) {
	*p = append(*p, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
}

// Validate checks every value and names the key of each bad one.
func (c Config) Validate() error {
	var p problems
	c.validateListen(&p)
	c.Auth.validate(&p)
	c.Limits.validate(&p)
	if c.Idempotency.TTLSeconds < 60 {
		p.bad("idempotency.ttl_seconds", "must be at least 60")
	}
	if c.Idempotency.MaxEntries < 1 {
		p.bad("idempotency.max_entries", "must be at least 1")
	}
	if c.Idempotency.MaxResponseBytes < 1024 {
		p.bad("idempotency.max_response_bytes", "must be at least 1024")
	}
	if c.ShutdownGraceMS < 0 {
		p.bad("shutdown_grace_ms", "must not be negative")
	}
	return errors.Join(p...)
}

func (c Config) validateListen(p *problems) {
	bad := p.bad
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		bad("listen", "%q is not host:port", c.Listen)
	} else if c.DevMode() && !isLoopbackHost(host) {
		bad("listen", "%q is not a loopback address, and no auth.keys are configured: dev mode serves unauthenticated "+
			"requests, so it only listens on 127.0.0.1, ::1 or localhost; add auth.keys to listen publicly", c.Listen)
	}
	if c.DebugListen != "" {
		h, _, err := net.SplitHostPort(c.DebugListen)
		if err != nil || !isLoopbackHost(h) {
			bad("debug_listen", "%q must be a loopback host:port (pprof exposes internals)", c.DebugListen)
		}
	}
	if strings.TrimSpace(c.APIVersion) == "" {
		bad("api_version", "must not be empty")
	}
}

func (c AuthConfig) validate(p *problems) {
	bad := p.bad
	seen := map[string]bool{}
	for i, k := range c.Keys {
		key := fmt.Sprintf("auth.keys[%d]", i)
		switch {
		case k.ID == "":
			bad(key+".id", "must not be empty")
		case seen[k.ID]:
			bad(key+".id", "%q is used twice", k.ID)
		}
		seen[k.ID] = true
		if k.Secret == "" {
			if k.SecretEnv != "" {
				bad(key+".secret_env", "environment variable %s is empty or unset", k.SecretEnv)
			} else {
				bad(key+".secret", "set secret_env (preferred) or secret")
			}
		} else if len(k.Secret) < 16 {
			bad(key+".secret", "must be at least 16 characters")
		}
		if len(k.Scopes) == 0 {
			bad(key+".scopes", "must list at least one scope of %v", AllScopes)
		}
		for _, s := range k.Scopes {
			if !knownScope(s) {
				bad(key+".scopes", "unknown scope %q (known: %v)", s, AllScopes)
			}
		}
	}
	if c.TokenSecret != "" && len(c.TokenSecret) < 32 {
		bad("auth.token_secret", "must be at least 32 bytes")
	}
	if c.TokenTTLSeconds < 1 || c.TokenTTLSeconds > c.TokenMaxTTL {
		bad("auth.token_ttl_seconds", "must be in [1, token_max_ttl_seconds]")
	}
	if c.TokenMaxTTL < 1 || c.TokenMaxTTL > 3600 {
		bad("auth.token_max_ttl_seconds", "must be in [1, 3600]")
	}
}

func (c LimitsConfig) validate(p *problems) {
	bad := p.bad
	if c.RequestsPerMinute < 1 {
		bad("limits.requests_per_minute", "must be at least 1")
	}
	if c.PerEndUserRPM < 1 || c.PerEndUserRPM > c.RequestsPerMinute {
		bad("limits.per_end_user_rpm", "must be in [1, limits.requests_per_minute]")
	}
	if c.BodyBytes < 1024 {
		bad("limits.body_bytes", "must be at least 1024")
	}
	if c.AuthFailuresPerMinute < 1 {
		bad("limits.auth_failures_per_minute", "must be at least 1")
	}
	if c.MaxConnectionsPerSource < 1 {
		bad("limits.max_connections_per_source", "must be at least 1")
	}
	for i, p := range c.TrustedProxies {
		if _, err := parseCIDR(p); err != nil {
			bad(fmt.Sprintf("limits.trusted_proxies[%d]", i), "%q is not a CIDR or an IP address", p)
		}
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"header_timeout", c.HeaderTimeout}, {"body_timeout", c.BodyTimeout},
		{"write_timeout", c.WriteTimeout}, {"idle_timeout", c.IdleTimeout}} {
		if d.v < 100*time.Millisecond || d.v > 10*time.Minute {
			bad("limits."+d.key, "must be in [100ms, 10m], got %v", d.v)
		}
	}
	for _, sh := range []struct {
		key string
		c   ShareConfig
	}{{"limits.per_partner", c.PerPartner}, {"limits.per_token", c.PerToken}} {
		for _, v := range []struct {
			key string
			f   float64
		}{{"chats", sh.c.Chats}, {"sessions", sh.c.Sessions}, {"voice_sessions", sh.c.VoiceSessions}} {
			if !(v.f > 0 && v.f <= 1) {
				bad(sh.key+"."+v.key, "must be a share in (0, 1] of the global cap, got %v", v.f)
			}
		}
	}
	if c.MaxHeaderBytes < 4096 || c.MaxHeaderBytes > 1<<20 {
		bad("limits.max_header_bytes", "must be in [4096, 1048576]")
	}
	if c.MessageChars < 1 {
		bad("limits.message_chars", "must be at least 1")
	}
	if c.ContextChars < 1 {
		bad("limits.context_chars", "must be at least 1")
	}
}

func knownScope(s string) bool {
	for _, k := range AllScopes {
		if s == k {
			return true
		}
	}
	return false
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseCIDR reads a CIDR or a single address (as its /32 or /128).
func parseCIDR(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}
