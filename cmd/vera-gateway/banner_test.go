package main

import (
	"context"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

// TestFirstRunBanner: started as make run starts it (dev mode, no file),
// the binary says where to point a browser (/ and /glasses) and a voice
// client, where media goes (UDP, and TCP when configured) and what answers
// each model slot; a missing store.path is an info line in dev mode; and
// neither start-up nor one healthy voice session logs a WARN or an ERROR.
func TestFirstRunBanner(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for ICE-TCP
	if err != nil {
		t.Fatal(err)
	}
	tcpPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p := startGateway(t, buildGateway(t), []string{"VERA_RTC_UDP_PORT=0", "VERA_RTC_TCP_PORT=" + strconv.Itoa(tcpPort)},
		"-listen", "127.0.0.1:0")
	waitLog(t, p, `msg="models answering"`)
	log := p.stderr.String()
	base := regexp.QuoteMeta(p.base)
	for _, want := range []string{
		`level=INFO msg="store.path is not set`,
		`web_client=` + base + `/ `,
		`glasses=` + base + `/glasses `,
		`voice=` + base + `/v1/voice/sessions `,
		`media.udp=127\.0\.0\.1:[1-9][0-9]*`,
		`media.tcp=127\.0\.0\.1:` + strconv.Itoa(tcpPort),
		`slots.listen="embedded-listen \(pocketsphinx en-us\)"`,
		`slots.converse="embedded-companion \(companion\)"`,
		`slots.speak="embedded-speak \(espeak en-us 160 wpm\)"`,
	} {
		if !regexp.MustCompile(want).MatchString(log) {
			t.Errorf("start-up log lacks %s:\n%s", want, log)
		}
	}

	// One healthy voice session, as the README's vera-replay example runs
	// it (the default device).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	clip, err := fixtures.LoadWAV(filepath.Join(fixtures.RepoRoot(t), "testdata", "router", "goforward.16k.wav"))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := fixtures.Encode(clip, fixtures.EncodeOptions{FEC: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := fixtures.Run(ctx, fixtures.Scenario{
		Client: fixtures.ClientOptions{URL: p.base + "/v1/voice/sessions", LoopbackOnly: true},
		Stream: stream,
	})
	if err != nil {
		t.Fatalf("voice session: %v", err)
	}
	if len(res.Audio) == 0 {
		t.Fatal("the session heard no reply")
	}
	waitLog(t, p, `msg="rtc: session closed"`)
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			t.Errorf("a healthy first run logged: %s", line)
		}
	}
}

// waitLog waits (hang guard: 30 s) until the process has logged a line
// containing s.
func waitLog(t *testing.T, p *gatewayProcess, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.stderr.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the log within 30 s:\n%s", s, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
