package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/safety"
)

type turnInput struct {
	text string
	// id, when set, is the turn id the transport already used for this
	// turn's speech and transcript events (voice); otherwise one is made.
	id string
	// via is how the person gave the text: ViaSpeech (a transcript),
	// ViaText (typed), or "" for text that did not come from the person
	// (an inbox message), which is never an answer to an offer.
	via string
	// spotted are crisis key phrases a spotter heard in the turn's audio:
	// assessed by the local detector with text, never shown or kept.
	spotted []string
}

// genReply writes a session-generated reply (an offer asked again, an
// action's result) when its turn comes; "" emits nothing.
type genReply func(turnID string) string

// maxGens bounds session-generated replies waiting for the worker; one
// more than that is dropped with a warning (each action has at most a few).
const maxGens = 32

// turnState is the turn in progress.
type turnState struct {
	id     string
	cancel context.CancelCauseFunc
}

// turns is the turn runner's state: the worker (one goroutine per
// session, joined by Close) runs one turn at a time from inputs and gens.
// Its lock is taken before events' (a turn's history and the event that
// reports it change together) and is never held while calling another
// part.
type turns struct {
	inputs chan turnInput
	gens   chan genReply // session-written replies, run in turn order

	mu      sync.Mutex // mu guards the fields below
	n       int        // turns started, for ids
	last    string     // id of the last finished turn, for Interrupt
	cur     *turnState // the turn in progress, if any
	history []Message
	max     int // Config.HistoryMessages
}

// nextID numbers a turn. mu held.
func (r *turns) nextIDLocked() string {
	r.n++
	return fmt.Sprintf("turn_%d", r.n)
}

// remember appends a turn to the bounded history.
func (r *turns) remember(turnID, user, assistant string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.history = append(r.history, Message{Role: "user", Text: user})
	r.last = turnID
	if assistant != "" {
		r.history = append(r.history, Message{Role: "assistant", Text: assistant})
	}
	r.trimLocked()
}

func (r *turns) trimLocked() {
	if n := len(r.history) - r.max; n > 0 {
		r.history = append([]Message(nil), r.history[n:]...)
	}
}

// Causes of a cancelled turn, reported in reply.interrupted.
var (
	errSuperseded = errors.New("superseded by new input")
	errCancelled  = errors.New("cancelled by the client")
)

// submit queues a user text for a turn, applying the busy policy.
func (s *Session) submit(text string) { s.submitInput(turnInput{text: text}) }

func (s *Session) submitInput(in turnInput) {
	r := &s.turns
	r.mu.Lock()
	if r.cur != nil && s.cfg.OnBusy == BusyCancel {
		r.cur.cancel(errSuperseded)
	}
	r.mu.Unlock()
	select {
	case r.inputs <- in:
	default:
		s.EmitError(event.ErrRateLimited, fmt.Sprintf("too many inputs waiting for a turn (at most %d)", s.cfg.MaxQueued))
	}
}

// Submit starts a turn from text that did not come from the person on
// this session (a partner's inbox message); the busy policy applies as for
// input.text. It is never taken as an answer to an offered action. Voice
// transcripts use SubmitTurn.
func (s *Session) Submit(text string) { s.submit(text) }

// generate queues a session-generated reply behind the turn in progress;
// it never cancels a turn.
func (s *Session) generate(g genReply) {
	if s.ev.isClosed() {
		return
	}
	select {
	case s.turns.gens <- g:
	default:
		s.log_.Warn("session: generated reply dropped", "queued", maxGens)
	}
}

// runGen emits a session-generated reply as a turn of its own:
// reply.delta, caption and reply.done with generated: true. The history
// keeps it as an assistant message.
func (s *Session) runGen(g genReply) {
	if s.ev.isClosed() {
		return
	}
	r := &s.turns
	r.mu.Lock()
	turnID := r.nextIDLocked()
	r.mu.Unlock()
	text := g(turnID)
	if text == "" {
		return
	}
	s.Emit(event.TypeReplyDelta, event.ReplyDelta{TurnID: turnID, Delta: text})
	s.Emit(event.TypeCaption, event.Caption{TurnID: turnID, Speaker: "vera", Text: text, Final: true})
	r.mu.Lock()
	r.history = append(r.history, Message{Role: "assistant", Text: text})
	r.last = turnID
	r.trimLocked()
	s.ev.emit(event.TypeReplyDone, event.ReplyDone{TurnID: turnID, Text: text, Level: safety.LevelNone, Generated: true})
	r.mu.Unlock()
}

