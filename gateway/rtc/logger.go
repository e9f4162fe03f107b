package rtc

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/pion/logging"
)

// slogFactory bridges pion's leveled logging into slog. pion is chatty at
// info/debug, so only warn and error are forwarded.
type slogFactory struct{ log *slog.Logger }

func (f slogFactory) NewLogger(scope string) logging.LeveledLogger {
	return pionLogger{log: f.log.With("pion", scope), scope: fmt.Sprintf("%p\x00%s", f.log, scope)}
}

type pionLogger struct {
	log *slog.Logger
	// scope keys the warning table: the factory's logger (one per engine)
	// and pion's scope.
	scope string
}

// closeNoise are pion warnings logged on every normal hang-up (reads racing
// the close of their own transport), and the ICE-TCP mux's complaints about
// what a remote sent to the open TCP port (a port scan, a load balancer's
// TCP health check, an idle socket closed after the first-STUN timeout):
// they describe the peer, not a fault here, so they go out at debug. So
// does the ICE agent's note that it has no candidate pair to check yet,
// logged at the start of every healthy session (the answer is sent before
// the client's candidates arrive). And the DTLS close_notify alert (record
// type 21) a peer sends as it hangs up, when it arrives after this side's
// DTLS endpoint has gone: the mux has nowhere to put it.
var closeNoise = []string{"no endpoint for packet starting with 21", "closed pipe", "already closed", "use of closed network connection", "ErrClosedPipe",
	"Error reading first packet", "Not a STUN message", "Failed to handle decode ICE", "No Username attribute in STUN message",
	"Failed to ping without candidate pairs"}

func (l pionLogger) emit(level slog.Level, msg string) {
	for _, n := range closeNoise {
		if strings.Contains(msg, n) {
			level = slog.LevelDebug
			break
		}
	}
	if level >= slog.LevelWarn && !warnings.first(l.scope, msg, time.Now()) {
		level = slog.LevelDebug // a repeat within the window
	}
	if l.log.Enabled(context.Background(), level) {
		// pion's messages carry their details in free text; keep the
		// slog message constant and put the text in an attribute.
		l.log.Log(context.Background(), level, "pion", "detail", msg)
	}
}

// warnings keeps pion's warnings to one per kind per minute: a half-open
// offer (a client that never answers the connectivity checks) made pion
// warn once per ICE check, ~158 lines per offer. The kind is the message
// with its addresses, ports and other numbers taken out; repeats go out at
// debug. Bounded: past maxWarnKinds kinds the table starts over.
var warnings = &warnOnce{seen: map[string]time.Time{}}

const (
	warnWindow   = time.Minute
	maxWarnKinds = 1024
)

type warnOnce struct {
	mu   sync.Mutex // mu guards seen
	seen map[string]time.Time
}

// first reports whether msg is the first of its kind in scope within the
// window, and records it.
func (w *warnOnce) first(scope, msg string, now time.Time) bool {
	k := scope + "\x00" + warnKind(msg)
	w.mu.Lock()
	defer w.mu.Unlock()
	if at, ok := w.seen[k]; ok && now.Sub(at) < warnWindow {
		return false
	}
	if len(w.seen) >= maxWarnKinds {
		clear(w.seen)
	}
	w.seen[k] = now
	return true
}

// warnKind is msg without its digits and hex runs (addresses, ports,
// transaction ids), so one warning about many candidates is one kind.
func warnKind(msg string) string {
	var b strings.Builder
	skip := false
	for _, r := range msg {
		num := (r >= '0' && r <= '9') || (skip && (r == '.' || r == ':' || r == 'x' || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')))
		if num {
			if !skip {
				b.WriteByte('#')
			}
			skip = true
			continue
		}
		skip = false
		b.WriteRune(r)
	}
	return b.String()
}

func (pionLogger) Trace(string)                    {}
func (pionLogger) Tracef(string, ...any)           {}
func (pionLogger) Debug(string)                    {}
func (pionLogger) Debugf(string, ...any)           {}
func (pionLogger) Info(string)                     {}
func (pionLogger) Infof(string, ...any)            {}
func (l pionLogger) Warn(msg string)               { l.emit(slog.LevelWarn, msg) }
func (l pionLogger) Warnf(format string, a ...any) { l.emit(slog.LevelWarn, fmt.Sprintf(format, a...)) }
func (l pionLogger) Error(msg string)              { l.emit(slog.LevelError, msg) }
func (l pionLogger) Errorf(format string, a ...any) {
	l.emit(slog.LevelError, fmt.Sprintf(format, a...))
}

// discardLogger is used when no logger is injected.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
