package session

import (
	"context"
	"strings"
	"time"

	"github.com/veraneural/vera-gateway/safety"
)

// Classifier is a second opinion on each user turn: the router's safety
// slot, whose models judge the turn's text in parallel with the converse
// call (gateway/converse adapts *router.Classification). The session
// sends it the person's turn text and nothing else.
type Classifier interface {
	// StartClassify starts judging text and returns at once. ctx bounds
	// the calls (the session's: a verdict that comes after the turn was
	// cut short still counts).
	StartClassify(ctx context.Context, text string) Classification
}

// Classification is one turn's judgment in progress. A slow, failing or
// malformed classifier adds nothing, so its level never lowers the
// turn's: the session merges it never-downgrade with the local detector
// and the engine.
type Classification interface {
	// Wait returns the level once every classifier answered, one said
	// crisis, or budget passed; never later than budget (<= 0: at once).
	Wait(budget time.Duration) safety.Level
	// Level is the level so far.
	Level() safety.Level
	// Reached is closed once the level reaches l (elevated or crisis);
	// it may never close, so select on Done as well.
	Reached(l safety.Level) <-chan struct{}
	// Done is closed once every classifier has finished.
	Done() <-chan struct{}
	// Stop cancels the calls still running and waits for them.
	Stop()
}

// classifierCard is the card for a classifier's level: the resources the
// SafetyLayer (Resourcer) or the embedded catalog gives for region. Below
// elevated it requires nothing.
func (s *Session) classifierCard(level safety.Level, region string) safety.Assessment {
	if level < safety.LevelElevated {
		return safety.Assessment{Resources: []safety.Resource{}, Source: safety.SourceLocal}
	}
	var res []safety.Resource
	if r, ok := s.deps.Safety.(Resourcer); ok {
		res = r.Resources(level, region)
	}
	if len(res) == 0 {
		res = safety.ResourcesFor(level, nil, safety.RegionPrefs{User: region})
	}
	return safety.Assessment{Level: level, DisplayRequired: true, Resources: res, Source: safety.SourceLocal}
}

// startClassify starts the turn's classification, when the session has a
// Classifier and the person said or typed words (text that did not come
// from them, an inbox message, is not sent), and its late-detection
// watcher.
func (t *turn) startClassify() {
	s := t.s
	if s.deps.Classifier == nil || t.in.via == "" || strings.TrimSpace(t.in.text) == "" {
		return
	}
	t.clStart = s.clock.Now()
	cl := s.deps.Classifier.StartClassify(s.ctx, t.in.text)
	if cl == nil {
		return
	}
	t.cl = cl
	s.wg.Add(1)
	go t.watch()
}

// waitClassifier waits for the turn's classification at most what is left
// of the budget, counted from the turn's start. Never under t.mu.
func (t *turn) waitClassifier() {
	if t.cl == nil {
		return
	}
	left := t.s.deps.ClassifyBudget - t.s.clock.Since(t.clStart)
	t.cl.Wait(max(left, 0))
}

// localSide is the gateway's own judgment of the turn: the local
// detector's assessment raised by the classifier's level so far. t.mu
// held (or the turn not yet shared).
func (t *turn) localSide() safety.Assessment {
	if t.cl == nil {
		return t.local
	}
	lvl := t.cl.Level()
	if lvl < safety.LevelElevated {
		return t.local
	}
	m := safety.Merge(t.local, t.s.classifierCard(lvl, t.region))
	m.Source = safety.SourceLocal
	return m
}

// watch is the turn's late-detection watcher: it wakes as the
// classification reaches each level and, once the turn's safety was
// settled without it, shows it at once (late). It ends when the
// classification is done or the session closes, and stops it.
func (t *turn) watch() {
	s := t.s
	defer s.wg.Done()
	defer t.cl.Stop()
	for _, l := range []safety.Level{safety.LevelElevated, safety.LevelCrisis} {
		select {
		case <-t.cl.Reached(l):
			t.late()
		case <-t.cl.Done():
			t.late()
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// late shows a classifier verdict that came after the turn's safety was
// settled (its reply released, or the turn over) when it raises what the
// person has been shown: the card goes out at once; a crisis is also
// spoken in a voice session and cuts the rest of a reply still being
// written short (reply.interrupted, reason "safety").
func (t *turn) late() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.settled {
		return // the settle step reads the level itself
	}
	local := t.localSide()
	a := safety.Guard(t.engine, local, t.s.deps.Safety.Merge(t.engine, local))
	t.level = safety.MaxLevel(t.level, a.Level)
	why := speakNone
	if a.Level == safety.LevelCrisis {
		why = speakLate
	}
	if !t.s.showSafety(t.id, a, why) {
		return
	}
	t.carded = true
	if why == speakLate && t.released && !t.closed {
		// The rest of the reply is not sent; what left is what was said.
		t.cancel(&interruptCause{heard: t.sent.String(), reason: ReasonSafety})
	}
}

// ReasonSafety is reply.interrupted's reason when a late crisis verdict
// cut the reply short.
const ReasonSafety = "safety"