// interruptCause carries what the person actually heard when a transport
// interrupts a reply (barge-in).
type interruptCause struct{ heard, reason string }

func (c *interruptCause) Error() string { return "interrupted: " + c.reason }

// Interrupt cuts the reply of turnID short because the person stopped
// listening (voice barge-in). heard is the text actually played, computed
// by the transport from the playout position; it becomes the reply's only
// trace in the history. A reply still being generated is cancelled; one
// already complete (but still playing) gets reply.interrupted and its
// history entry is truncated to heard. It reports whether turnID was the
// current or last turn.
func (s *Session) Interrupt(turnID, heard, reason string) bool {
	r := &s.turns
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil && r.cur.id == turnID {
		r.cur.cancel(&interruptCause{heard: heard, reason: reason})
		return true
	}
	if r.last != turnID {
		return false
	}
	if n := len(r.history); n > 0 && r.history[n-1].Role == "assistant" {
		if heard == "" {
			r.history = r.history[:n-1]
		} else {
			r.history[n-1].Text = heard
		}
	}
	s.ev.emit(event.TypeReplyInterrupted, event.ReplyInterrupted{TurnID: turnID, Heard: heard, Reason: reason})
	return true
}

// emitDelta sends one reply.delta and tells the observer (a voice pipeline
// speaks it), always after the turn's safety card.
func (s *Session) emitDelta(turnID, d string) {
	s.Emit(event.TypeReplyDelta, event.ReplyDelta{TurnID: turnID, Delta: d})
	if o := s.deps.Observer; o != nil {
		o.ReplyDelta(s, turnID, d)
	}
}

// cancelTurn cancels the reply in progress (response.cancel).
func (s *Session) cancelTurn(turnID string) bool {
	r := &s.turns
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || (turnID != "" && turnID != r.cur.id) {
		return false
	}
	r.cur.cancel(errCancelled)
	return true
}

func (s *Session) worker() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case in := <-s.turns.inputs:
			s.runTurn(in)
		case g := <-s.turns.gens:
			s.runGen(g)
		}
	}
}

// turn is one user turn on the worker, run as assess → converse → settle
// → finish. Reply deltas are held until the turn's safety is settled.
type turn struct {
	s      *Session
	ctx    context.Context // the turn's: cancelled by new input, Interrupt, the timeout, Close or a late crisis
	cancel context.CancelCauseFunc
	id     string
	in     turnInput
	region string
	hist   []Message
	local  safety.Assessment // the local detector's verdict on the turn
	// cl is the turn's classification (nil without a Classifier), started
	// at clStart; its watcher goroutine may outlive the turn (classify.go).
	cl      Classification
	clStart time.Time

	// mu guards the fields below: the Converser calls onDelta and
	// SafetyFinal from any goroutine, settle and finish run under it, and
	// so does the classification's late-detection watcher.
	mu     sync.Mutex
	engine safety.Assessment // the engine's assessment, once known
	level  safety.Level      // the turn's level: what it judged, shown or kept in force
	carded bool              // this turn showed a safety card
	// settled: the turn's safety was settled (its reply released, or the
	// turn ended without one); a classifier verdict after that is late.
	settled  bool
	released bool // deltas flow (safety settled)
	closed   bool // Converse returned: late deltas are dropped
	held     []string
	sent     strings.Builder // text emitted as reply.delta
}

func (s *Session) runTurn(in turnInput) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	defer cancel(nil)
	ctx, cancelT := context.WithTimeout(ctx, s.cfg.TurnTimeout)
	defer cancelT()

	t := s.beginTurn(ctx, in, cancel)
	defer s.endTurn()
	if t.assess() {
		return
	}
	reply, err := t.converse()
	if t.ctx.Err() == nil {
		// The first reply text waits for the classifier (within the
		// budget): every verdict known by then is shown before it.
		t.waitClassifier()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.settle(reply, err) {
		t.finish(reply)
	}
}

// beginTurn makes the turn current: its id, the disclosure when it is due,
// and transcript.final.
func (s *Session) beginTurn(ctx context.Context, in turnInput, cancel context.CancelCauseFunc) *turn {
	r := &s.turns
	r.mu.Lock()
	defer r.mu.Unlock()
	d := s.device()
	t := &turn{s: s, ctx: ctx, cancel: cancel, id: r.nextIDLocked(), in: in, region: d.region,
		hist: append([]Message(nil), r.history...)}
	if in.id != "" {
		t.id = in.id
	}
	r.cur = &turnState{id: t.id, cancel: cancel}
	if text, ok := s.disclosure.Take(d.surfaceKind()); ok {
		s.ev.emit(event.TypeNotice, event.Notice{Kind: "ai_disclosure", Text: s.disclosureText(text)})
	}
	s.ev.emit(event.TypeTranscriptFinal, event.Transcript{TurnID: t.id, Text: in.text})
	return t
}

