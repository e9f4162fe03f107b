package converse

import (
	"context"
	"time"

	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/safety"
)

// Classifier is the router's safety slot as the session's Classifier: a
// second opinion on each user turn, sent the turn's text and nothing else.
type Classifier struct{ r *router.Router }

var _ session.Classifier = Classifier{}

// NewClassifier returns the session's Classifier on r's safety slot, or
// nil when r has none (a session without a Classifier adds nothing to a
// turn, not even a goroutine).
func NewClassifier(r *router.Router) session.Classifier {
	if len(r.Slots()[router.SlotSafety]) == 0 {
		return nil
	}
	return Classifier{r: r}
}

// StartClassify implements session.Classifier.
func (c Classifier) StartClassify(ctx context.Context, text string) session.Classification {
	return classification{c.r.StartClassify(ctx, text)}
}

// classification is a *router.Classification as a session.Classification:
// verdicts become levels (reasons stay in the router's metrics).
type classification struct{ c *router.Classification }

func (c classification) Wait(budget time.Duration) safety.Level { return c.c.Wait(budget).Level }
func (c classification) Level() safety.Level                    { return c.c.Verdict().Level }
func (c classification) Reached(l safety.Level) <-chan struct{} { return c.c.Reached(l) }
func (c classification) Done() <-chan struct{}                  { return c.c.Done() }
func (c classification) Stop()                                  { c.c.Stop() }
