package voice

import (
	"time"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
)

// echoTap gives the inbound path's echo guard what the sender plays. The
// sender's tap runs on its own goroutine at wall time; the tap puts each
// frame on the session's media clock (samples since origin, the clock the
// media loop gives Analyse), so the played and the heard envelopes line up
// whatever each side's pacing.
type echoTap struct {
	in     *pipeline.Inbound
	origin time.Time
}

// reference is the sender's tap: one outbound 20 ms frame at 16 kHz, going
// out now.
func (e *echoTap) reference(pcm []int16, _ uint32) {
	e.in.Reference(audio.SampleTime(time.Since(e.origin)), pcm)
}