func (s *Session) endTurn() {
	s.turns.mu.Lock()
	s.turns.cur = nil
	s.turns.mu.Unlock()
}

// assess starts the classifier, runs the local detector first, on every
// turn, whatever the engine does, and shows its card unless the card in
// force already covers it; then takes the text as an answer to the
// offered action when it is one. It reports whether the turn is over.
func (t *turn) assess() (done bool) {
	s := t.s
	t.startClassify()
	var userHist []string
	for _, m := range t.hist {
		if m.Role == "user" {
			userHist = append(userHist, m.Text)
		}
	}
	t.local = s.deps.Safety.Assess(userHist, t.in.safetyText(), t.region)
	// A crisis stays in force for the session: the turn is judged at least
	// at its level, and its card is not shown again unless this turn adds
	// to it (a clear "I'm safe now" may lower it to elevated; inforce.go).
	t.level = safety.MaxLevel(s.cards.turnFloor(t.in.text, t.local), t.local.Level)
	if t.local.DisplayRequired && s.showSafety(t.id, t.local, speakNone) {
		t.carded = true
	}
	if !s.offered(t.in) {
		// A voice turn without words whose audio held crisis key phrases:
		// the card above is its answer; the model is not sent an empty turn.
		return strings.TrimSpace(t.in.text) == ""
	}
	// An answer to the offered action is settled here and not sent to the
	// model; an utterance the detector or the classifier flags is never
	// an answer (consentTurn).
	t.waitClassifier()
	t.mu.Lock()
	t.settleSafety(safety.Assessment{})
	local := t.localSide()
	flagged := local.DisplayRequired || local.Level >= safety.LevelElevated
	t.mu.Unlock()
	if reply, ok := s.consentTurn(t.ctx, t.id, t.in, flagged); ok {
		t.mu.Lock()
		t.settled = true
		t.mu.Unlock()
		s.finishAnswer(t.id, t.in.text, reply)
		return true
	}
	return strings.TrimSpace(t.in.text) == ""
}

// converse asks the Converser, holding its deltas until the safety of the
// turn is settled (SafetyFinal, or settle once Converse returns).
func (t *turn) converse() (Reply, error) {
	s := t.s
	req := ConverseRequest{
		SessionID: s.id, PartnerID: s.owner.PartnerID, EndUserID: s.owner.EndUserID,
		Region: t.region, Text: t.in.text, History: t.hist,
		SafetyFinal: func(engine safety.Assessment) {
			t.waitClassifier()
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.closed || t.released {
				return
			}
			t.settleSafety(engine)
			t.flush()
		},
	}
	return s.deps.Converser.Converse(t.ctx, req, t.onDelta)
}

func (t *turn) onDelta(d string) {
	if d == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.ctx.Err() != nil {
		return // a cut-short reply sends nothing more (a late crisis card is out)
	}
	if t.released {
		t.s.emitDelta(t.id, d)
		t.sent.WriteString(d)
		return
	}
	t.held = append(t.held, d)
}

// settleSafety merges the engine's assessment with the gateway's own (the
// local detector raised by every classifier verdict known now) and shows
// its card when it adds to what the person has been shown. t.mu held.
func (t *turn) settleSafety(engine safety.Assessment) {
	t.engine = engine
	local := t.localSide()
	merged := safety.Guard(engine, local, t.s.deps.Safety.Merge(engine, local))
	t.level = safety.MaxLevel(t.level, merged.Level)
	if merged.DisplayRequired && t.s.showSafety(t.id, merged, speakNone) {
		t.carded = true
	}
}

// flush releases the held deltas, coalesced into few events so a long held
// reply cannot burst past the replay log and fail a healthy consumer.
// t.mu held.
func (t *turn) flush() {
	for _, d := range coalesce(t.held, maxDeltaBytes) {
		t.s.emitDelta(t.id, d)
		t.sent.WriteString(d)
	}
	t.held = nil
	t.released, t.settled = true, true
}

