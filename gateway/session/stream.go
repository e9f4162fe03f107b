package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/veraneural/vera-gateway/gateway/clock"
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

// events is the session's event stream: it numbers, encodes and logs
// every server event, in a bounded replay log, and feeds the attached
// Stream, which can resume from any seq the log still holds. Producers
// never block on a reader.
//
// Its lock is a leaf: the session's parts emit while holding their own
// lock (so an event and the state it reports change together), and
// events takes no other lock while holding mu.
type events struct {
	id    string
	clock clock.Clock
	log_  *slog.Logger

	// mu guards the fields below and the next, pre and err of every Stream.
	mu     sync.Mutex
	closed bool // Close ran: nothing more is emitted or attached
	seq    int64
	log    replayLog
	wake   chan struct{} // closed and replaced on every emit
	stream *Stream       // the attached transport, if any
}

func newEvents(id string, clk clock.Clock, log *slog.Logger, cfg Config) *events {
	return &events{id: id, clock: clk, log_: log, wake: make(chan struct{}),
		log: replayLog{maxEvents: cfg.ReplayEvents, maxBytes: cfg.ReplayBytes}}
}

// emit numbers, encodes and logs one event and wakes the stream; a
// stream that has not read an evicted event fails with ErrSlowConsumer.
func (e *events) emit(t event.Type, payload any) {
	e.emitSeq(t, func(int64) any { return payload })
}

// emitSeq emits the payload f makes for the event's own seq (a
// session.created naming where its replay starts). f runs under mu and
// must take no lock.
func (e *events) emitSeq(t event.Type, f func(seq int64) any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	payload := f(e.seq + 1)
	b, err := event.Encode(event.Envelope{Type: t, Seq: e.seq + 1, SessionID: e.id, At: e.clock.Now().UnixMilli()}, payload)
	if err != nil {
		// Payloads are our own types; this is a bug, not client input.
		e.log_.Error("session: encode event", "type", string(t), "err", err)
		return
	}
	e.seq++
	le := logEntry{typ: t, data: b}
	if subscribed(t) {
		le.payload = payload
	}
	e.log.append(e.seq, le)
	if st := e.stream; st != nil && st.next < e.log.firstSeq {
		st.failLocked(ErrSlowConsumer)
		e.stream = nil
		e.log_.Warn("session: slow consumer", "seq", e.seq)
	}
	close(e.wake)
	e.wake = make(chan struct{})
}

// attach connects a stream for s after afterSeq; a previously attached
// one ends with ErrReplaced. ack, when not nil, is the resume
// acknowledgement the stream yields first (seq 0, outside the log).
func (e *events) attach(s *Session, afterSeq int64, ack any) (*Stream, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return nil, ErrClosed
	case afterSeq > e.seq:
		return nil, fmt.Errorf("%w: last_seq %d, newest %d", ErrResumeAhead, afterSeq, e.seq)
	case afterSeq+1 < e.log.firstSeq:
		return nil, fmt.Errorf("%w: last_seq %d, oldest kept %d", ErrResumeTooOld, afterSeq, e.log.firstSeq)
	}
	if old := e.stream; old != nil {
		old.failLocked(ErrReplaced)
	}
	st := &Stream{s: s, ev: e, next: afterSeq + 1, done: make(chan struct{})}
	e.stream = st
	if ack != nil {
		b, err := event.Encode(event.Envelope{Type: event.TypeSessionCreated, SessionID: e.id, At: e.clock.Now().UnixMilli()}, ack)
		if err == nil {
			st.pre = b
		}
	}
	return st, nil
}

// close stops emitting and ends the attached stream with ErrClosed; it
// reports whether this call closed the events.
func (e *events) close() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.closed = true
	if e.stream != nil {
		e.stream.failLocked(ErrClosed)
		e.stream = nil
	}
	return true
}

func (e *events) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

func (e *events) lastSeq() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seq
}

// attached reports whether a stream is attached.
func (e *events) attached() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stream != nil
}

// replayLog is the bounded, seq-ordered log of encoded events; guarded by
// events.mu.
type replayLog struct {
	maxEvents, maxBytes int
	evs                 []logEntry
	firstSeq            int64 // seq of evs[0]
	bytes               int
}

// logEntry is one logged event: its encoding and, for the events a
// Subscriber acts on, the payload it was encoded from.
type logEntry struct {
	typ     event.Type
	data    []byte
	payload any
}

func (l *replayLog) append(seq int64, e logEntry) {
	if len(l.evs) == 0 {
		l.firstSeq = seq
	}
	l.evs = append(l.evs, e)
	l.bytes += len(e.data)
	for len(l.evs) > 1 && (len(l.evs) > l.maxEvents || l.bytes > l.maxBytes) {
		l.bytes -= len(l.evs[0].data)
		l.evs[0] = logEntry{}
		l.evs = l.evs[1:]
		l.firstSeq++
	}
	// Compact once the dead prefix dominates the backing array.
	if cap(l.evs) > 4*l.maxEvents && len(l.evs) < cap(l.evs)/4 {
		l.evs = append([]logEntry(nil), l.evs...)
	}
}

// get returns the event with seq, if it is still held.
func (l *replayLog) get(seq int64) (logEntry, bool) {
	i := seq - l.firstSeq
	if len(l.evs) == 0 || i < 0 || i >= int64(len(l.evs)) {
		return logEntry{}, false
	}
	return l.evs[i], true
}

// subscribed reports whether a Subscriber acts on events of type t (the
// log keeps their payloads).
func subscribed(t event.Type) bool {
	switch t {
	case event.TypeNotice, event.TypeSafetyCard, event.TypeReplyDelta, event.TypeReplyDone, event.TypeReplyInterrupted:
		return true
	}
	return false
}

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
}

// Subscriber acts on a session's output as the transport's stream yields
// it, in wire order, from the typed values the events were encoded from
// (no JSON decoding): a voice session speaks the AI disclosure, the safety
// resources of a card and the reply text. Every value is read-only: it
// shares memory with the session's own state.
type Subscriber interface {
	Notice(n event.Notice)
	SafetyCard(c event.SafetyCard)
	ReplyDelta(d event.ReplyDelta)
	ReplyDone(d event.ReplyDone)
	ReplyInterrupted(r event.ReplyInterrupted)
}

// Dispatch calls sub's method for ev when ev is a notice, a safety card or
// a reply event; other events call nothing.
func (ev Event) Dispatch(sub Subscriber) {
	switch p := ev.payload.(type) {
	case event.Notice:
		sub.Notice(p)
	case event.SafetyCard:
		sub.SafetyCard(p)
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
			ev := Event{Seq: st.next, Type: le.typ, Data: le.data, payload: le.payload}
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
