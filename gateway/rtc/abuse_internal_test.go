package rtc

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestAbuseHalfOpenOfferLogsOnce: a client that sends an offer and never
// answers the connectivity checks once made pion warn per ICE check (~158
// WARN lines per offer): a log flood anyone could cause. Each kind of
// warning now goes out at WARN once per minute per engine, the repeats at
// debug; another kind still gets its line.
func TestAbuseHalfOpenOfferLogsOnce(t *testing.T) {
	var buf bytes.Buffer
	f := slogFactory{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	l := f.NewLogger("ice")
	for i := 0; i < 158; i++ {
		l.Warnf("discard message from (udp4 host 127.0.0.1:%d), unknown TransactionID 0x%x", 40000+i, 0xa3c5e0+i)
		l.Warnf("Failed to send packet to 192.0.2.%d:%d: write: connection refused", i%250, 50000+i)
	}
	l.Warn("pingAllCandidates called with no candidate pairs. Connection is not possible yet.")
	out := buf.String()
	if n := strings.Count(out, "level=WARN"); n != 3 {
		t.Fatalf("%d WARN lines for 316 repeated warnings of 2 kinds and 1 other, want 3:\n%s", n, out)
	}
	// Another engine's logger has its own table.
	var buf2 bytes.Buffer
	g := slogFactory{log: slog.New(slog.NewTextHandler(&buf2, nil))}.NewLogger("ice")
	g.Warnf("discard message from (udp4 host 127.0.0.1:%d), unknown TransactionID 0x%x", 1, 2)
	if !strings.Contains(buf2.String(), "level=WARN") {
		t.Fatalf("another engine's first warning was suppressed: %q", buf2.String())
	}
	if warnKind("candidate 10.0.0.1:5000 id 0xdeadbeef") != warnKind("candidate 10.9.8.7:61000 id 0x1f") {
		t.Fatal(fmt.Sprint("warnKind keeps numbers: ", warnKind("candidate 10.0.0.1:5000 id 0xdeadbeef")))
	}
}
