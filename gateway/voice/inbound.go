package voice

import (
	"fmt"

	"github.com/veraneural/vera-gateway/audio/pipeline"
)

// newInbound builds a connection's listening path from the voice config:
// jitter buffer, Opus decode at 16 kHz, VAD, the echo guard when
// EchoGuard is on, turn detector and prefix ring (audio/pipeline). The
// media loop owns it; the echo measurement and the benchmarks build theirs
// here too, so they run the session's own path.
func newInbound(cfg Config) (*pipeline.Inbound, error) {
	in, err := pipeline.New(pipeline.Config{Jitter: cfg.Jitter, Codec: cfg.Codec, VAD: cfg.VAD, Turn: cfg.Turn, EchoGuard: cfg.EchoGuard})
	if err != nil {
		return nil, fmt.Errorf("voice: inbound: %w", err)
	}
	return in, nil
}
