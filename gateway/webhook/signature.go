package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Header names sent with every delivery.
const (
	HeaderSignature = "VERA-Signature"
	HeaderEventID   = "VERA-Event-Id"
	HeaderEventType = "VERA-Event-Type"
)

// Sign returns the VERA-Signature value for body sent at t:
// "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">".
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}
