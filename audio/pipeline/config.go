package pipeline

import (
	"errors"
	"fmt"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/codec"
	"github.com/veraneural/vera-gateway/audio/jitter"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/audio/vad"
)

// ErrConfig is returned for an invalid Config.
var ErrConfig = errors.New("pipeline: invalid config")

// Config configures every stage of an Inbound.
type Config struct {
	Jitter jitter.Config
	Codec  codec.Config
	VAD    vad.Config
	Turn   turn.Config
	// EchoGuard keeps the gateway's own voice, leaking back from the
	// device's speaker, from counting as speech (Reference feeds it what
	// was played).
	EchoGuard bool
}

// DefaultConfig is every stage's default with the echo guard on.
func DefaultConfig() Config {
	return Config{Jitter: jitter.DefaultConfig(), Codec: codec.DefaultConfig(), VAD: vad.DefaultConfig(),
		Turn: turn.DefaultConfig(), EchoGuard: true}
}

// Validate reports the first invalid stage.
func (c Config) Validate() error {
	if c.Codec.DecodeRate != audio.SampleRate {
		return fmt.Errorf("pipeline: codec.decode_rate %d: the pipeline decodes at audio.SampleRate (%d): %w",
			c.Codec.DecodeRate, audio.SampleRate, ErrConfig)
	}
	for _, err := range []error{c.Jitter.Validate(), c.Codec.Validate(), c.VAD.Validate(), c.Turn.Validate()} {
		if err != nil {
			return err
		}
	}
	return nil
}
