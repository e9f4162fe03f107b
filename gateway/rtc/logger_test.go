package rtc

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestPionLoggerBridgeAtWarn(t *testing.T) {
	var buf bytes.Buffer
	l := slogFactory{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}.NewLogger("ice")
	l.Debugf("debug %d", 1)
	l.Infof("info %d", 2)
	l.Trace("trace")
	l.Warnf("warn %d", 3)
	l.Error("error 4")
	l.Warnf("Failed to read from candidate udp4 host 127.0.0.1:1: %s", "io: read/write on closed pipe")
	l.Warnf("Error reading first packet from %s: %s", "127.0.0.1:5", "read tcp: i/o timeout")
	l.Warnf("Not a STUN message from %s to %s", "127.0.0.1:5", "127.0.0.1:7881")
	l.Warn("Failed to ping without candidate pairs. Connection is not possible yet.")
	l.Warn("Warning: mux: no endpoint for packet starting with 21, adding to queue size(0)")
	l.Warn("Warning: mux: no endpoint for packet starting with 23, adding to queue size(0)")
	out := buf.String()
	if strings.Contains(out, "level=WARN msg=pion pion=ice detail=\"Warning: mux: no endpoint for packet starting with 21") {
		t.Fatalf("a hang-up's DTLS alert logged at warn:\n%s", out)
	}
	if !strings.Contains(out, "level=WARN msg=pion pion=ice detail=\"Warning: mux: no endpoint for packet starting with 23") {
		t.Fatalf("application data with no endpoint is not hang-up noise:\n%s", out)
	}
	if strings.Contains(out, "level=WARN msg=pion pion=ice detail=\"Failed to ping") {
		t.Fatalf("a healthy session's start logged at warn:\n%s", out)
	}
	if strings.Contains(out, "level=WARN msg=pion pion=ice detail=\"Error reading first") || strings.Contains(out, "level=WARN msg=pion pion=ice detail=\"Not a STUN") {
		t.Fatalf("ICE-TCP port noise logged at warn:\n%s", out)
	}
	if !strings.Contains(out, "level=DEBUG msg=pion pion=ice detail=\"Not a STUN") {
		t.Fatalf("ICE-TCP port noise not demoted to debug:\n%s", out)
	}
	if strings.Contains(out, "level=WARN msg=pion pion=ice detail=\"Failed to read") {
		t.Fatalf("hang-up noise logged at warn:\n%s", out)
	}
	if !strings.Contains(out, "level=DEBUG msg=pion pion=ice detail=\"Failed to read") {
		t.Fatalf("hang-up noise not demoted to debug:\n%s", out)
	}
	if strings.Contains(out, "debug 1") || strings.Contains(out, "info 2") || strings.Contains(out, "trace") {
		t.Fatalf("below-warn pion logs forwarded:\n%s", out)
	}
	for _, want := range []string{`level=WARN msg=pion pion=ice detail="warn 3"`, `level=ERROR msg=pion pion=ice detail="error 4"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q in:\n%s", want, out)
		}
	}
}
