package rtc

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the TURN REST API's HMAC
	"encoding/base64"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTURNCredentialVector checks the minted password against openssl:
//
//	printf '%s' '1700000000:0a1b2c3d4e5f60718293a4b5' |
//	  openssl dgst -sha1 -hmac 'coturn-static-auth-secret-42' -binary | base64
func TestTURNCredentialVector(t *testing.T) {
	user, pass := TURNCredential("coturn-static-auth-secret-42", time.Unix(1700000000, 0), "0a1b2c3d4e5f60718293a4b5")
	if user != "1700000000:0a1b2c3d4e5f60718293a4b5" {
		t.Errorf("username %q", user)
	}
	if pass != "EeUZzlUNmcXjM0pZJez10+coWJQ=" {
		t.Errorf("password %q, want openssl's EeUZzlUNmcXjM0pZJez10+coWJQ=", pass)
	}
	// A second vector computed now, when openssl is installed.
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Log("openssl not installed: only the fixed vector checked")
		return
	}
	secret := "another secret, with spaces & symbols!"
	user, pass = TURNCredential(secret, time.Unix(2000000123, 999), "ff00")
	cmd := exec.Command("openssl", "dgst", "-sha1", "-hmac", secret, "-binary")
	cmd.Stdin = strings.NewReader(user)
	mac, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	if want := base64.StdEncoding.EncodeToString(mac); pass != want || user != "2000000123:ff00" {
		t.Errorf("got %q %q, openssl says password %q", user, pass, want)
	}
}

func turnTestConfig() Config {
	c := LoopbackConfig()
	c.ICEServers = []ICEServer{{URLs: []string{"stun:stun.example.net:3478"}}}
	c.TURN = TURNConfig{
		URLs:       []string{"turn:turn.example.com:3478?transport=udp", "turns:turn.example.com:5349?transport=tcp"},
		SecretEnv:  "TURN_SECRET",
		Secret:     "0123456789abcdef-the-turn-secret",
		TTLSeconds: 3600,
	}
	return c
}

func TestMintedICEServers(t *testing.T) {
	now := time.Unix(1750000000, 500e6)
	e, err := NewEngine(turnTestConfig(), nil, WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	id := "6f1d2c3b4a5968778695a4b3c2d1e0f0"
	got := e.ICEServers(id)
	if len(got) != 2 {
		t.Fatalf("got %d servers, want the static one then the minted one: %+v", len(got), got)
	}
	if got[0].URLs[0] != "stun:stun.example.net:3478" || got[0].Username != "" {
		t.Errorf("static entry %+v", got[0])
	}
	m := got[1]
	if strings.Join(m.URLs, " ") != "turn:turn.example.com:3478?transport=udp turns:turn.example.com:5349?transport=tcp" {
		t.Errorf("minted URLs %q", m.URLs)
	}
	exp, opaque, ok := strings.Cut(m.Username, ":")
	if !ok || exp != strconv.FormatInt(now.Unix()+3600, 10) {
		t.Errorf("username %q: want expiry %d first", m.Username, now.Unix()+3600)
	}
	if len(opaque) != 24 || strings.Contains(opaque, ":") || strings.Contains(id, opaque) {
		t.Errorf("opaque user %q: want 24 hex characters unrelated to the session id", opaque)
	}
	// The password is HMAC-SHA1(secret, username), computed here directly.
	h := hmac.New(sha1.New, []byte(turnTestConfig().TURN.Secret))
	h.Write([]byte(m.Username))
	if m.Credential != base64.StdEncoding.EncodeToString(h.Sum(nil)) {
		t.Errorf("credential %q does not verify", m.Credential)
	}
	for _, s := range got {
		for _, f := range append([]string{s.Username, s.Credential}, s.URLs...) {
			if strings.Contains(f, turnTestConfig().TURN.Secret) {
				t.Fatalf("the secret leaked into %q", f)
			}
		}
	}
	// Stable for a session (a retried answer names the same TURN user),
	// different across sessions.
	if again := e.ICEServers(id)[1]; again.Username != m.Username {
		t.Errorf("same session, same instant: %q then %q", m.Username, again.Username)
	}
	if other := e.ICEServers("00000000000000000000000000000001")[1]; strings.HasSuffix(other.Username, opaque) {
		t.Errorf("two sessions share the opaque user %q", opaque)
	}
	// The clock moves: so does the expiry.
	now = now.Add(10 * time.Minute)
	if later := e.ICEServers(id)[1]; !strings.HasPrefix(later.Username, strconv.FormatInt(now.Unix()+3600, 10)+":") {
		t.Errorf("after 10 min: %q", later.Username)
	}
	// The static entries are copies: a caller cannot edit the config.
	got[0].URLs[0] = "stun:evil"
	if e.ICEServers(id)[0].URLs[0] != "stun:stun.example.net:3478" {
		t.Error("ICEServers returned the config's own slice")
	}
}

func TestNoTURNNoMintedEntry(t *testing.T) {
	e, err := NewEngine(LoopbackConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := e.ICEServers("x"); len(got) != 0 {
		t.Errorf("no ice_servers, no turn: got %+v", got)
	}
	if e.TCPAddr() != nil {
		t.Errorf("tcp_port 0: ICE-TCP should be off, listening on %s", e.TCPAddr())
	}
}

func TestLinkHeadersMinted(t *testing.T) {
	e, err := NewEngine(turnTestConfig(), nil, WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got := linkHeaders(e.ICEServers("s1"))
	srv := e.ICEServers("s1")[1]
	want := []string{
		`<stun:stun.example.net:3478>; rel="ice-server"`,
		`<turn:turn.example.com:3478?transport=udp>; rel="ice-server"; username="` + srv.Username + `"; credential="` + srv.Credential + `"; credential-type="password"`,
		`<turns:turn.example.com:5349?transport=tcp>; rel="ice-server"; username="` + srv.Username + `"; credential="` + srv.Credential + `"; credential-type="password"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(srv.Username, "1700003600:") {
		t.Errorf("username %q", srv.Username)
	}
	if bytes.ContainsAny([]byte(srv.Username+srv.Credential), "\"\\\r\n,;") {
		t.Errorf("minted values need quoting: %q %q", srv.Username, srv.Credential)
	}
}
