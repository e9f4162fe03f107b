package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/veraneural/vera-gateway/gateway/clock"
)

const (
	tokenIssuer   = "vera-gateway"
	tokenAudience = "vera-gateway:device"
)

// ClientTokenClaims are what a client token binds: partner, end user
// (subject), device profile and scopes, with a short expiry.
type ClientTokenClaims struct {
	Partner string   `json:"ptn"`
	Device  string   `json:"dev"`
	Scopes  []string `json:"scp"`
	jwt.RegisteredClaims
}

// TokenIssuer signs and verifies client tokens (HS256). Keys stay on
// partners' servers; apps and browsers get these instead.
type TokenIssuer struct {
	secret []byte
	clock  clock.Clock
}

// NewTokenIssuer returns an issuer signing with secret; an empty secret is
// replaced by 32 random bytes (single-node dev use).
func NewTokenIssuer(secret string, clk clock.Clock) *TokenIssuer {
	s := []byte(secret)
	if len(s) == 0 {
		s = make([]byte, 32)
		_, _ = rand.Read(s)
	}
	return &TokenIssuer{secret: s, clock: clock.OrReal(clk)}
}

// Issue signs a token for the claims' partner, subject, device and scopes,
// valid for ttl from now.
func (t *TokenIssuer) Issue(partner, endUser, device string, scopes []string, ttl time.Duration) (string, time.Time, error) {
	now := t.clock.Now().Truncate(time.Second)
	exp := now.Add(ttl)
	var jti [12]byte
	_, _ = rand.Read(jti[:])
	c := ClientTokenClaims{
		Partner: partner, Device: device, Scopes: scopes,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    tokenIssuer,
			Subject:   endUser,
			Audience:  jwt.ClaimStrings{tokenAudience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
			ID:        hex.EncodeToString(jti[:]),
		},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("gateway: sign client token: %w", err)
	}
	return s, exp, nil
}

// Verify checks signature, algorithm, issuer, audience and expiry, and
// returns the claims or a 401 *Error saying which check failed.
func (t *TokenIssuer) Verify(token string) (*ClientTokenClaims, *Error) {
	var c ClientTokenClaims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(tokenIssuer),
		jwt.WithAudience(tokenAudience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(t.clock.Now),
	)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrTokenExpired):
		return nil, Errorf(AuthenticationError, "client token expired")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return nil, Errorf(AuthenticationError, "client token has the wrong audience")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return nil, Errorf(AuthenticationError, "client token has the wrong issuer")
	default:
		return nil, Errorf(AuthenticationError, "invalid client token")
	}
	if c.Partner == "" || c.Subject == "" {
		return nil, Errorf(AuthenticationError, "invalid client token")
	}
	return &c, nil
}
