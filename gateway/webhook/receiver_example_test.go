package webhook_test

// This file is the receiver example of docs/webhooks.md, verbatim between the
// BEGIN/END markers (TestDocsExampleIsVerbatim keeps them equal). It imports
// nothing from the gateway: it is what a partner writes.

// BEGIN receiver
import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxAge is how old a signature's timestamp may be: older requests are
// refused as possible replays.
const maxAge = 5 * time.Minute

// verifySignature checks a VERA-Signature header ("t=<unix>,v1=<hex>")
// against the raw request body.
func verifySignature(secret, header string, body []byte, now time.Time) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("malformed VERA-Signature")
	}
	if age := now.Sub(time.Unix(unix, 0)); age > maxAge || age < -maxAge {
		return errors.New("timestamp outside the 5 minute window")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("signature mismatch")
}

// receiver verifies each request, drops repeats by VERA-Event-Id and hands
// new events to handle. Answer 2xx quickly: anything else is retried.
type receiver struct {
	secret string
	now    func() time.Time
	handle func(eventType string, body []byte)

	mu   sync.Mutex
	seen map[string]time.Time // event id → when first seen
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	now := rc.now()
	if err := verifySignature(rc.secret, r.Header.Get("VERA-Signature"), body, now); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	id := r.Header.Get("VERA-Event-Id")
	rc.mu.Lock()
	for k, at := range rc.seen { // forget ids older than any retry can be
		if now.Sub(at) > time.Hour {
			delete(rc.seen, k)
		}
	}
	_, dup := rc.seen[id]
	if !dup {
		rc.seen[id] = now
	}
	rc.mu.Unlock()
	if !dup {
		rc.handle(r.Header.Get("VERA-Event-Type"), body)
	}
	w.WriteHeader(http.StatusNoContent)
}

// END receiver
