package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"slices"
	"strings"
)

// Principal is who a request acts for: a partner key, a client token bound
// to one end user and device, or the dev-mode loopback user.
type Principal struct {
	// PartnerID owns every object the request creates; another partner
	// never sees them.
	PartnerID string
	// Via is "key", "token" or "dev".
	Via    string
	Scopes []string
	// EndUserID and Device are set for client tokens.
	EndUserID string
	Device    string
}

// Has reports whether the principal holds scope.
func (p Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

// DevPartnerID owns everything created in dev mode.
const DevPartnerID = "dev"

// PrincipalFrom returns the principal the auth middleware stored.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey).(Principal)
	return p, ok
}

// RequirePrincipal returns the principal the auth middleware stored, or
// writes 401 and reports false: the Authorize of a sub-package's handler
// (gateway/rtc) mounted behind the middleware, which never reaches it
// unauthenticated.
func RequirePrincipal(w http.ResponseWriter, r *http.Request) (Principal, bool) {
	p, ok := PrincipalFrom(r.Context())
	if !ok {
		WriteError(w, r, Errorf(AuthenticationError, "missing credentials"))
	}
	return p, ok
}

// WithPrincipal returns ctx carrying p. Sub-packages that authenticate on
// their own (websocket subprotocol tokens) use it to hand p to handlers.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey, p)
}

type storedKey struct {
	id     string
	digest [32]byte
	scopes []string
}

// authenticator checks Bearer credentials: partner keys by constant-time
// comparison of their SHA-256 digests (every key is compared, so timing says
// nothing about which one nearly matched), client tokens by signature.
type authenticator struct {
	keys   []storedKey
	tokens *TokenIssuer
	dev    bool
}

func newAuthenticator(cfg AuthConfig, tokens *TokenIssuer) *authenticator {
	a := &authenticator{tokens: tokens, dev: len(cfg.Keys) == 0}
	for _, k := range cfg.Keys {
		a.keys = append(a.keys, storedKey{id: k.ID, digest: sha256.Sum256([]byte(k.Secret)), scopes: slices.Clone(k.Scopes)})
	}
	return a
}

func (a *authenticator) lookupKey(secret string) (storedKey, bool) {
	d := sha256.Sum256([]byte(secret))
	var found storedKey
	match := 0
	for _, k := range a.keys {
		if subtle.ConstantTimeCompare(d[:], k.digest[:]) == 1 {
			found = k
			match = 1
		}
	}
	return found, match == 1
}

// partnerScopes returns the scopes a partner's key holds now, so that a token
// of a removed key stops working.
func (a *authenticator) partnerScopes(partner string) ([]string, bool) {
	if a.dev && partner == DevPartnerID {
		return AllScopes, true
	}
	for _, k := range a.keys {
		if k.id == partner {
			return k.scopes, true
		}
	}
	return nil, false
}

// bearer extracts the credential of an Authorization: Bearer header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(cred) == "" {
		return "", false
	}
	return strings.TrimSpace(cred), true
}

// Authenticate resolves the request's principal. allowToken admits client
// tokens (device endpoints); partner-only endpoints pass false. token, when
// non-empty, is a credential found outside the Authorization header (a
// websocket subprotocol or query parameter).
func (a *authenticator) Authenticate(r *http.Request, allowToken bool, token string) (Principal, *Error) {
	cred, ok := bearer(r)
	if !ok && r.Header.Get("Authorization") != "" {
		return Principal{}, Errorf(AuthenticationError, "Authorization header must be \"Bearer <key or client token>\"")
	}
	if !ok && token != "" {
		if !looksLikeToken(token) {
			return Principal{}, Errorf(AuthenticationError, "only client tokens are accepted outside the Authorization header: a partner key never belongs in a URL or a browser")
		}
		cred, ok = token, true
	}
	if !ok {
		if a.dev {
			if isLoopbackRemote(r) {
				return Principal{PartnerID: DevPartnerID, Via: "dev", Scopes: AllScopes}, nil
			}
			return Principal{}, Errorf(AuthenticationError, "dev mode serves loopback clients only")
		}
		return Principal{}, Errorf(AuthenticationError, "missing API key: send Authorization: Bearer <key>")
	}
	if looksLikeToken(cred) {
		if !allowToken {
			return Principal{}, Errorf(AuthenticationError, "client tokens are not accepted here: use a partner key")
		}
		c, err := a.tokens.Verify(cred)
		if err != nil {
			return Principal{}, err
		}
		keyScopes, ok := a.partnerScopes(c.Partner)
		if !ok {
			return Principal{}, Errorf(AuthenticationError, "client token's partner key no longer exists")
		}
		var scopes []string
		for _, s := range c.Scopes {
			if slices.Contains(keyScopes, s) {
				scopes = append(scopes, s)
			}
		}
		return Principal{PartnerID: c.Partner, Via: "token", Scopes: scopes, EndUserID: c.Subject, Device: c.Device}, nil
	}
	k, ok := a.lookupKey(cred)
	if !ok {
		return Principal{}, Errorf(AuthenticationError, "invalid API key")
	}
	return Principal{PartnerID: k.id, Via: "key", Scopes: k.scopes}, nil
}

// looksLikeToken tells a compact JWS (three base64url parts) from a key.
func looksLikeToken(s string) bool {
	return strings.Count(s, ".") == 2 && !strings.HasPrefix(s, "vera_sk_")
}

func isLoopbackRemote(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
