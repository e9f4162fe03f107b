package gateway

import (
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func signClaims(t *testing.T, iss *TokenIssuer, c *ClientTokenClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(iss.secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
