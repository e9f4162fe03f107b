package rtc

import (
	"log/slog"
	"strings"
)

// LogValue describes where media is received, for the start-up log: the
// UDP addresses of the ICE mux, the ICE-TCP listener ("off" when not
// configured) and the TURN servers offered to clients, if any (their
// URLs only; the secret never leaves the gateway).
func (e *Engine) LogValue() slog.Value {
	var udp []string
	for _, a := range e.LocalAddrs() {
		udp = append(udp, a.String())
	}
	tcp := "off"
	if a := e.TCPAddr(); a != nil {
		tcp = a.String()
	}
	attrs := []slog.Attr{slog.String("udp", strings.Join(udp, ",")), slog.String("tcp", tcp)}
	if e.cfg.TURN.Enabled() {
		attrs = append(attrs, slog.String("turn", strings.Join(e.cfg.TURN.URLs, ",")))
	}
	return slog.GroupValue(attrs...)
}
