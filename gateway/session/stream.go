package session

import (
	"context"
	"errors"
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

// replayLog is the bounded, seq-ordered log of encoded events.
// It is guarded by its Session's mu.
type replayLog struct {
	maxEvents, maxBytes int
	evs                 [][]byte
	firstSeq            int64 // seq of evs[0]
	bytes               int
}

func (l *replayLog) append(seq int64, b []byte) {
	if len(l.evs) == 0 {
		l.firstSeq = seq
	}
	l.evs = append(l.evs, b)
	l.bytes += len(b)
	for len(l.evs) > 1 && (len(l.evs) > l.maxEvents || l.bytes > l.maxBytes) {
		l.bytes -= len(l.evs[0])
		l.evs[0] = nil
		l.evs = l.evs[1:]
		l.firstSeq++
	}
	// Compact once the dead prefix dominates the backing array.
	if cap(l.evs) > 4*l.maxEvents && len(l.evs) < cap(l.evs)/4 {
		l.evs = append([][]byte(nil), l.evs...)
	}
}

// get returns the event with seq, if it is still held.
func (l *replayLog) get(seq int64) ([]byte, bool) {
	i := seq - l.firstSeq
	if len(l.evs) == 0 || i < 0 || i >= int64(len(l.evs)) {
		return nil, false
	}
	return l.evs[i], true
}

// Stream is one transport's view of a session: it yields the session's
// encoded events in seq order from where the transport attached. Only one
// Stream is attached at a time; Next may be called from one goroutine.
type Stream struct {
	s *Session
	// next is the seq Next returns next; guarded by s.mu.
	next int64
	// pre is yielded before the log (the resume acknowledgement).
	pre []byte
	// err and done record why the stream ended; guarded by s.mu.
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
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	return st.err
}

// Next returns the next encoded event (one JSON object), waiting for it.
// The slice must not be modified.
func (st *Stream) Next(ctx context.Context) ([]byte, error) {
	s := st.s
	for {
		s.mu.Lock()
		if st.err != nil {
			err := st.err
			s.mu.Unlock()
			return nil, err
		}
		if b := st.pre; b != nil {
			st.pre = nil
			s.mu.Unlock()
			return b, nil
		}
		if b, ok := s.log.get(st.next); ok {
			st.next++
			s.mu.Unlock()
			return b, nil
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-st.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Detach ends the stream; the session waits Config.ResumeWindow for a
// reconnect. Safe to call more than once.
func (st *Stream) Detach() {
	s := st.s
	s.mu.Lock()
	st.failLocked(errDetached)
	detached := s.stream == st
	if detached {
		s.stream = nil
	}
	s.mu.Unlock()
	if detached && s.onDetach != nil {
		s.onDetach(s)
	}
}

var errDetached = errors.New("session: stream detached")

// failLocked ends the stream with err; s.mu must be held.
func (st *Stream) failLocked(err error) {
	if st.err != nil {
		return
	}
	st.err = err
	close(st.done)
}
