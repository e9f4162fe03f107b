package rtc

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/pion/logging"
)

// slogFactory bridges pion's leveled logging into slog. pion is chatty at
// info/debug, so only warn and error are forwarded.
type slogFactory struct{ log *slog.Logger }

func (f slogFactory) NewLogger(scope string) logging.LeveledLogger {
	return pionLogger{log: f.log.With("pion", scope)}
}

type pionLogger struct{ log *slog.Logger }

// closeNoise are pion warnings logged on every normal hang-up (reads racing
// the close of their own transport), and the ICE-TCP mux's complaints about
// what a remote sent to the open TCP port (a port scan, a load balancer's
// TCP health check, an idle socket closed after the first-STUN timeout):
// they describe the peer, not a fault here, so they go out at debug.
var closeNoise = []string{"closed pipe", "already closed", "use of closed network connection", "ErrClosedPipe",
	"Error reading first packet", "Not a STUN message", "Failed to handle decode ICE", "No Username attribute in STUN message"}

func (l pionLogger) emit(level slog.Level, msg string) {
	for _, n := range closeNoise {
		if strings.Contains(msg, n) {
			level = slog.LevelDebug
			break
		}
	}
	if l.log.Enabled(context.Background(), level) {
		// pion's messages carry their details in free text; keep the
		// slog message constant and put the text in an attribute.
		l.log.Log(context.Background(), level, "pion", "detail", msg)
	}
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
