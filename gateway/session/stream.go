package session

import (
	"context"
	"errors"

	"github.com/veraneural/vera-gateway/gateway/event"
)

// Errors a Stream or Attach can return.
var (
	// ErrSlowConsumer: the reader fell further behind than the replay log
	// holds; the transport must close (websocket: 1008).
	ErrSlowConsumer = errors.New("session: slow consumer: outbound queue overflowed")
	// ErrReplaced: another connection resumed the session.
	ErrReplaced = errors.New("session: replaced by a newer connection")
	// ErrClosed: the session is closed.
	ErrClosed = errors.New("session: closed")
	// ErrResumeTooOld: the events after last_seq are no longer in the log.
	ErrResumeTooOld = errors.New("session: resume point is older than the replay log")
	// ErrResumeAhead: last_seq is beyond the newest event.
	ErrResumeAhead = errors.New("session: last_seq is ahead of the session")
)

// Event is one server event as a Stream yields it.
type Event struct {
	// Seq is the event's seq (0 for the resume acknowledgement).
	Seq  int64
	Type event.Type
	// Data is the encoded event, for the transport to send; it must not be
	// modified.
	Data []byte
	// payload is the value Data was encoded from, for the events a
	// Subscriber acts on; read-only.
	payload any
	spoken  *SpokenSafety
}

// Subscriber acts on a session's output as the transport's stream yields
// it, in wire order, from the typed values the events were encoded from
// (no JSON decoding): a voice session speaks the AI disclosure, the safety
// resources the session says to speak (SpeakSafety, right after the card
// that calls for it) and the reply text. Every value is read-only: it
// shares memory with the session's own state.
type Subscriber interface {
	Notice(n event.Notice)
	SafetyCard(c event.SafetyCard)
	SpeakSafety(sp SpokenSafety)
	ReplyDelta(d event.ReplyDelta)
	ReplyDone(d event.ReplyDone)
	ReplyInterrupted(r event.ReplyInterrupted)
}

// Dispatch calls sub's method for ev when ev is a notice, a safety card or
// a reply event; other events call nothing. A safety card whose resources
// are to be spoken calls SafetyCard, then SpeakSafety.
func (ev Event) Dispatch(sub Subscriber) {
	switch p := ev.payload.(type) {
	case event.Notice:
		sub.Notice(p)
	case event.SafetyCard:
		sub.SafetyCard(p)
		if ev.spoken != nil {
			sub.SpeakSafety(*ev.spoken)
		}
	case event.ReplyDelta:
		sub.ReplyDelta(p)
	case event.ReplyDone:
		sub.ReplyDone(p)
	case event.ReplyInterrupted:
		sub.ReplyInterrupted(p)
	}
}

// Stream is one transport's view of a session: it yields the session's
// encoded events in seq order from where the transport attached. Only one
// Stream is attached at a time; Next may be called from one goroutine.
type Stream struct {
	s  *Session
	ev *events
	// next is the seq Next returns next; guarded by ev.mu.
	next int64
	// pre is yielded before the log (the resume acknowledgement).
	pre []byte
	// err and done record why the stream ended; guarded by ev.mu.
	err  error
	done chan struct{}
}

// Session returns the stream's session.
func (st *Stream) Session() *Session { return st.s }

// Done is closed when the stream ends: detached, replaced, too slow or the
// session closed. Err says which.
func (st *Stream) Done() <-chan struct{} { return st.done }

// Err returns why the stream ended, or nil while it is live.
func (st *Stream) Err() error {
	st.ev.mu.Lock()
	defer st.ev.mu.Unlock()
	return st.err
}

// Next returns the next encoded event (one JSON object), waiting for it.
// The slice must not be modified.
func (st *Stream) Next(ctx context.Context) ([]byte, error) {
	ev, err := st.NextEvent(ctx)
	return ev.Data, err
}

// NextEvent returns the next event, waiting for it: its encoding for the
// transport and, through Event.Dispatch, its typed payload for a
// Subscriber.
func (st *Stream) NextEvent(ctx context.Context) (Event, error) {
	e := st.ev
	for {
		e.mu.Lock()
		if st.err != nil {
			err := st.err
			e.mu.Unlock()
			return Event{}, err
		}
		if b := st.pre; b != nil {
			st.pre = nil
			e.mu.Unlock()
			return Event{Type: event.TypeSessionCreated, Data: b}, nil
		}
		if le, ok := e.log.get(st.next); ok {
			ev := Event{Seq: st.next, Type: le.typ, Data: le.data, payload: le.payload, spoken: le.spoken}
			st.next++
			e.mu.Unlock()
			return ev, nil
		}
		wake := e.wake
		e.mu.Unlock()
		select {
		case <-wake:
		case <-st.done:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Detach ends the stream; the session waits Config.ResumeWindow for a
// reconnect. Safe to call more than once.
func (st *Stream) Detach() {
	e := st.ev
	e.mu.Lock()
	st.failLocked(errDetached)
	detached := e.stream == st
	if detached {
		e.stream = nil
	}
	e.mu.Unlock()
	if s := st.s; detached && s.onDetach != nil {
		s.onDetach(s)
	}
}

var errDetached = errors.New("session: stream detached")

// failLocked ends the stream with err; ev.mu must be held.
func (st *Stream) failLocked(err error) {
	if st.err != nil {
		return
	}
	st.err = err
	close(st.done)
}
