package voice

import (
	"math"
	"sync/atomic"

	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/gateway/event"
)

// patienceHint carries the client's hello.patience (people who speak
// slowly, or the glasses' composer) from the data channel to the media
// loop, which owns the turn detector: the newest hello's value (absent: 1)
// widens every end-of-turn wait by that factor (turn.Detector.SetPatience,
// bounded to [1, turn.MaxPatience]).
type patienceHint struct {
	want    atomic.Uint32 // math.Float32bits of the factor; 0: none given yet
	applied uint32        // media loop only: the bits last applied
}

// hello records a validated hello's patience.
func (p *patienceHint) hello(h *event.Hello) {
	f := float32(h.Patience)
	if f == 0 {
		f = 1
	}
	p.want.Store(math.Float32bits(f))
}

// apply gives in's turn detector a changed factor; media loop only.
func (p *patienceHint) apply(in *pipeline.Inbound) {
	w := p.want.Load()
	if w == 0 || w == p.applied {
		return
	}
	p.applied = w
	in.SetPatience(math.Float32frombits(w))
}