// settle ends the converse call: an interrupted or failed turn is
// remembered and reported; otherwise the engine's safety is settled and
// the reply released. It reports whether the reply goes on to finish.
// t.mu held.
func (t *turn) settle(reply Reply, err error) bool {
	s := t.s
	defer func() { t.settled = true }()
	if t.ctx.Err() != nil {
		// Interrupted: only what already left counts as said.
		heard := t.sent.String()
		reason := "cancelled"
		var ic *interruptCause
		switch cause := context.Cause(t.ctx); {
		case errors.As(cause, &ic):
			// The transport knows what was really heard (playout position).
			heard, reason = ic.heard, ic.reason
		case errors.Is(cause, errSuperseded):
			reason = "superseded"
		case errors.Is(cause, context.DeadlineExceeded):
			reason = "timeout"
		case errors.Is(s.ctx.Err(), context.Canceled):
			return false // session closing
		}
		// A verdict the classifier already has still shows (new input
		// cut the turn short, not the person's words).
		t.settleSafety(t.engine)
		// History first, so it is settled when the event is seen.
		s.turns.remember(t.id, t.in.text, heard)
		s.Emit(event.TypeReplyInterrupted, event.ReplyInterrupted{TurnID: t.id, Heard: heard, Reason: reason})
		return false
	}
	if err != nil {
		s.log_.Warn("session: converse failed", "turn", t.id, "err", err)
		// The engine path failed, but a card its reply carried (Reply.Safety
		// of a failed turn) and the classifier's verdict still show, before
		// the error; the local card (if any) is already out.
		t.settleSafety(reply.Safety)
		s.EmitError(event.ErrEngineUnavailable, "VERA could not answer this turn; please try again")
		s.turns.remember(t.id, t.in.text, "")
		return false
	}
	if !t.released {
		t.settleSafety(reply.Safety)
		if len(t.held) == 0 && reply.Message != "" {
			t.held = []string{reply.Message}
		}
		t.flush()
	}
	return true
}

// finish ends a released reply: its proposed actions, the offer (or the
// question asked again) as its last sentence, caption, history and
// reply.done, the last event of a turn. t.mu held.
func (t *turn) finish(reply Reply) {
	s := t.s
	level := safety.MaxLevel(t.level, safety.Guard(reply.Safety, t.local, reply.Safety).Level)
	text := reply.Message
	if text == "" {
		text = t.sent.String()
	}
	// The offer is the reply's last sentence, so a voice session speaks it;
	// never in a turn that showed a safety card.
	s.propose(t.id, reply.ProposedActions)
	if q := s.afterReply(t.id, t.carded); q != "" {
		if text != "" {
			q = " " + q
		}
		s.emitDelta(t.id, q)
		t.sent.WriteString(q)
		text += q
	}
	s.Emit(event.TypeCaption, event.Caption{TurnID: t.id, Speaker: "vera", Text: text, Final: true})
	s.turns.remember(t.id, t.in.text, text)
	s.Emit(event.TypeReplyDone, event.ReplyDone{TurnID: t.id, Text: text, Model: reply.Model, Provider: reply.Provider, Level: safety.ShownLevel(level)})
	if o := s.deps.Observer; o != nil {
		o.ReplyDone(s, t.id, text)
	}
	// An Interrupt that raced with the end of the reply still counts.
	var ic *interruptCause
	if errors.As(context.Cause(t.ctx), &ic) {
		s.endTurn()
		s.Interrupt(t.id, ic.heard, ic.reason)
	}
}

// finishAnswer ends a turn that answered the offer: the session's reply
// (acknowledgement and the next offer, or the question again) goes out as
// the turn's reply, marked generated, and the observer sees the turn.
func (s *Session) finishAnswer(turnID, user, reply string) {
	s.emitDelta(turnID, reply)
	s.Emit(event.TypeCaption, event.Caption{TurnID: turnID, Speaker: "vera", Text: reply, Final: true})
	s.turns.remember(turnID, user, reply)
	s.Emit(event.TypeReplyDone, event.ReplyDone{TurnID: turnID, Text: reply, Level: safety.LevelNone, Generated: true})
	if o := s.deps.Observer; o != nil {
		o.ReplyDone(s, turnID, reply)
	}
}

// History returns a copy of the conversation history.
func (s *Session) History() []Message {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return append([]Message(nil), s.turns.history...)
}

// maxDeltaBytes bounds one coalesced reply.delta.
const maxDeltaBytes = 4096

// coalesce joins consecutive pieces into chunks of at most max bytes (a
// single longer piece stays whole).
func coalesce(pieces []string, max int) []string {
	var out []string
	var cur strings.Builder
	for _, p := range pieces {
		if cur.Len() > 0 && cur.Len()+len(p) > max {
			out = append(out, cur.String())
			cur.Reset()
		}
		cur.WriteString(p)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
