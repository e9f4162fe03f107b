package router

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/safety"
)

// providerEnv is what every provider may use.
type providerEnv struct {
	client  *http.Client
	clock   clock.Clock
	maxBody int64
	assess  Assessor
	log     *slog.Logger
	// fallbackResources are the local resources for a card the router must
	// fill itself (Options.FallbackResources); never empty.
	fallbackResources func(safety.Level) []safety.Resource
	// replyDefect counts an engine reply defect read around (Defect*).
	replyDefect func(model, defect string)
}

// textRequest is a converse turn or a oneshot as a provider sees it.
type textRequest struct {
	System    string
	Messages  []Message // context, ending with the user's new message
	MaxTokens int       // already capped for the model; 0 = provider default
	Thread    *Thread   // per conversation; for oneshot, per call (retries reuse it)
	Oneshot   bool      // a one-off request: no engine-side context to rely on
	Tools     []Tool    // offered to providers that take tools; others ignore them
}

// textProvider answers text. It calls c.first() before handing the first
// delta to delta (see emitDelta) and returns the complete reply.
type textProvider interface {
	complete(ctx context.Context, c *call, req textRequest, delta func(string) error) (Reply, error)
}

// speakProvider synthesises speech, calling c.first() before the first chunk.
type speakProvider interface {
	speak(ctx context.Context, c *call, req SpeakRequest, emit func(AudioChunk) error) error
}

// listenProvider opens a streaming recogniser for one turn.
type listenProvider interface {
	startListen(ctx context.Context, req ListenRequest) (listenStream, error)
}

// listenStream is one turn of recognition. Not safe for concurrent use;
// ListenSession serialises calls.
type listenStream interface {
	write(frame []int16) error
	partial() string
	// final ends the turn; it calls c.first() once the text is known.
	final(ctx context.Context, c *call) (string, error)
	close()
}

// emitDelta marks the first useful token and forwards a non-empty delta.
func emitDelta(c *call, delta func(string) error, s string) error {
	if s == "" {
		return nil
	}
	if !c.first() {
		return errAbandoned
	}
	if delta == nil {
		return nil
	}
	return delta(s)
}
