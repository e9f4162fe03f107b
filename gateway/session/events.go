package session

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/veraneural/vera-gateway/gateway/clock"
	"github.com/veraneural/vera-gateway/gateway/event"
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

// emitSpoken emits a safety card with what a voice transport speaks of it
// (nil: nothing), kept beside it in the replay log, never on the wire.
func (e *events) emitSpoken(t event.Type, card event.SafetyCard, sp *SpokenSafety) {
	e.emitEntry(t, func(int64) any { return card }, sp)
}

// emitSeq emits the payload f makes for the event's own seq (a
// session.created naming where its replay starts). f runs under mu and
// must take no lock.
func (e *events) emitSeq(t event.Type, f func(seq int64) any) { e.emitEntry(t, f, nil) }

func (e *events) emitEntry(t event.Type, f func(seq int64) any, sp *SpokenSafety) {
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
	le := logEntry{typ: t, data: b, spoken: sp}
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
// Subscriber acts on, the payload it was encoded from and, for a safety
// card, what a voice transport speaks of it.
type logEntry struct {
	typ     event.Type
	data    []byte
	payload any
	spoken  *SpokenSafety
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
